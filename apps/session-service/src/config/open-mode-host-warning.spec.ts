import { isLoopbackHost, openModeHostWarningLines } from './open-mode-host-warning';
import { loadServiceConfig } from './service-config';

/** The warning lines of the configuration `env` loads. */
const lines = (env: NodeJS.ProcessEnv) => openModeHostWarningLines(loadServiceConfig(env, false));

describe('the start-up warning of open mode listening beyond the loopback without ALLOWED_HOSTS', () => {
  it('is one line when API_KEYS and ALLOWED_HOSTS are unset and HOST is not a loopback address, naming what is refused and what to set', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.7', 'session-box']) {
      const [line, ...more] = lines({ HOST: host });
      expect(more).toEqual([]);
      expect(line).toMatch(
        new RegExp(`^open development mode \\(no API_KEYS\\) listening on ${host.replace(/\./g, '\\.')}, not only the loopback, without ALLOWED_HOSTS: `),
      );
      expect(line).toContain('is refused 403 host_not_allowed');
      expect(line).toContain(
        'set ALLOWED_HOSTS to the names clients use (comma-separated, e.g. ALLOWED_HOSTS=session-service,.svc.cluster.local), or set API_KEYS',
      );
    }
  });

  it('is none on the loopback (the default HOST), with ALLOWED_HOSTS, or with API_KEYS', () => {
    for (const host of ['127.0.0.1', '127.0.1.1', '::1', '[::1]', 'localhost', 'app.localhost'])
      expect({ host, lines: lines({ HOST: host }) }).toEqual({ host, lines: [] });
    expect(lines({})).toEqual([]);
    expect(lines({ HOST: '0.0.0.0', ALLOWED_HOSTS: 'session-service' })).toEqual([]);
    expect(lines({ HOST: '0.0.0.0', API_KEYS: 'host-warn-key-1:tenantA' })).toEqual([]);
  });

  it('tells loopback addresses from others', () => {
    for (const host of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1', 'LOCALHOST.'])
      expect({ host, loopback: isLoopbackHost(host) }).toEqual({ host, loopback: true });
    for (const host of ['0.0.0.0', '::', '192.168.1.2', 'fe80::1', '::ffff:10.0.0.1', 'localhost.example', 'box'])
      expect({ host, loopback: isLoopbackHost(host) }).toEqual({ host, loopback: false });
  });
});
