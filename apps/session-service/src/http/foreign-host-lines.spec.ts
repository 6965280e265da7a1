import { ForeignHostLines, NAMES_TRACKED } from './foreign-host-lines';

/** A ForeignHostLines on jest's fake clock (move it with `jest.advanceTimersByTime`), and the lines it wrote. */
function linesAt(allowedHosts: string[] = []) {
  jest.useFakeTimers({ now: 1_000_000 });
  const written: string[] = [];
  const lines = new ForeignHostLines({ warn: (line: string) => written.push(line) }, allowedHosts);
  return { lines, written };
}

describe('the warn lines of requests refused host_not_allowed', () => {
  afterEach(() => jest.useRealTimers());

  it('name the Host, ALLOWED_HOSTS and exactly what to set', () => {
    const { lines, written } = linesAt();
    lines.refused('GET', 'Session-Service:3000');
    expect(written).toEqual([
      'refused GET with Host "Session-Service:3000": 403 host_not_allowed (open development mode, no API_KEYS; ALLOWED_HOSTS is not set): ' +
        'to answer it, start the service with ALLOWED_HOSTS=session-service (comma-separated with the other names clients use) or set API_KEYS; ' +
        "this Host's refusals in the next 60 s are counted, not logged",
    ]);
    const listed = linesAt(['sessions.internal', '.dev.example.com']);
    listed.lines.refused('POST', 'session-service.default.svc.cluster.local');
    expect(listed.written[0]).toContain(
      '(open development mode, no API_KEYS; ALLOWED_HOSTS=sessions.internal,.dev.example.com does not list it): to answer it, start the service with ALLOWED_HOSTS=session-service.default.svc.cluster.local ',
    );
  });

  it('write one line per Host name per minute (any port), the next one telling the refusals between', () => {
    const { lines, written } = linesAt();
    lines.refused('GET', 'session-service');
    for (let i = 0; i < 40; i++) lines.refused('GET', `session-service:${3000 + (i % 2)}`);
    lines.refused('GET', 'other-name');
    expect(written.map((line) => line.split(':')[0])).toEqual(['refused GET with Host "session-service"', 'refused GET with Host "other-name"']);
    jest.advanceTimersByTime(60_000);
    lines.refused('DELETE', 'session-service:3000');
    expect(written).toHaveLength(3);
    expect(written[2]).toMatch(
      /^refused DELETE with Host "session-service:3000": 403 host_not_allowed \(40 more with this Host since its last line, not logged one by one\) /,
    );
  });

  it('are not crowded out by other refusals (their own bound), and bound distinct names to 10 per minute, telling the rest', () => {
    const { lines, written } = linesAt();
    for (let i = 0; i < 25; i++) lines.refused('GET', `rebind-${i}.attacker.example`);
    expect(written).toHaveLength(10);
    jest.advanceTimersByTime(60_000);
    expect(written[10]).toBe(
      '15 more requests refused 403 host_not_allowed (Host names not logged yet) in the last 60 s, not logged one by one: 15 × 403 host_not_allowed',
    );
    lines.close();
  });

  it('say what to fix for a Host that is no host name, and keep writing as names come and go past NAMES_TRACKED', () => {
    const { lines, written } = linesAt();
    lines.refused('GET', 'a:b:c');
    expect(written[0]).toContain(
      '(open development mode, no API_KEYS; ALLOWED_HOSTS is not set): it is not a host name with an optional port (name[:port] or [IPv6][:port]): the client must send the name it called;',
    );
    for (let i = 0; i < NAMES_TRACKED + 50; i++) {
      jest.advanceTimersByTime(60_000); // each name in its own minute: every one written, the expired ones forgotten as the map fills
      lines.refused('GET', `n${i}.example`);
    }
    expect(written).toHaveLength(NAMES_TRACKED + 51);
  });
});
