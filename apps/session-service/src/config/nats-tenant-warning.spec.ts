import { loadServiceConfig } from './service-config';
import { natsTenantWarningLines } from './nats-tenant-warning';

const KEYS = 'alice-key-2f9c:tenantA';

describe('the start-up warning of NATS without credentials next to API_KEYS', () => {
  it('warns once when API_KEYS and NATS_URL are set and the connection carries no credentials, saying what to do', () => {
    const lines = natsTenantWarningLines(loadServiceConfig({ API_KEYS: KEYS, NATS_URL: 'nats://127.0.0.1:4222', NATS_PREFIX: 'acme' }, false));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^NATS commands are not authenticated by API_KEYS: a command's tenant is its subject \(acme\.commands\.<tenant>\.>\)/);
    expect(lines[0]).toContain('deploy/nats/nats-server.conf');
  });

  it.each([
    ['no API_KEYS (open mode: one tenant)', { NATS_URL: 'nats://127.0.0.1:4222' }],
    ['no NATS_URL', { API_KEYS: KEYS }],
    ['a user in NATS_URL', { API_KEYS: KEYS, NATS_URL: 'nats://svc:pw@127.0.0.1:4222' }],
    ['a token in NATS_URL', { API_KEYS: KEYS, NATS_URL: 'nats://s3cr3t-token@127.0.0.1:4222' }],
    ['NATS_USER and NATS_PASSWORD', { API_KEYS: KEYS, NATS_URL: 'nats://127.0.0.1:4222', NATS_USER: 'svc', NATS_PASSWORD: 'pw' }],
  ])('says nothing with %s', (_name, env) => {
    expect(natsTenantWarningLines(loadServiceConfig(env, false))).toEqual([]);
  });
});
