/**
 * Two replicas (in-process services) on one PostgreSQL database, or one SQLite store file, an agent sending its appends to
 * them in turn (a round-robin balancer), a rolling-summary policy with a token-count trigger and a
 * slow model (newcomer ncagentloop F2): each append used to start an automatic pass on the replica
 * that took it, so both replicas planned the same compaction and called the model, and one reply
 * was thrown away (about 2 model calls per decision, the session's `summarizerSpend` showing
 * half). With the claim, one replica compacts a session at a time: one call per decision, and no
 * session is left over its trigger (the replica that waited compacts when the other's pass did not
 * cover the trigger: it failed, or the session grew meanwhile).
 */
import { AutoCompactionScheduler } from '@lib/session';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { sleep, useAutoClaimReplicas, words } from '../support/auto-claim-replicas';
import type { Harness } from '../support/service-harness';

interface HistoryItem {
  outcome: string;
  reason?: string;
  summarizer?: { calls: number; discarded?: { calls: number } };
}

/** Registers the tests on two replicas of `store` (see {@link useAutoClaimReplicas}). */
function autoClaimSpecs(store: 'postgres' | 'sqlite'): void {
  const replicas = useAutoClaimReplicas('autoclaim', 400, store);
  const { modelA, modelB, idle } = replicas;
  let a: Harness;
  let b: Harness;
  beforeAll(() => ({ a, b } = replicas));

  /** A rolling-summary policy with a token-count trigger, set through replica A. */
  async function setPolicy(sessionId: string): Promise<void> {
    await a
      .http()
      .put(`/v1/sessions/${sessionId}/policy`)
      .send({ strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 300 }, trigger: { type: 'token-count', threshold: 1500 } })
      .expect(200);
  }

  async function history(sessionId: string, position: string): Promise<HistoryItem[]> {
    await a.projected(position);
    const res = await a.http().get(`/v1/sessions/${sessionId}/compactions?limit=100&minPosition=${position}`).expect(200);
    return res.body.compactions as HistoryItem[];
  }

  /** Turns of an agent loop, each append through the next replica, 100 ms apart (less than a model call). */
  async function agentLoop(sessionId: string, turns: number): Promise<string> {
    let position = '0';
    let n = 0;
    for (let t = 0; t < turns; t++) {
      const batches = [
        [
          { id: `u${t}`, type: 'user', text: `turn ${t}: look up order ORD-${t}` },
          { id: `a${t}`, type: 'assistant', text: null, toolCalls: [{ id: `c${t}`, name: 'lookup', arguments: `{"order":"ORD-${t}"}` }] },
        ],
        [
          {
            id: `r${t}`,
            type: 'tool',
            responses: [{ toolCallId: `c${t}`, name: 'lookup', data: JSON.stringify({ order: `ORD-${t}`, lines: words(`t${t}`, 150) }) }],
          },
        ],
        [{ id: `f${t}`, type: 'assistant', text: `order ORD-${t} is shipped` }],
      ];
      for (const events of batches) {
        const res = await (n++ % 2 ? a : b).http().post(`/v1/sessions/${sessionId}/events`).send({ events }).expect(201);
        position = res.body.position;
        await sleep(100);
      }
    }
    return position;
  }

  it('calls the model once per decision when appends alternate between replicas (it was about twice), and counts the passes put off', async () => {
    await setPolicy('rr');
    const last = await agentLoop('rr', 8);
    await idle();
    const tail = await a
      .http()
      .post('/v1/sessions/rr/events')
      .send({ events: [{ id: 'end', type: 'user', text: 'thanks' }] })
      .expect(201);
    await idle();
    const decisions = await history('rr', tail.body.position ?? last);
    const compacted = decisions.filter((d) => d.outcome === 'compacted');
    const recordedCalls = decisions.reduce((sum, d) => sum + (d.summarizer?.calls ?? 0), 0);
    const discarded = decisions.reduce((sum, d) => sum + (d.summarizer?.discarded?.calls ?? 0), 0);
    const endpointCalls = modelA.calls + modelB.calls;
    // measured: without the claim, 6 model calls for 3 decisions (3 recorded, 0 discarded); with it, 3 for 3
    expect(compacted.length).toBeGreaterThanOrEqual(3);
    expect({ endpointCalls, discarded }).toEqual({ endpointCalls: recordedCalls, discarded: 0 });
    expect(endpointCalls).toBe(compacted.length);
    const metrics = (await Promise.all([a, b].map(async (h) => (await h.http().get('/metrics').expect(200)).text))).join('\n');
    const putOff = [...metrics.matchAll(/^auto_compactions_claimed_elsewhere_total (\d+)/gm)].reduce((s, m) => s + Number(m[1]), 0);
    expect(putOff).toBeGreaterThan(0);
    expect(metrics).not.toMatch(/^summarizer_calls_total\{[^}]*reply="discarded"[^}]*\} [1-9]/m);
    // nobody left waiting, and the session is not left over its trigger
    for (const h of [a, b]) expect(h.service.app.get(AutoCompactionScheduler).waitingForClaim).toBe(0);
    const session = await a.http().get(`/v1/sessions/rr?minPosition=${tail.body.position}`).expect(200);
    expect(session.body.summarizerSpend.calls + session.body.summarizerSpend.discarded.calls).toBe(endpointCalls);
  });

  it('compacts on the replica that waited when the pass of the replica holding the claim fails (no session left over its trigger)', async () => {
    await setPolicy('fails');
    const [beforeA, beforeB] = [modelA.calls, modelB.calls];
    modelB.failing = true;
    // two turns through A (under the trigger), then B takes the append that crosses it and calls its failing model…
    for (const t of [0, 1])
      await a
        .http()
        .post('/v1/sessions/fails/events')
        .send({
          events: [
            { id: `u${t}`, type: 'user', text: `q${t}` },
            { id: `a${t}`, type: 'assistant', text: words('y', 200) },
          ],
        })
        .expect(201);
    await b
      .http()
      .post('/v1/sessions/fails/events')
      .send({
        events: [
          { id: 'u2', type: 'user', text: 'q2' },
          { id: 'a2', type: 'assistant', text: words('z', 200) },
        ],
      })
      .expect(201);
    for (let i = 0; i < 500 && modelB.calls === beforeB; i++) await sleep(10);
    expect(modelB.calls).toBe(beforeB + 1);
    // …while A takes the next append: B holds the claim, A waits instead of calling its model at once
    const res = await a
      .http()
      .post('/v1/sessions/fails/events')
      .send({ events: [{ id: 'u3', type: 'user', text: 'q3' }] })
      .expect(201);
    await sleep(100);
    expect(modelA.calls).toBe(beforeA);
    modelB.failing = false;
    await idle();
    const decisions = await history('fails', res.body.position);
    expect(decisions.map((d) => d.outcome)).toEqual(['failed', 'compacted']);
    expect(modelA.calls - beforeA).toBe(1);
  });
}

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'two replicas on one PostgreSQL database: one automatic pass per session at a time (claim)', () =>
  autoClaimSpecs('postgres'),
);
// SQLite before it had claims: 6 model calls for 3 decisions in the first test (3 replies discarded)
describe('two replicas on one SQLite store file: one automatic pass per session at a time (claim)', () => autoClaimSpecs('sqlite'));
