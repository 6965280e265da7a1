/**
 * `DELETE /v1/sessions/{id}` sent again by its client (its answer lost) under the same
 * `X-Request-Id`, after the session id was written again: it answers the erasure it resends (200,
 * the same body) and erases nothing of the new life. Before, a DELETE carried no expected revision
 * and was not matched by request id, so that resend erased the new life. Without an id of the
 * client's own, with another key, or for another session, a DELETE erases as before (one with an
 * id the service cannot use is refused: `request-id.e2e-spec.ts`). On one replica (SQLite) and on
 * two sharing one PostgreSQL database (the resend reaching the replica that did not erase).
 */
import * as fs from 'node:fs';
import { erasureStream } from '@lib/session';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { usePostgresReplicas } from '../support/postgres-replicas';
import { startService, type Harness } from '../support/service-harness';

const OPS = 'ops-key-11111111';
const BOT = 'bot-key-22222222';
const user = (id: string) => ({ events: [{ id, type: 'user', text: `text of ${id}` }] });

/** The ids of the window of `sessionId` on `h`, read at `minPosition` (a write's position). */
async function windowIds(h: Harness, sessionId: string, minPosition: string, key?: string): Promise<string[]> {
  const req = h.http().get(`/v1/sessions/${sessionId}/window`).query({ minPosition });
  const res = await (key ? req.set('Authorization', `Bearer ${key}`) : req).expect(200);
  return (res.body.events as Array<{ id: string }>).map((e) => e.id);
}

describe('DELETE sent again under its X-Request-Id after the session was written again (one replica)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startService({ env: { API_KEYS: `${OPS}:tenantA,${BOT}:tenantA` } });
  });
  afterAll(async () => {
    await h?.stop();
    if (h) fs.rmSync(h.dataDir, { recursive: true, force: true });
  });

  const post = (sessionId: string, id: string) =>
    h.http().post(`/v1/sessions/${sessionId}/events`).set('Authorization', `Bearer ${OPS}`).send(user(id)).expect(201);
  const del = (sessionId: string, requestId?: string, key = OPS) => {
    const req = h.http().delete(`/v1/sessions/${sessionId}`).set('Authorization', `Bearer ${key}`);
    return requestId === undefined ? req : req.set('X-Request-Id', requestId);
  };
  const erasuresOf = async (sessionId: string) =>
    (await h.service.store.readStream(erasureStream('tenantA'))).filter((e) => (e.data as { sessionId: string }).sessionId === sessionId);

  it('answers the first erasure (200, same body), keeps the new life, writes no record; two resends at once too', async () => {
    await post('r1', 'u1');
    await post('r1', 'u2');
    const first = await del('r1', 'del-r1-0001').expect(200);
    expect(first.body).toMatchObject({ sessionId: 'r1', erasedEvents: 2 });
    const n1 = await post('r1', 'n1');
    const again = await del('r1', 'del-r1-0001').expect(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers['x-request-id']).toBe('del-r1-0001');
    const both = await Promise.all([del('r1', 'del-r1-0001').expect(200), del('r1', 'del-r1-0001').expect(200)]);
    expect(both.map((r) => r.body)).toEqual([first.body, first.body]);
    expect(await windowIds(h, 'r1', n1.body.position, OPS)).toEqual(['n1']);
    expect(await erasuresOf('r1')).toHaveLength(1);
  });

  it.each<[string, string | undefined, string]>([
    ['no X-Request-Id (the service makes one)', undefined, OPS],
    ['another X-Request-Id', 'del-r2-0002', OPS],
    ['the same X-Request-Id under another API key of the tenant', 'del-r2-0001', BOT],
  ])('erases the new life as before for a DELETE with %s', async (_case, requestId, key) => {
    const sessionId = `r2-${key === BOT ? 'bot' : (requestId ?? 'none').replace(/\W/g, '')}`;
    await post(sessionId, 'u1');
    const first = await del(sessionId, 'del-r2-0001').expect(200);
    await post(sessionId, 'n1');
    const second = await del(sessionId, requestId, key).expect(200);
    expect(second.body).toMatchObject({ sessionId, erasedEvents: 1 });
    expect(second.body.position).not.toBe(first.body.position);
    await h.http().get(`/v1/sessions/${sessionId}`).set('Authorization', `Bearer ${OPS}`).query({ minPosition: second.body.position }).expect(404);
    expect(await erasuresOf(sessionId)).toHaveLength(2);
  });

  it('erases another session sent the same X-Request-Id (a request id matches erasures of its own session only)', async () => {
    await post('r3a', 'u1');
    await post('r3b', 'u1');
    await del('r3a', 'del-r3-0001').expect(200);
    const other = await del('r3b', 'del-r3-0001').expect(200);
    expect(other.body).toMatchObject({ sessionId: 'r3b', erasedEvents: 1 });
    expect(await erasuresOf('r3b')).toHaveLength(1);
  });
});

const skipReason = postgresUnavailableReason();

describeUnlessSkipped(skipReason, 'DELETE sent again under its X-Request-Id, on two replicas sharing one PostgreSQL database', () => {
  const replicas = usePostgresReplicas('erase_resend_rid');
  let a: Harness;
  let b: Harness;
  beforeAll(() => ({ a, b } = replicas));

  it("answers on B the erasure made through A, at once (B's read models may not have read it), keeping the life written again through B", async () => {
    await a.http().post('/v1/sessions/p1/events').send(user('u1')).expect(201);
    await a.http().post('/v1/sessions/p1/events').send(user('u2')).expect(201);
    const first = await a.http().delete('/v1/sessions/p1').set('X-Request-Id', 'del-p1-0001').expect(200);
    const n1 = await b.http().post('/v1/sessions/p1/events').send(user('n1')).expect(201);
    const [onB, onA] = await Promise.all([
      b.http().delete('/v1/sessions/p1').set('X-Request-Id', 'del-p1-0001').expect(200),
      a.http().delete('/v1/sessions/p1').set('X-Request-Id', 'del-p1-0001').expect(200),
    ]);
    expect([onB.body, onA.body]).toEqual([first.body, first.body]);
    for (const h of [a, b]) expect(await windowIds(h, 'p1', n1.body.position)).toEqual(['n1']);
    const records = (await a.service.store.readStream(erasureStream('default'))).filter((e) => (e.data as { sessionId: string }).sessionId === 'p1');
    expect(records).toHaveLength(1);
  });
});
