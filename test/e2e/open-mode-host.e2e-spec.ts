/**
 * Open development mode (no API_KEYS) against DNS rebinding: a request whose Host is not this
 * machine's (localhost, *.localhost, an IP address) nor listed in ALLOWED_HOSTS is answered 403
 * host_not_allowed before it reads or writes anything; the operations routes answer any Host (probes);
 * with API_KEYS no Host is refused (the key is the protection).
 */
import { useService } from '../support/service-harness';

const FOREIGN = 'rebind.attacker.example:3000';

describe('open development mode answers only its own Host names', () => {
  const harness = useService({ env: { ALLOWED_HOSTS: 'sessions.internal,.dev.example.com' } });
  const http = () => harness.http();

  beforeAll(async () => {
    await http()
      .post('/v1/sessions/dev/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'dev secret' }] })
      .expect(201);
  });

  it('refuses a foreign Host 403 host_not_allowed on reads, the page and erasure, saying how to allow it; nothing is erased', async () => {
    for (const [method, path] of [
      ['get', '/v1/sessions/dev/window'],
      ['get', '/v1/sessions'],
      ['delete', '/v1/sessions/dev'],
      ['get', '/ui/'],
      ['get', '/docs/openapi.json'],
    ] as const) {
      const res = await http()[method](path).set('Host', FOREIGN).set('Origin', `http://${FOREIGN}`);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 403, code: 'host_not_allowed' });
      expect(res.body.message).toMatch(/^Host "rebind\.attacker\.example:3000" is not answered in open development mode \(no API_KEYS\).*ALLOWED_HOSTS/);
      expect(JSON.stringify(res.body)).not.toContain('dev secret');
    }
    const still = await http().get('/v1/sessions/dev/window').expect(200);
    expect(JSON.stringify(still.body)).toContain('dev secret');
  });

  it('answers localhost, *.localhost, IP addresses and the ALLOWED_HOSTS names on any port', async () => {
    for (const host of ['localhost:3000', 'app.localhost', '127.0.0.1:9', '[::1]:3000', '10.0.0.7:3000', 'Sessions.Internal:3000', 'api.dev.example.com']) {
      const res = await http().get('/v1/sessions/dev/window').set('Host', host);
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
    }
  });

  it('answers the operations routes whatever the Host (compose service names, pod IPs)', async () => {
    for (const path of ['/health', '/health/ready', '/metrics']) {
      const res = await http().get(path).set('Host', 'session-service:3000');
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });
});

describe('with API_KEYS the Host is not checked (the key protects)', () => {
  const harness = useService({ env: { API_KEYS: 'host-test-key-1:tenantA' } });

  it('answers a foreign Host with the key, 401 without', async () => {
    await harness.http().get('/v1/sessions').set('Host', FOREIGN).set('Authorization', 'Bearer host-test-key-1').expect(200);
    const res = await harness.http().get('/v1/sessions').set('Host', FOREIGN).expect(401);
    expect(res.body.code).toBe('unauthorized');
  });
});
