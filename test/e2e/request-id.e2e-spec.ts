/**
 * Request correlation in the real service: every answer carries `X-Request-Id`, the client's when it
 * sent a usable one (short printable ASCII), error answers included: a 401 before the body, a 400,
 * a 404 of an unknown route (ncobs finding 3: the header was neither echoed nor logged).
 */
import { startService, type Harness } from '../support/service-harness';

describe('X-Request-Id', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startService({ env: { API_KEYS: 'request-id-key-1:acme' } });
  });
  afterAll(async () => {
    await harness.stop();
  });

  it("echoes a client's usable id on every answer, error answers included, and makes one up otherwise", async () => {
    const key = { authorization: 'Bearer request-id-key-1' };
    const answers = [
      await harness.http().get('/health').set('x-request-id', 'probe-1'),
      await harness.http().post('/v1/sessions/s1/events').set('x-request-id', 'no-key-2').send({ events: [] }),
      await harness.http().post('/v1/sessions/s1/events').set(key).set('x-request-id', 'bad-body-3').send({ events: 'nope' }),
      await harness.http().get('/v1/nowhere').set(key).set('x-request-id', 'unknown-route-4'),
      await harness
        .http()
        .post('/v1/sessions/s1/events')
        .set(key)
        .set('x-request-id', 'append-5')
        .send({ events: [{ id: 'e1', type: 'user', text: 'hi' }] }),
    ];
    expect(answers.map((a) => [a.status, a.headers['x-request-id']])).toEqual([
      [200, 'probe-1'],
      [401, 'no-key-2'],
      [400, 'bad-body-3'],
      [404, 'unknown-route-4'],
      [201, 'append-5'],
    ]);
    const made = await harness.http().get('/health').set('x-request-id', 'with spaces');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await harness.http().get('/health')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
