/**
 * Several service replicas on one PostgreSQL event store (issue 12, acceptance 2). Three real
 * service processes (`DATABASE_URL` shared, own `DATA_DIR` each for their SQLite read models) are
 * driven at once for 20 s: clients append to shared sessions through different replicas, one
 * client compacts through replica 0 while the others append, half the sessions have an
 * auto-compaction policy (so every replica that takes an append may run the same pass), and
 * replica 2 is killed with SIGKILL and restarted mid-run. Afterwards:
 *  - every acknowledged append is in the log exactly once;
 *  - each session's decisions never overlap: one decision per base revision, each event archived once;
 *  - every replica's read models (window, recall, history, log) equal a rebuild from the log, and
 *    every replica answers the same window and recall;
 *  - no subscription skipped an event: one followed the log live during the whole run and saw
 *    exactly the final log, and every replica's projector checkpoint reached the head.
 * Runtime: about 3 min on the shared 2-core machine under a load average of ~20 (20 s of load; the
 * rest is four ts-node start-ups and the checks); well under that on an idle machine.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SessionEvent } from '@lib/compaction';
import type { RecordedEvent } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { COMPACTION_COMPLETED, COMPACTION_FAILED, CONVERSATION_EVENT, EVENTS_ARCHIVED } from '@lib/session';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { call, spawnService, type JsonAnswer, type ServiceProcess } from '../support/service-process';
import { decisionProblems, dumpAndRebuild, streamOf } from '../support/log-checks';

jest.setTimeout(420_000);

const RUN_MS = 20_000;
const KILL_AT_MS = 6_000;
const SESSIONS = ['rep-0', 'rep-1', 'rep-2', 'rep-3', 'rep-4', 'rep-5'];
const WITH_POLICY = new Set(['rep-0', 'rep-1', 'rep-2']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function turn(client: string, n: number): SessionEvent[] {
  return [
    { id: `${client}-u${n}`, type: 'user', text: `question ${n} from ${client}: move booking ${client.toUpperCase()}-${n} to next week` },
    { id: `${client}-a${n}`, type: 'assistant', text: `done: booking ${client.toUpperCase()}-${n} moved` },
  ];
}

async function until(check: () => Promise<boolean>, what: string, limit = 600): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}`);
}

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'three service replicas on one PostgreSQL event store', () => {
  let db: TestDatabase;
  const dirs = [0, 1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'replica-')));
  const replicas: (ServiceProcess | null)[] = [null, null, null];
  const started: ServiceProcess[] = [];
  const start = async (i: number): Promise<ServiceProcess> => {
    // Three ts-node start-ups at once on a busy 2-core machine can take minutes: a generous bound.
    const svc = await spawnService({ dataDir: dirs[i], env: { DATABASE_URL: db.url, AUTO_COMPACTION_BACKOFF_MS: '0' }, readyTimeoutMs: 240_000 });
    started.push(svc);
    return svc;
  };

  beforeAll(async () => {
    db = await createTestDatabase('replicas');
  });
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    // A failed assertion leaves the log follower running: stop it before its database goes.
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    for (const svc of started) await svc.kill();
    await db?.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged append once, never overlaps decisions, and every replica equals a rebuild', async () => {
    const [r0, r1, r2] = await Promise.all([0, 1, 2].map(start));
    replicas.splice(0, 3, r0, r1, r2);
    // A subscription in this process follows the log for the whole run.
    const follower = PostgresEventStore.connect(db.url, { pollIntervalMs: 5 });
    const seen: RecordedEvent[] = [];
    const subscription = follower.subscribeToAll();
    const following = (async () => {
      for await (const e of subscription) seen.push(e);
    })();
    cleanups.push(
      () => subscription.close(),
      () => following,
      () => follower.close(),
    );

    const acked = new Map<string, string[]>(); // session → acknowledged client ids
    const unexpected: string[] = [];
    let retriedElsewhere = 0;
    let contended = 0;
    /** Sends a request to replica `first`, moving on to the next live replica while one is down (idempotent retries). */
    const send = async (first: number, method: string, route: string, body: unknown): Promise<JsonAnswer> => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const svc = replicas[(first + attempt) % 3];
        if (!svc) continue;
        try {
          const res = await call(svc.url, method, route, body);
          if (res.status !== 503) return res;
        } catch {
          // the replica was killed under this request: not acknowledged, retried on the next one
        }
        retriedElsewhere++;
        await sleep(50);
      }
      throw new Error(`${method} ${route}: no replica answered`);
    };

    for (const [i, s] of SESSIONS.entries()) {
      const first = turn(`seed${i}`, 0);
      expect((await send(i, 'POST', `/v1/sessions/${s}/events`, { events: first })).status).toBe(201);
      acked.set(
        s,
        first.map((e) => e.id),
      );
      if (WITH_POLICY.has(s)) {
        const policy = { strategy: { type: 'sliding-window', maxEvents: 8 }, trigger: { type: 'turn-count', maxTurns: 5 } };
        expect((await send(i, 'PUT', `/v1/sessions/${s}/policy`, policy)).status).toBe(200);
      }
    }

    const began = Date.now();
    const running = () => Date.now() - began < RUN_MS;
    const appender = async (c: number) => {
      for (let n = 1; running(); n++) {
        const session = SESSIONS[(c + n) % SESSIONS.length];
        const events = turn(`c${c}`, n);
        let res = await send(c + n, 'POST', `/v1/sessions/${session}/events`, { events });
        // The service gives up after many revision conflicts in a row (409 wrong_expected_revision):
        // not acknowledged, so the client sends the same request again (idempotent by event ids).
        for (let again = 0; res.status === 409 && res.body?.code === 'wrong_expected_revision' && again < 20; again++) {
          contended++;
          res = await send(c + n + again + 1, 'POST', `/v1/sessions/${session}/events`, { events });
        }
        if (res.status === 201) acked.set(session, [...(acked.get(session) ?? []), ...events.map((e) => e.id)]);
        else unexpected.push(`append ${res.status} ${JSON.stringify(res.body)}`);
      }
    };
    const outcomes: Record<string, number> = {};
    const compactor = async () => {
      for (let n = 0; running(); n++) {
        const session = SESSIONS[n % SESSIONS.length];
        const strategy = n % 2 === 0 ? { type: 'sliding-window', maxEvents: 6 } : { type: 'turn-window', maxTurns: 3 };
        const res = await send(0, 'POST', `/v1/sessions/${session}/compactions`, { strategy });
        if (res.status !== 200) unexpected.push(`compaction ${res.status} ${JSON.stringify(res.body)}`);
        else outcomes[res.body.outcome] = (outcomes[res.body.outcome] ?? 0) + 1;
        await sleep(100);
      }
    };
    const chaos = async () => {
      await sleep(KILL_AT_MS);
      const victim = replicas[2]!;
      replicas[2] = null;
      await victim.kill();
      await sleep(1000);
      replicas[2] = await start(2);
    };
    await Promise.all([...[0, 1, 2, 3, 4, 5].map(appender), compactor(), chaos()]);
    const ranMs = Date.now() - began;
    expect(unexpected).toEqual([]);
    expect(ranMs).toBeGreaterThanOrEqual(RUN_MS);

    // Let background compactions finish and every replica catch up with the head.
    const live = replicas.map((r) => r!);
    const settled = async () => {
      const bodies = await Promise.all(live.map((svc) => call(svc.url, 'GET', '/health').then((h) => h.body)));
      return bodies.every((b) => b.autoCompactionsInProgress === 0 && b.projector.lag === 'caught-up' && b.projector.checkpoint === b.store.headPosition);
    };
    await until(async () => (await settled()) && (await sleep(300), await settled()), 'replicas to settle');

    // Every acknowledged append exactly once; decisions never overlap.
    const store = PostgresEventStore.connect(db.url);
    let decisions = 0;
    for (const s of SESSIONS) {
      const log = await store.readStream(streamOf(s));
      const counts = new Map<string, number>();
      for (const e of log) {
        if (e.type !== CONVERSATION_EVENT) continue;
        const id = (e.data as { event: { id: string } }).event.id;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      for (const id of acked.get(s)!) expect(`${s}/${id}: ${counts.get(id) ?? 0}`).toBe(`${s}/${id}: 1`);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      expect(decisionProblems(log).problems).toEqual([]);
      const terminals = log.filter((e) => e.type === COMPACTION_COMPLETED || e.type === COMPACTION_FAILED);
      const bases = terminals.map((e) => (e.data as { basedOnRevision: string }).basedOnRevision);
      expect(new Set(bases).size).toBe(bases.length); // one decision per base revision
      const archived = log.filter((e) => e.type === EVENTS_ARCHIVED).flatMap((e) => (e.data as { archivedIds: string[] }).archivedIds);
      expect(new Set(archived).size).toBe(archived.length); // no event archived by two decisions
      decisions += terminals.length;
    }
    const log = await store.readAll({ maxCount: 1_000_000 });
    await store.close();

    // No subscription skipped an event: the live follower saw exactly the log, in order.
    await subscription.close();
    await following;
    await follower.close();
    expect(seen.map((e) => e.position)).toEqual(log.map((e) => e.position));

    // Every replica answers the same window and recall.
    for (const s of SESSIONS) {
      const windows = await Promise.all(live.map((svc) => call(svc.url, 'GET', `/v1/sessions/${s}/window`)));
      const recalls = await Promise.all(live.map((svc) => call(svc.url, 'GET', `/v1/recall?q=booking&sessionId=${s}&limit=50`)));
      for (const w of windows) expect(w).toEqual(windows[0]);
      for (const r of recalls) expect(r).toEqual(recalls[0]);
      expect(windows[0].status).toBe(200);
    }
    // …and each replica's read models equal a rebuild from the shared log.
    for (const [i, svc] of live.entries()) {
      await svc.stop();
      const { onDisk, rebuilt } = await dumpAndRebuild(dirs[i], PostgresEventStore.connect(db.url));
      expect(onDisk).toEqual(rebuilt);
    }
    const appends = [...acked.values()].reduce((n, ids) => n + ids.length / 2, 0);
    process.stderr.write(
      `replicas: ${appends} acknowledged appends, ${decisions} decisions (${JSON.stringify(outcomes)} commanded), ` +
        `${retriedElsewhere} requests retried on another replica, ${contended} appends resent after 409 wrong_expected_revision, ` +
        `${log.length} events in ${ranMs} ms\n`,
    );
  });
});
