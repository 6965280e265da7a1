/**
 * Who ordered a compaction or an erasure (newcomer ncretention A4): a commanded compaction's
 * decision and an erasure record keep `requestedBy` — the API key's label (its position in
 * API_KEYS, never the key), the request id (X-Request-Id), `via: 'http'` — so two keys of one
 * tenant (ops vs bot) can be told apart in the audit. Automatic passes have none (origin auto,
 * their trigger), and decisions recorded before it was read as null.
 */
import { COMPACTION_COMPLETED, SESSION_ERASED, type CompactionCompletedData, type SessionErasedData } from '@lib/session';
import { useService } from '../support/service-harness';

const OPS = 'ops-key-11111111';
const BOT = 'bot-key-22222222';

describe('requestedBy in decisions and erasure records', () => {
  const harness = useService({ env: { API_KEYS: `${OPS}:tenantA,${BOT}:tenantA` } });
  const events = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `u${i}`, type: 'user', text: `question ${i}` }));
  const storedOf = async (type: string) => (await harness.service.store.readAll({ maxCount: 10_000 })).filter((e) => e.type === type);

  it('a commanded compaction records the key label and request id, shown in its history item; the key itself is never stored', async () => {
    await harness
      .http()
      .post('/v1/sessions/who1/events')
      .set('Authorization', `Bearer ${BOT}`)
      .send({ events: events(8) })
      .expect(201);
    const { body } = await harness
      .http()
      .post('/v1/sessions/who1/compactions')
      .set('Authorization', `Bearer ${OPS}`)
      .set('X-Request-Id', 'audit-req-777')
      .send({ strategy: { type: 'sliding-window', maxEvents: 4 } })
      .expect(200);
    const requestedBy = { keyLabel: 'API_KEYS#1', requestId: 'audit-req-777', requestIdFrom: 'client', via: 'http' };
    const item = await harness.http().get(`/v1/sessions/who1/compactions/${body.compactionId}`).set('Authorization', `Bearer ${BOT}`).expect(200);
    expect(item.body).toMatchObject({ origin: 'command', requestedBy });
    const list = await harness.http().get('/v1/sessions/who1/compactions').set('X-Api-Key', BOT).expect(200);
    expect(list.body.compactions.map((c: { requestedBy: unknown }) => c.requestedBy)).toEqual([requestedBy]);
    const [stored] = await storedOf(COMPACTION_COMPLETED);
    expect((stored.data as CompactionCompletedData).requestedBy).toEqual(requestedBy);
    expect(JSON.stringify((await harness.service.store.readAll({ maxCount: 10_000 })).map((e) => [e.data, e.metadata]))).not.toMatch(/ops-key|bot-key/);
  });

  it('an automatic pass records none (origin auto, its trigger), and reads as null', async () => {
    await harness
      .http()
      .put('/v1/sessions/auto1/policy')
      .set('Authorization', `Bearer ${OPS}`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 }, trigger: { type: 'turn-count', maxTurns: 2 } })
      .expect(200);
    await harness
      .http()
      .post('/v1/sessions/auto1/events')
      .set('Authorization', `Bearer ${BOT}`)
      .send({ events: events(6) })
      .expect(201);
    let list: { body: { compactions: Array<{ origin: string; requestedBy: unknown; trigger: unknown }> } } = { body: { compactions: [] } };
    for (let tries = 0; list.body.compactions.length === 0 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      list = await harness.http().get('/v1/sessions/auto1/compactions').set('Authorization', `Bearer ${OPS}`).expect(200);
    }
    expect(list.body.compactions[0]).toMatchObject({ origin: 'auto', requestedBy: null, trigger: { type: 'turn-count', maxTurns: 2 } });
  });

  it('marks a request id the service made (no X-Request-Id) as requestIdFrom service; refuses an unusable one, compacting nothing', async () => {
    await harness
      .http()
      .post('/v1/sessions/who2/events')
      .set('Authorization', `Bearer ${OPS}`)
      .send({ events: events(8) })
      .expect(201);
    // A header with a space is not usable: the compaction is refused (it ran under a UUID the service made before 2026-12-05).
    const refused = await harness
      .http()
      .post('/v1/sessions/who2/compactions')
      .set('Authorization', `Bearer ${OPS}`)
      .set('X-Request-Id', 'approved by CISO')
      .send({ strategy: { type: 'sliding-window', maxEvents: 6 } })
      .expect(400);
    expect(refused.body).toMatchObject({ code: 'validation_failed', parameter: 'X-Request-Id' });
    const none = await harness.http().get('/v1/sessions/who2/compactions').set('Authorization', `Bearer ${OPS}`).expect(200);
    expect(none.body.compactions).toEqual([]);
    // Without the header the service makes a UUID.
    const made = await harness
      .http()
      .post('/v1/sessions/who2/compactions')
      .set('Authorization', `Bearer ${OPS}`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 6 } })
      .expect(200);
    const item = await harness.http().get(`/v1/sessions/who2/compactions/${made.body.compactionId}`).set('Authorization', `Bearer ${OPS}`).expect(200);
    expect(item.body.requestedBy).toEqual({ keyLabel: 'API_KEYS#1', requestId: made.headers['x-request-id'], requestIdFrom: 'service', via: 'http' });
    expect(item.body.requestedBy.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('an erasure record keeps the key label and request id of the DELETE that ordered it', async () => {
    await harness
      .http()
      .post('/v1/sessions/gone1/events')
      .set('Authorization', `Bearer ${OPS}`)
      .send({ events: events(2) })
      .expect(201);
    await harness.http().delete('/v1/sessions/gone1').set('Authorization', `Bearer ${BOT}`).set('X-Request-Id', 'erase-req-1').expect(200);
    const records = (await storedOf(SESSION_ERASED)).map((e) => e.data as SessionErasedData).filter((d) => d.sessionId === 'gone1');
    expect(records.map((d) => d.requestedBy)).toEqual([{ keyLabel: 'API_KEYS#2', requestId: 'erase-req-1', requestIdFrom: 'client', via: 'http' }]);
  });
});
