/**
 * Duplicate compaction commands cost one summarizer call: identical commands arriving at once in
 * one process share one pass, and a transport command delivered again after its decision is in
 * the log is answered with that decision without planning or calling the summarizer, even after
 * later decisions and appends. A failed pass stays a failure of that pass only: the same request
 * asked again afterwards is a new pass.
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type Strategy, type SummaryRequest } from '@lib/compaction';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { SqliteEventStore, deterministicEventId } from '@lib/event-store';
import { COMPACTION_COMPLETED, COMPACTION_FAILED, EVENTS_ARCHIVED, SUMMARY_INSERTED } from '../events/session-stream-events';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import type { CompactionAnswer } from '../decider/compaction-answer';
import { compactionIdentity } from '../decider/compaction-decider';
import { compactionParamsKey } from './compaction-params';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactionAnswered, CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';
import { cloneSessionWindow } from '../domain/clone-session-window';

/** Counts its calls; holds them until `open()` when made `gated`; fails every call when told to. */
class CountingSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'counting' };
  calls = 0;
  fail = false;
  private gate: Promise<void> | null = null;
  private release: () => void = () => undefined;

  gated(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release();
    this.gate = null;
  }

  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    const call = ++this.calls;
    if (this.gate) await this.gate;
    if (this.fail) return { ok: false, reason: `refused call ${call}`, calls: 1, promptTokens: 1, completionTokens: 0 };
    // Each call's own text: two calls never make the same decision.
    return { ok: true, text: `recap ${call} of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 1, completionTokens: 1 };
  }
}

const strategy = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 });
const noBus = { publish: () => undefined } as unknown as EventBus;

/** A store and one process's handlers on it (one state cache, one compaction handler). */
function setUp() {
  const store = SqliteEventStore.open(':memory:');
  const cache = new SessionStateCache(store);
  // Counts the loads done, so a test can wait until every request it sent has read the session.
  const loads = { done: 0 };
  const load = cache.load.bind(cache);
  cache.load = async (key) => {
    const state = await load(key);
    loads.done++;
    return state;
  };
  const append = new AppendSessionEventsHandler(store, cache, noBus);
  const summarizer = new CountingSummarizer();
  const published: CompactionAnswered[] = [];
  const bus = { publish: (e: unknown) => e instanceof CompactionAnswered && published.push(e) } as unknown as EventBus;
  const compactions = new CompactSessionHandler(store, cache, summarizer, bus);
  const appendTurns = async (from: number, to: number) => {
    for (let n = from; n < to; n++)
      await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
  };
  const decisions = async () => (await store.readStream('session-t.s')).filter((e) => e.type === COMPACTION_COMPLETED || e.type === COMPACTION_FAILED);
  /** Resolves once `count` more loads than `since` are done, and what they started has run on. */
  const loaded = async (since: number, count: number) => {
    while (loads.done < since + count) await settle(1);
    await settle();
  };
  return { store, cache, summarizer, compactions, appendTurns, decisions, published, loads, loaded };
}

/** Lets every pending I/O callback and promise run `rounds` times over. */
async function settle(rounds = 50): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The fields of an answer that describe its decision (not when it was asked, nor whether it was a replay). */
function decisionOf(a: CompactionAnswer) {
  const { revision: _revision, replayed: _replayed, ...decision } = a;
  return decision;
}

describe('identical compactions at once in one process', () => {
  it('share one pass: one summarizer call, 8 equal answers, one decision in the log, counted once', async () => {
    const { store, summarizer, compactions, appendTurns, decisions, published, loads, loaded } = setUp();
    try {
      await appendTurns(0, 8);
      summarizer.gated();
      const since = loads.done;
      const answers = Array.from({ length: 8 }, () => compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false)));
      // every request has loaded the session before the summarizer answers
      await loaded(since, 8);
      summarizer.open();
      const all = await Promise.all(answers);

      expect(summarizer.calls).toBe(1);
      expect(all[0]).toMatchObject({ outcome: 'compacted', recorded: true });
      for (const a of all) expect(a).toEqual(all[0]);
      const log = await store.readStream('session-t.s');
      expect(log.filter((e) => e.type === COMPACTION_COMPLETED)).toHaveLength(1);
      expect(log.filter((e) => e.type === SUMMARY_INSERTED)).toHaveLength(1);
      expect(log.filter((e) => e.type === EVENTS_ARCHIVED)).toHaveLength(1);
      expect(await decisions()).toHaveLength(1);
      // the metrics count one pass; the seven that shared it are not passes of their own
      expect(published.filter((e) => !e.replayed)).toHaveLength(1);
      expect(published).toHaveLength(8);
    } finally {
      await store.close();
    }
  });

  it('share it also with a request that read the session before the decision landed and reached the pass after it ended: one summarizer call, no replay', async () => {
    const { store, summarizer, compactions, appendTurns, decisions, published, loads, loaded } = setUp();
    const cache = (compactions as unknown as { sessions: SessionStateCache }).sessions;
    try {
      await appendTurns(0, 8);
      summarizer.gated();
      const since = loads.done;
      const first = compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false));
      await loaded(since, 1);
      // The second request reads the session now (the pass is running on that revision), and its
      // read comes back only once the pass has ended (a slow connection, a busy pool).
      const load = cache.load.bind(cache);
      let readBack: () => void = () => undefined;
      const late = new Promise<void>((resolve) => (readBack = resolve));
      cache.load = async (key) => {
        // the state as read then (the cache folds the pass's decision into its own object later)
        const state = await load(key);
        const read = state && cloneSessionWindow(state);
        await late;
        return read;
      };
      const second = compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false));
      await settle();
      summarizer.open();
      const answer = await first;
      readBack();
      expect(await second).toEqual(answer);
      expect(summarizer.calls).toBe(1);
      expect(await decisions()).toHaveLength(1);
      expect(published.filter((e) => !e.replayed)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('do not share a pass when they differ: another strategy, another transport command, or a dry run is its own pass', async () => {
    const { store, summarizer, compactions, appendTurns, loads, loaded } = setUp();
    try {
      await appendTurns(0, 8);
      summarizer.gated();
      const since = loads.done;
      const other = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 });
      const answers = [
        compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false)),
        compactions.execute(new CompactSessionCommand('t', 's', other, null, 'chars', false)),
        compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'command', 'nats-1')),
        compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', true)),
      ];
      await loaded(since, 4);
      // three passes wait for the summarizer (a dry run calls none)
      expect(summarizer.calls).toBe(3);
      summarizer.open();
      const dryRun = (await Promise.all(answers))[3];
      expect(dryRun).toMatchObject({ dryRun: true, recorded: false });
    } finally {
      await store.close();
    }
  });

  it('share a failed pass, and the same request asked afterwards is a new pass (a new summarizer call, a new decision)', async () => {
    const { store, summarizer, compactions, appendTurns, decisions, loads, loaded } = setUp();
    try {
      await appendTurns(0, 8);
      summarizer.fail = true;
      summarizer.gated();
      const compact = () => compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false));
      const since = loads.done;
      const failing = Array.from({ length: 4 }, compact);
      await loaded(since, 4);
      summarizer.open();
      const failed = await Promise.all(failing);
      expect(summarizer.calls).toBe(1);
      for (const a of failed) expect(a).toEqual(failed[0]);
      expect(failed[0]).toMatchObject({ outcome: 'failed', recorded: true, failure: { reason: 'summarizer failed: refused call 1' } });

      summarizer.fail = false;
      const retried = await compact();
      expect(summarizer.calls).toBe(2);
      expect(retried).toMatchObject({ outcome: 'compacted', recorded: true });
      expect(retried.replayed).toBeUndefined();
      expect(retried.compactionId).not.toBe(failed[0].compactionId);
      expect((await decisions()).map((e) => e.type)).toEqual([COMPACTION_FAILED, COMPACTION_COMPLETED]);
    } finally {
      await store.close();
    }
  });
});

describe('a transport command delivered again after its decision is in the log', () => {
  const command = (commandId: string, redelivered = false) =>
    new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'command', commandId, redelivered);

  it('after a later decision and later appends: answered with its decision, no planning, no summarizer call', async () => {
    const { store, summarizer, compactions, appendTurns, decisions } = setUp();
    try {
      await appendTurns(0, 8);
      const first = await compactions.execute(command('cmd-1'));
      expect(first).toMatchObject({ outcome: 'compacted', recorded: true });
      await appendTurns(8, 16);
      const later = await compactions.execute(command('cmd-2'));
      expect(later).toMatchObject({ outcome: 'compacted', recorded: true });
      // more to compact, so the same command would compact again if it were planned
      await appendTurns(16, 24);
      expect(summarizer.calls).toBe(2);

      const again = await compactions.execute(command('cmd-1', true));
      expect(summarizer.calls).toBe(2);
      expect(again.replayed).toBe(true);
      expect(decisionOf(again)).toEqual(decisionOf(first));
      expect(await decisions()).toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it('after a later decision that left nothing to archive: answered with its decision, not that noop', async () => {
    const { store, summarizer, compactions, appendTurns } = setUp();
    try {
      await appendTurns(0, 8);
      const first = await compactions.execute(command('cmd-1'));
      await appendTurns(8, 16);
      await compactions.execute(command('cmd-2'));
      const again = await compactions.execute(command('cmd-1', true));
      expect(summarizer.calls).toBe(2);
      expect(decisionOf(again)).toEqual(decisionOf(first));
    } finally {
      await store.close();
    }
  });

  it('a failed decision: answered with that failure (the command is not retried by its redelivery)', async () => {
    const { store, summarizer, compactions, appendTurns, decisions } = setUp();
    try {
      await appendTurns(0, 8);
      summarizer.fail = true;
      const first = await compactions.execute(command('cmd-1'));
      expect(first).toMatchObject({ outcome: 'failed', recorded: true });
      summarizer.fail = false;
      await appendTurns(8, 16);
      await compactions.execute(command('cmd-2'));
      await appendTurns(16, 24);
      const again = await compactions.execute(command('cmd-1', true));
      expect(summarizer.calls).toBe(2);
      expect(again).toMatchObject({ outcome: 'failed', replayed: true, compactionId: first.compactionId, failure: first.failure });
      expect(await decisions()).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});

describe('compaction identity', () => {
  // The derivation earlier releases wrote their decision ids with: a resend of an old command must meet them.
  const v5 = (name: string) => deterministicEventId('session-memory-compaction/event', name);

  it('derives the compaction id as earlier releases did: from the command id, else from the base revision and parameters', () => {
    const paramsKey = compactionParamsKey(strategy, null, 'chars');
    const http = compactionIdentity(new CompactSessionCommand('t', 's', strategy, null, 'chars', false), 7n, 0n);
    expect(http.compactionId).toBe(v5(`t.s\u0000compaction\u00007\u0000${paramsKey}`));
    const nats = compactionIdentity(new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'command', 'cmd-1', true), 7n, 0n);
    expect(nats.compactionId).toBe(v5('t.s\u0000command\u0000cmd-1'));
    expect(compactionIdentity(new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'command', 'cmd-1'), 9n, 0n).compactionId).toBe(
      nats.compactionId,
    );
  });

  it('derives other compaction ids in a later incarnation of the stream (a session erased and written again), the same on every retry in it', () => {
    const http = new CompactSessionCommand('t', 's', strategy, null, 'chars', false);
    const nats = new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'command', 'cmd-1');
    for (const command of [http, nats]) {
      const first = compactionIdentity(command, 7n, 0n).compactionId;
      const again = compactionIdentity(command, 7n, 5n).compactionId;
      expect(again).not.toBe(first);
      expect(compactionIdentity(command, 7n, 5n).compactionId).toBe(again);
      expect(compactionIdentity(command, 7n, 5n).passKey).not.toBe(compactionIdentity(command, 7n, 0n).passKey);
    }
  });

  it('an automatic pass and a commanded compaction with the same parameters at once share one pass: one summarizer call, one decision', async () => {
    const { store, cache, summarizer, compactions, appendTurns, decisions, loads, loaded } = setUp();
    try {
      await appendTurns(0, 8);
      // the policy whose automatic pass this is (an automatic pass runs only while it is in force)
      await new SetCompactionPolicyHandler(store, cache, summarizer).execute(new SetCompactionPolicyCommand('t', 's', strategy, null, 'chars'));
      summarizer.gated();
      const since = loads.done;
      const auto = compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'auto'));
      const commanded = compactions.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'command'));
      await loaded(since, 2);
      summarizer.open();
      const [a, c] = await Promise.all([auto, commanded]);
      expect(summarizer.calls).toBe(1);
      // the same answer, but for the automatic pass's policyRevision: the command named its parameters
      const { policyRevision, ...shared } = a;
      expect(c).toEqual(shared);
      expect(policyRevision).toBe('8');
      expect(a).toMatchObject({ outcome: 'compacted', recorded: true });
      expect(await decisions()).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('shares a pass only between commands identical in tenant, session, command id, parameters, base revision and dry run (whatever their origin)', () => {
    const base = (over: Partial<{ tenant: string; session: string; commandId: string; dryRun: boolean; origin: 'auto' | 'command' }> = {}) =>
      new CompactSessionCommand(
        over.tenant ?? 't',
        over.session ?? 's',
        strategy,
        null,
        'chars',
        over.dryRun ?? false,
        over.origin ?? 'command',
        over.commandId,
      );
    const key = (command: CompactSessionCommand<Strategy>, revision = 7n) => compactionIdentity(command, revision, 0n).passKey;
    expect(key(base())).toBe(key(base()));
    const other = parseStrategy({ type: 'sliding-window', maxEvents: 3 });
    const different = [
      key(base({ tenant: 'u' })),
      key(base({ session: 'r' })),
      key(base({ commandId: 'cmd-1' })),
      key(base({ dryRun: true })),
      key(base(), 8n),
      key(new CompactSessionCommand('t', 's', other, null, 'chars', false)),
      key(new CompactSessionCommand('t', 's', strategy, null, 'cl100k_base', false)),
    ];
    expect(new Set([key(base()), ...different]).size).toBe(different.length + 1);
    expect(key(base({ origin: 'auto' }))).toBe(key(base()));
    // a redelivery of a transport command in flight shares its pass
    expect(key(base({ commandId: 'cmd-1' }))).toBe(key(new CompactSessionCommand('t', 's', strategy, null, 'chars', false, 'command', 'cmd-1', true)));
  });
});
