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

/**
 * Newcomer ncbounds: a write's X-Request-Id the service cannot use (129+ characters, a space) was
 * replaced by a made-up UUID without a word. A DELETE under it erased; resent after the session was
 * written again, its id was replaced again, so the resend was not recognised and erased the new
 * life. Now every write refuses such an id up front (400 `validation_failed`, `parameter`
 * `X-Request-Id`), writing nothing; a 128-character id is kept and its resend recognised; reads
 * keep the replacement.
 */
describe('X-Request-Id the service cannot use, on writes and reads', () => {
  const KEY = 'request-id-key-2';
  let harness: Harness;
  beforeAll(async () => {
    harness = await startService({ env: { API_KEYS: `${KEY}:acme` } });
  });
  afterAll(async () => {
    await harness.stop();
  });

  const auth = { authorization: `Bearer ${KEY}` };
  const longest = `del-${'7'.repeat(124)}`;
  const tooLong = `${longest}8`;
  const post = (sessionId: string, id: string) =>
    harness
      .http()
      .post(`/v1/sessions/${sessionId}/events`)
      .set(auth)
      .send({ events: [{ id, type: 'user', text: `text of ${id}` }] })
      .expect(201);
  const del = (sessionId: string, requestId: string) => harness.http().delete(`/v1/sessions/${sessionId}`).set(auth).set('X-Request-Id', requestId);
  const windowIds = async (sessionId: string, minPosition: string) =>
    ((await harness.http().get(`/v1/sessions/${sessionId}/window`).set(auth).query({ minPosition }).expect(200)).body.events as Array<{ id: string }>).map(
      (e) => e.id,
    );
  const expectRefused = (answer: { status: number; body: { code?: string; parameter?: string; message?: string } }, problem: string) => {
    expect({ status: answer.status, code: answer.body.code, parameter: answer.body.parameter }).toEqual({
      status: 400,
      code: 'validation_failed',
      parameter: 'X-Request-Id',
    });
    expect(answer.body.message).toContain(`X-Request-Id: the id ${problem}`);
    expect(answer.body.message).toContain('1 to 128 printable ASCII characters');
  };

  it('refuses a DELETE with a 129-character id up front, erasing nothing; the same DELETE and its resend under 128 characters keep the new life', async () => {
    expect(tooLong).toHaveLength(129);
    const n0 = await post('d1', 'u1');
    // Refused, first and resent alike: the session is not erased (it was, under a made-up id, and the resend erased the next life).
    for (let i = 0; i < 2; i++) expectRefused(await del('d1', tooLong), 'is 129 characters long, over the 128 allowed: shorten it');
    expect(await windowIds('d1', n0.body.position)).toEqual(['u1']);
    // The documented scenario at 128 characters: erased once, the resend after the session was written again answers that erasure.
    const first = await del('d1', longest).expect(200);
    expect(first.headers['x-request-id']).toBe(longest);
    const n1 = await post('d1', 'n1');
    const again = await del('d1', longest).expect(200);
    expect(again.body).toEqual(first.body);
    expect(await windowIds('d1', n1.body.position)).toEqual(['n1']);
  });

  it('refuses every write with an unusable id (appends, compactions, the policy), writing nothing; reads replace it by a UUID', async () => {
    const n0 = await post('w1', 'u1');
    const writes = [
      harness
        .http()
        .post('/v1/sessions/w1/events')
        .send({ events: [{ id: 'u2', type: 'user', text: 'two' }] }),
      harness
        .http()
        .post('/v1/sessions/w1/messages')
        .send({ messages: [{ role: 'user', content: 'three' }] }),
      harness
        .http()
        .post('/v1/sessions/w1/compactions')
        .send({ strategy: { type: 'sliding-window', maxEvents: 1 } }),
      harness
        .http()
        .put('/v1/sessions/w1/policy')
        .send({ strategy: { type: 'sliding-window', maxEvents: 1 } }),
      harness.http().delete('/v1/sessions/w1'),
    ];
    for (const write of writes) expectRefused(await write.set(auth).set('X-Request-Id', 'approved by CISO'), 'holds a space at character 9');
    const log = await harness.http().get('/v1/sessions/w1/events').set(auth).query({ minPosition: n0.body.position }).expect(200);
    // The whole log: the one append, no second event, message, compaction decision, policy or erasure.
    expect(log.body.events.map((e: { type: string; eventId?: string }) => [e.type, e.eventId])).toEqual([['ConversationEventAppended', 'u1']]);
    const read = await harness.http().get('/v1/sessions/w1/window').set(auth).set('X-Request-Id', tooLong).expect(200);
    expect(read.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
