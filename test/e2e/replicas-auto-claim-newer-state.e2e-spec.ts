/**
 * Two replicas (in-process services) on one PostgreSQL database (newcomer ncreplica F1): an
 * automatic pass whose scheduler read the session just under its trigger took no claim, and the
 * compaction it then ran loaded the session again, now over the trigger (the other replica had
 * appended meanwhile, and its own pass held the claim and called the model): both replicas called
 * the model for one decision, no warn line, the extra call only in `/metrics` (`reply="discarded"`).
 * The pass now claims the session itself when its plan calls the model: one call per decision.
 */
import { AutoCompactionScheduler, SessionStateCache } from '@lib/session';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { sleep, useAutoClaimReplicas, words } from '../support/auto-claim-replicas';
import type { Harness } from '../support/service-harness';

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'two replicas on one PostgreSQL database: an automatic pass planning on a newer state than its scheduler read', () => {
  const replicas = useAutoClaimReplicas('claimnewer', 1000);
  const { modelA, modelB, idle } = replicas;
  let a: Harness;
  let b: Harness;
  beforeAll(() => ({ a, b } = replicas));

  it('calls the model once when the other replica crosses the trigger between the scheduler reading the session and the pass planning', async () => {
    const sessionId = 'newer';
    await a
      .http()
      .put(`/v1/sessions/${sessionId}/policy`)
      .send({ strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 300 }, trigger: { type: 'token-count', threshold: 1500 } })
      .expect(200);
    for (const t of [0, 1])
      await a
        .http()
        .post(`/v1/sessions/${sessionId}/events`)
        .send({
          events: [
            { id: `u${t}`, type: 'user', text: `q${t}` },
            { id: `a${t}`, type: 'assistant', text: words(`y${t}`, 80) },
          ],
        })
        .expect(201);
    await idle();
    expect(modelA.calls + modelB.calls).toBe(0);

    // Replica A's scheduler: its next read of the session is held until B has crossed the trigger (a slow read after a pause).
    const schedulerA = a.service.app.get<AutoCompactionScheduler>(AutoCompactionScheduler) as unknown as { sessions: SessionStateCache };
    const cache = schedulerA.sessions;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    schedulerA.sessions = Object.assign(Object.create(cache) as SessionStateCache, {
      load: async (key: string) => {
        const state = await cache.load(key);
        if (!held) {
          held = true;
          await gate;
        }
        return state;
      },
    });
    try {
      await a
        .http()
        .post(`/v1/sessions/${sessionId}/events`)
        .send({ events: [{ id: 'u2', type: 'user', text: 'q2' }] })
        .expect(201);
      for (let i = 0; i < 500 && !held; i++) await sleep(10);
      expect(held).toBe(true);
      const crossing = await b
        .http()
        .post(`/v1/sessions/${sessionId}/events`)
        .send({ events: [{ id: 'a2', type: 'assistant', text: words('z', 500) }] })
        .expect(201);
      for (let i = 0; i < 500 && modelB.calls === 0; i++) await sleep(10);
      expect(modelB.calls).toBe(1);
      // A's scheduler goes on with the state it read (under the trigger) while B's pass holds the claim and calls its model.
      release();
      await idle();
      await a.projected(crossing.body.position);
    } finally {
      release();
      schedulerA.sessions = cache;
    }
    const res = await a.http().get(`/v1/sessions/${sessionId}/compactions?limit=100`).expect(200);
    const compacted = (res.body.compactions as { outcome: string }[]).filter((d) => d.outcome === 'compacted');
    expect(compacted.length).toBe(1);
    // was: A's pass called its model too (2 calls for 1 decision; its reply discarded, counted only by A's /metrics)
    expect({ a: modelA.calls, b: modelB.calls }).toEqual({ a: 0, b: 1 });
    const metrics = (await Promise.all([a, b].map(async (h) => (await h.http().get('/metrics').expect(200)).text))).join('\n');
    expect(metrics).not.toMatch(/^summarizer_calls_total\{[^}]*reply="discarded"[^}]*\} [1-9]/m);
  });
});
