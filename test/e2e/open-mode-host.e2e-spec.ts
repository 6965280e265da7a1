/**
 * Open development mode (no API_KEYS) against DNS rebinding: a request whose Host is not this
 * machine's (localhost, *.localhost, an IP address) nor listed in ALLOWED_HOSTS is answered 403
 * host_not_allowed before it reads or writes anything; the operations routes answer any Host (probes);
 * with API_KEYS no Host is refused (the key is the protection).
 */
import { useService } from '../support/service-harness';
import { captureLogLines } from '../support/captured-log-lines';
import { sendRaw } from '../support/raw-http';
import type { AddressInfo } from 'node:net';

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
      expect(res.body.message).toBe(
        'Host "rebind.attacker.example:3000" is not answered in open development mode (no API_KEYS), against DNS rebinding: ' +
          'only localhost, *.localhost, IP addresses and the names listed in ALLOWED_HOSTS are; to answer it, start the service with ' +
          'ALLOWED_HOSTS=rebind.attacker.example (comma-separated with the other names clients use), or set API_KEYS (then no Host is refused: the key protects)',
      );
      expect(JSON.stringify(res.body)).not.toContain('dev secret');
    }
    const still = await http().get('/v1/sessions/dev/window').expect(200);
    expect(JSON.stringify(still.body)).toContain('dev secret');
  });

  it('checks the authority of an absolute-form target, which replaces Host (RFC 9112 §3.2.2)', async () => {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const ask = (target: string) => sendRaw(port, `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    const refused = await ask('http://rebind.attacker.example/v1/sessions/dev/window');
    expect(refused).toMatch(/^HTTP\/1\.1 403 /);
    expect(refused).toContain('host_not_allowed');
    expect(refused).not.toContain('dev secret');
    expect(await ask('http://localhost:3000/v1/sessions/dev/window')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await ask('http://sessions.internal/v1/sessions/dev/window')).toMatch(/^HTTP\/1\.1 200 /);
  });

  // Newcomer confighints F3: a foreign Host with a path that is not valid percent-encoding was answered 400 invalid_path
  // (Fastify's router refuses such a path before any hook): the Host check comes first, whatever the path or target.
  it('refuses a foreign Host 403 before anything looks at the path or target: a path not valid percent-encoding, a "#" in the target', async () => {
    for (const path of ['/v1/sessions/%zz/window', '/v1/sessions/%FF', '/v1/sessions/%ED%A0%80/window', '/health%zz']) {
      const refused = await http().get(path).set('Host', FOREIGN);
      expect({ path, status: refused.status, code: refused.body.code }).toEqual({ path, status: 403, code: 'host_not_allowed' });
      expect(refused.headers['x-request-id']).toBeDefined();
      // an allowed Host: the path's own answer, as before
      const answered = await http().get(path).set('Host', 'localhost:3000');
      expect({ path, status: answered.status, code: answered.body.code }).toEqual({ path, status: 400, code: 'invalid_path' });
    }
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const ask = (host: string) => sendRaw(port, `GET /v1/sessions/dev#x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    const fragment = await ask(FOREIGN);
    expect(fragment).toMatch(/^HTTP\/1\.1 403 /);
    expect(fragment).toContain('host_not_allowed');
    expect(await ask('localhost')).toMatch(/^HTTP\/1\.1 400 [^]*malformed_request/);
  });

  it('logs a refusal once per Host name per minute, naming the Host, ALLOWED_HOSTS and what to set, whatever the port', async () => {
    const lines = captureLogLines(['warn']);
    try {
      for (const host of [
        'session-service.default.svc.cluster.local',
        'session-service.default.svc.cluster.local:3000',
        'session-service.default.svc.cluster.local:3000',
      ])
        await http().get('/v1/sessions').set('Host', host).expect(403);
      expect(lines.filter((line) => line.includes('host_not_allowed'))).toEqual([
        'refused GET with Host "session-service.default.svc.cluster.local": 403 host_not_allowed (open development mode, no API_KEYS; ' +
          'ALLOWED_HOSTS=sessions.internal,.dev.example.com does not list it): to answer it, start the service with ' +
          'ALLOWED_HOSTS=session-service.default.svc.cluster.local (comma-separated with the other names clients use) or set API_KEYS; ' +
          "this Host's refusals in the next 60 s are counted, not logged",
      ]);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('answers localhost, *.localhost, IP addresses and the ALLOWED_HOSTS names on any port, an empty one included (RFC 3986)', async () => {
    for (const host of [
      'localhost:3000',
      'app.localhost',
      '127.0.0.1:9',
      '[::1]:3000',
      '10.0.0.7:3000',
      'Sessions.Internal:3000',
      'api.dev.example.com',
      'sessions.internal:',
      'localhost:',
    ]) {
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
