/**
 * Two replicas (in-process services) on one PostgreSQL database, and on one SQLite store file
 * (`SQLITE_EVENTS_FILE`; there it was 2 calls for 1 decision before SQLite had claims), compaction commands for one
 * session sent to both at once, a slow model counting its calls: each replica used to plan on the
 * same revision and call the model, one decision was written and the other reply thrown away
 * (unrecorded spend). With the session's claim, a command whose pass calls the model waits for
 * the other replica's pass, then decides on the session as that pass left it: the same compaction
 * is answered `replayed: true` with the other's decision, another one plans on the compacted
 * window; one model call in all. A client that gives up while its command waits leaves no claim held.
 */
import type { SummaryRequest } from '@lib/compaction';
import { createEventStore, type EventStore } from '@lib/event-store';
import { sessionClaimName, type Summarizer, type SummarizerOutcome } from '@lib/session';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { usePostgresReplicas, type PostgresReplicasOptions } from '../support/postgres-replicas';
import { useSqliteReplicas } from '../support/sqlite-replicas';
import type { Harness } from '../support/service-harness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** `n` distinct words (about `n` × 3 tokens in cl100k_base). */
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}w${i}`).join(' ');

/** A model that answers after `delayMs` and counts its calls. */
class SlowCountingSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'test-slow' };
  calls = 0;
  constructor(public delayMs: number) {}
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    this.calls++;
    await sleep(this.delayMs);
    return { ok: true, text: `summary of ${request.coveredIds.length} events`, calls: 1, promptTokens: 10, completionTokens: 5 };
  }
}

const strategy = { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 300 };

/**
 * Registers the tests on two replicas: `replicasOn(options)` registers their hooks and returns
 * them (filled in by its `beforeAll`), `openOther()` opens another client of their store.
 */
function commandClaimSpecs(replicasOn: (options: PostgresReplicasOptions) => { a: Harness; b: Harness }, openOther: () => EventStore): void {
  let a: Harness;
  let b: Harness;
  const modelA = new SlowCountingSummarizer(800);
  const modelB = new SlowCountingSummarizer(800);
  const calls = () => modelA.calls + modelB.calls;
  const replicas = replicasOn({ env: { COMPACTION_CLAIM_POLL_MS: '50' }, summarizerA: modelA, summarizerB: modelB });
  beforeAll(() => ({ a, b } = replicas));

  /** A session of 6 turns (about 3,600 tokens), written through replica A; its last position. */
  async function conversation(sessionId: string): Promise<string> {
    const events = Array.from({ length: 6 }, (_, t) => [
      { id: `u${t}`, type: 'user', text: `turn ${t}: ${words(`u${t}`, 100)}` },
      { id: `a${t}`, type: 'assistant', text: words(`a${t}`, 100) },
    ]).flat();
    const res = await a.http().post(`/v1/sessions/${sessionId}/events`).send({ events }).expect(201);
    return res.body.position as string;
  }

  it('identical commands through both replicas at once: one model call, one decision, the other answered replayed with it', async () => {
    const position = await conversation('same');
    await b.projected(position);
    const before = calls();
    const [ra, rb] = await Promise.all(
      [a, b].map((h) => h.http().post('/v1/sessions/same/compactions').send({ strategy, estimator: 'cl100k_base' }).expect(200)),
    );
    expect(calls() - before).toBe(1);
    expect([ra.body.outcome, rb.body.outcome]).toEqual(['compacted', 'compacted']);
    expect(rb.body.compactionId).toBe(ra.body.compactionId);
    expect([ra.body.replayed === true, rb.body.replayed === true].sort()).toEqual([false, true]);
    // Read at the decision's position (either replica may have written it; A's read models may lag B's write).
    const decided = [ra.body.position as string, rb.body.position as string].reduce((x, y) => (BigInt(x) > BigInt(y) ? x : y));
    const history = await a.http().get(`/v1/sessions/same/compactions?minPosition=${decided}`).expect(200);
    expect(history.body.compactions).toHaveLength(1);
  });

  it('different commands through both replicas at once: the one that waited plans on the compacted window (no second model call)', async () => {
    const position = await conversation('other');
    await b.projected(position);
    const before = calls();
    const [ra, rb] = await Promise.all([
      a.http().post('/v1/sessions/other/compactions').send({ strategy, estimator: 'cl100k_base' }).expect(200),
      (async () => {
        await sleep(100);
        return b
          .http()
          .post('/v1/sessions/other/compactions')
          .send({ strategy: { ...strategy, summarizeAtTokens: 301 }, estimator: 'cl100k_base' })
          .expect(200);
      })(),
    ]);
    expect(calls() - before).toBe(1);
    expect(ra.body.outcome).toBe('compacted');
    expect(rb.body.outcome).toBe('noop');
    expect(rb.body.replayed).toBeUndefined();
  });

  it('a client that gives up while its command waits leaves no claim held; the waiting command is counted in /metrics meanwhile', async () => {
    const position = await conversation('gone');
    await b.projected(position);
    for (const model of [modelA, modelB]) model.delayMs = 3000;
    const before = calls();
    // sent now (a supertest request goes out when it is awaited)
    const first = a
      .http()
      .post('/v1/sessions/gone/compactions')
      .send({ strategy, estimator: 'cl100k_base' })
      .then((res) => res);
    // A's pass holds the claim once it calls the model
    for (let i = 0; i < 100 && calls() === before; i++) await sleep(20);
    const gaveUp = b
      .http()
      .post('/v1/sessions/gone/compactions')
      .send({ strategy: { ...strategy, summarizeAtTokens: 301 }, estimator: 'cl100k_base' })
      .timeout(1500)
      .then(
        () => 'answered',
        (err: Error & { timeout?: number }) => (err.timeout ? 'timed out' : err.message),
      );
    let waiting = '';
    for (let i = 0; i < 50 && !/^compaction_commands_waiting_for_claim 1$/m.test(waiting); i++) {
      await sleep(20);
      waiting = (await b.http().get('/metrics').expect(200)).text;
    }
    expect(waiting).toMatch(/^compaction_commands_waiting_for_claim 1$/m);
    expect(await gaveUp).toBe('timed out');
    expect((await first).body.outcome).toBe('compacted');
    // The session's claim is free again soon after (the abandoned command's pass ends by itself): another client of the database gets it.
    const other = openOther();
    try {
      let held = await other.tryClaim!(sessionClaimName('default', 'gone'));
      for (let i = 0; i < 100 && !held; i++) {
        await sleep(50);
        held = await other.tryClaim!(sessionClaimName('default', 'gone'));
      }
      expect(held).not.toBeNull();
      await held!.release();
    } finally {
      await other.close();
      for (const model of [modelA, modelB]) model.delayMs = 800;
    }
    const after = await b.http().get('/metrics').expect(200);
    expect(after.text).toMatch(/^compaction_commands_waiting_for_claim 0$/m);
  });
}

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'two replicas on one PostgreSQL database: compaction commands for one session call the model once (claim)', () => {
  let url = '';
  commandClaimSpecs(
    (options) => {
      const replicas = usePostgresReplicas('claimcmd', options);
      beforeAll(() => (url = replicas.db.url));
      return replicas;
    },
    () => createEventStore({ postgresUrl: url }),
  );
});

describe('two replicas on one SQLite store file: compaction commands for one session call the model once (claim)', () => {
  let file = '';
  commandClaimSpecs(
    (options) => {
      const replicas = useSqliteReplicas(options);
      beforeAll(() => (file = replicas.file));
      return replicas;
    },
    () => createEventStore({ sqliteFile: file }),
  );
});
