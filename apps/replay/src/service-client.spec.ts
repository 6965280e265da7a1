/**
 * The replay's transport against a service that rate-limits it (429 `rate_limited`): it waits out
 * Retry-After and retries, and says so once, naming the setting that lifts the limit (a service
 * started with its default RATE_LIMIT_PER_MINUTE throttled a full replay into what looked like a stall).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { replayTransport } from './service-client';

describe('the replay transport, rate-limited by the service', () => {
  let server: http.Server;
  let base: string;
  let answered = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      answered += 1;
      if (answered % 3 !== 0) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0.05' });
        res.end(JSON.stringify({ code: 'rate_limited', message: 'too many requests' }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('given two 429 rate_limited before each answer, when two requests are sent, then both answer 200 and one line names RATE_LIMIT_PER_MINUTE', async () => {
    const lines: string[] = [];
    const send = replayTransport(base, (line) => lines.push(line));
    for (let i = 0; i < 2; i++) expect((await send(new Request(`${base}/v1/recall?q=x`))).status).toBe(200);
    expect(answered).toBe(6);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^replay: the service at http:\/\/127\.0\.0\.1:\d+ rate-limits this client \(429 rate_limited, Retry-After 0\.05 s\): .*RATE_LIMIT_PER_MINUTE=0/,
    );
  });
});
