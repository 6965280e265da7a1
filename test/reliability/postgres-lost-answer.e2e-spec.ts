/**
 * Writes over HTTP whose PostgreSQL answer is lost after the server committed them (newcomer's
 * report: through a proxy cutting ~3% of the server's answers, such appends were answered 503
 * `store_unavailable` although they were in the log; clients sending no ids, which get `evt-<uuid>`
 * ids from the service, resent them as told and got each message twice; a compaction answered 503
 * had been written, and its resend answered `noop` without the `compactionId`). The service,
 * with `DATABASE_URL` pointing at an {@link AnswerCuttingProxy} that loses exactly the append's
 * answer (the service's writes name the session's life: `es_append_in_life_v1`), must answer the
 * write itself, written once. Runtime: about 5 s (one service starts).
 */
import * as fs from 'node:fs';
import { AnswerCuttingProxy } from '../../libs/event-store/test/postgres-answer-cutter';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from '../support/service-harness';

interface LoggedEvent {
  type: string;
  data: { event?: { id: string; text: string }; compactionId?: string };
}

describeUnlessSkipped(postgresUnavailableReason(), 'PostgreSQL answers lost after the commit, through the service', () => {
  let db: TestDatabase;
  let proxy: AnswerCuttingProxy;
  let svc: Harness;

  beforeAll(async () => {
    db = await createTestDatabase('lost_http');
    proxy = await AnswerCuttingProxy.start(db.url);
    svc = await startService({ env: { DATABASE_URL: proxy.urlFor(db.url) } });
  });
  afterAll(async () => {
    await svc?.stop();
    if (svc) fs.rmSync(svc.dataDir, { recursive: true, force: true });
    await proxy?.close();
    await db?.drop();
  });

  const log = async (session: string, minPosition: string): Promise<LoggedEvent[]> =>
    (await svc.http().get(`/v1/sessions/${session}/events?fromRevision=0&limit=1000&minPosition=${minPosition}`).expect(200)).body.events;

  it('an append without ids whose answer is lost is answered 201 and written once', async () => {
    await svc
      .http()
      .post('/v1/sessions/noid/events')
      .send({ events: [{ type: 'user', text: 'message number 0' }] })
      .expect(201);
    const cut = proxy.cutAnswerTo('es_append_in_life_v1');
    const answer = await svc
      .http()
      .post('/v1/sessions/noid/events')
      .send({ events: [{ type: 'user', text: 'message number 1' }] });
    await cut;
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 201, body: { revision: '1', position: expect.any(String) } });
    const texts = (await log('noid', answer.body.position)).map((e) => e.data.event?.text);
    expect(texts).toEqual(['message number 0', 'message number 1']);
  });

  it('a compaction whose answer is lost is answered with the compaction, recorded once', async () => {
    const events = Array.from({ length: 6 }, (_, i) => ({ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `turn ${i} of the conversation` }));
    await svc.http().post('/v1/sessions/compact/events').send({ events }).expect(201);
    const cut = proxy.cutAnswerTo('es_append_in_life_v1');
    const answer = await svc
      .http()
      .post('/v1/sessions/compact/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } });
    await cut;
    expect({ status: answer.status, outcome: answer.body.outcome }).toEqual({ status: 200, outcome: 'compacted' });
    expect(answer.body.compactionId).toEqual(expect.any(String));
    const decisions = (await log('compact', answer.body.position)).filter((e) => e.type === 'CompactionCompleted');
    expect(decisions.map((e) => e.data.compactionId)).toEqual([answer.body.compactionId]);
    expect(proxy.cuts).toBe(2);
  });
});
