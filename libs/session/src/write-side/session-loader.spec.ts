/**
 * The write side's session state: the checkpointed load (O(active window + events since the last
 * compaction)) and the cached load must equal a fold of the whole stream, whatever sequence of
 * appends, compactions (including failed summaries) and policy changes produced it, down to the
 * global position of its last event.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent, type Strategy, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { foldSessionWindow, orderedWindow, type SessionWindowState } from '../domain/session-window';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { foldSessionUpTo, loadSessionWindow } from './session-loader';
import { SessionStateCache } from './session-state-cache';

/** Replies with a summary, or fails, as the test's script says. */
class ScriptedSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'scripted' };
  /** `true`: the model fails; `shutdown`: the call is aborted by the service's shutdown (as `abortedAtShutdown` answers). */
  fail: boolean | 'shutdown' = false;
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    if (this.fail === 'shutdown')
      return { ok: false, reason: 'aborted: the service was shutting down', interrupted: 'shutdown', calls: 1, promptTokens: 0, completionTokens: 0 };
    if (this.fail) return { ok: false, reason: 'scripted failure', calls: 1, promptTokens: 0, completionTokens: 0 };
    return { ok: true, text: `summary of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 1, completionTokens: 1 };
  }
}

type Op =
  | { kind: 'turn'; toolCalls: number; openCall: boolean; system: boolean }
  | { kind: 'compact'; strategy: Strategy; fail: boolean | 'shutdown' }
  | { kind: 'policy' };

const strategyArb: fc.Arbitrary<Strategy> = fc.oneof(
  fc.integer({ min: 1, max: 6 }).map((maxEvents) => parseStrategy({ type: 'sliding-window', maxEvents })),
  fc.integer({ min: 1, max: 3 }).map((maxTurns) => parseStrategy({ type: 'turn-window', maxTurns })),
  fc.integer({ min: 1, max: 200 }).map((maxTokens) => parseStrategy({ type: 'token-count', maxTokens })),
  fc.integer({ min: 2, max: 6 }).map((maxEventsToKeep) => parseStrategy({ type: 'recursive-summarization', maxEventsToKeep, overlapSize: 1 })),
  fc.integer({ min: 1, max: 2 }).map((keepTurns) => parseStrategy({ type: 'rolling-summary', keepTurns, summarizeAtTokens: 10 })),
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('turn' as const), toolCalls: fc.integer({ min: 0, max: 2 }), openCall: fc.boolean(), system: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('compact' as const), strategy: strategyArb, fail: fc.constantFrom(false, true, 'shutdown' as const) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'policy' as const }) },
);

function turnEvents(n: number, op: Extract<Op, { kind: 'turn' }>): SessionEvent[] {
  const events: SessionEvent[] = [];
  if (op.system) events.push({ id: `s${n}`, type: 'system', text: `system ${n}` });
  events.push({ id: `u${n}`, type: 'user', text: `question ${n}` });
  for (let i = 0; i < op.toolCalls; i++) {
    // Call ids are reused across turns on purpose, as real agents do once a call is answered.
    events.push({ id: `c${n}-${i}`, type: 'assistant', text: null, toolCalls: [{ id: `call-${i}`, name: 'f', arguments: '{}' }] });
    events.push({ id: `t${n}-${i}`, type: 'tool', responses: [{ toolCallId: `call-${i}`, name: 'f', data: `result ${n}` }] });
  }
  if (op.openCall) events.push({ id: `o${n}`, type: 'assistant', text: null, toolCalls: [{ id: `open-${n}`, name: 'g', arguments: '{}' }] });
  else events.push({ id: `a${n}`, type: 'assistant', text: `answer ${n}` });
  return events;
}

function comparable(state: SessionWindowState | null) {
  if (!state || state.revision === null) return null;
  return {
    revision: state.revision?.toString(),
    // the global position of the last event: what an answer decided on the state stands on
    position: state.position?.toString(),
    window: orderedWindow(state).map((e) => [e.event.id, e.revision.toString(), e.anchorRevision.toString()]),
    policy: state.policy?.strategy ?? null,
    policyRevision: state.policyRevision?.toString() ?? null,
    lastCompaction: state.lastCompaction?.compactionId ?? null,
    consecutiveFailures: state.consecutiveFailures,
    eventsSinceCompaction: state.eventsSinceCompaction,
  };
}

/** `store` with a counter of the events its readStream returned (`read()`; `reset()` sets it to 0). */
function countingReads(store: EventStore): { store: EventStore; read: () => number; reset: () => void } {
  let read = 0;
  const counting: EventStore = Object.create(store);
  counting.readStream = async (stream, options) => {
    const events = await store.readStream(stream, options);
    read += events.length;
    return events;
  };
  return { store: counting, read: () => read, reset: () => (read = 0) };
}

describe('session state loading', () => {
  let dir: string;
  let store: EventStore;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loader-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('checkpointed and cached loads equal a fold of the whole stream', async () => {
    let run = 0;
    let totalCompactions = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const sessionId = `p${run++}`;
        const key = sessionKey('t', sessionId);
        const cache = new SessionStateCache(store);
        const summarizer = new ScriptedSummarizer();
        const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
        const compact = new CompactSessionHandler(store, cache, summarizer);
        const policy = new SetCompactionPolicyHandler(store, cache, summarizer);
        let n = 0;
        let compactions = 0;
        for (const op of ops) {
          if (op.kind === 'turn') {
            const events = turnEvents(n++, op);
            await append.execute(
              new AppendSessionEventsCommand(
                't',
                sessionId,
                events.map((event) => ({ event })),
              ),
            );
          } else if (op.kind === 'compact' && n > 0) {
            summarizer.fail = op.fail;
            const answer = await compact.execute(new CompactSessionCommand('t', sessionId, op.strategy, null, 'chars', false));
            if (answer.outcome === 'compacted' || answer.outcome === 'failed') compactions++;
          } else if (op.kind === 'policy') {
            await policy.execute(new SetCompactionPolicyCommand('t', sessionId, parseStrategy({ type: 'sliding-window' }), null, 'chars'));
          }
        }
        const full = foldSessionWindow(await store.readStream(sessionStream(key)));
        expect(comparable(await loadSessionWindow(store, key))).toEqual(comparable(full));
        expect(comparable(await new SessionStateCache(store).load(key))).toEqual(comparable(full));
        expect(comparable(await cache.load(key))).toEqual(comparable(full));
        totalCompactions += compactions;
      }),
      { numRuns: 40 },
    );
    // The property is only meaningful if checkpoints were exercised: a floor far below chance (over 60 seeds the
    // 40 runs held 15 to 44 passes that compacted or failed, median 26).
    expect(totalCompactions).toBeGreaterThan(3);
  });

  // A pass aborted at shutdown (model call still running at half of SHUTDOWN_TIMEOUT_MS) counted as
  // the model's failure: a few restarts during slow model calls put a healthy session into backoff.
  it('does not count a failed pass the shutdown interrupted toward the backoff: not in this process, not after a restart', async () => {
    const key = sessionKey('t', 'interrupted');
    const cache = new SessionStateCache(store);
    const summarizer = new ScriptedSummarizer();
    const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
    const compact = new CompactSessionHandler(store, cache, summarizer);
    const strategy = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 });
    const pass = async (fail: boolean | 'shutdown', n: number) => {
      const events = turnEvents(n, { kind: 'turn', toolCalls: 0, openCall: false, system: false });
      await append.execute(
        new AppendSessionEventsCommand(
          't',
          'interrupted',
          events.map((event) => ({ event })),
        ),
      );
      summarizer.fail = fail;
      expect((await compact.execute(new CompactSessionCommand('t', 'interrupted', strategy, null, 'chars', false, 'auto'))).outcome).toBe('failed');
      // in this process (its cache), and after a restart (a load from the log's last decision, a fold of the whole log)
      const full = foldSessionWindow(await store.readStream(sessionStream(key)));
      return [(await cache.load(key))!.consecutiveFailures, (await loadSessionWindow(store, key))!.consecutiveFailures, full.consecutiveFailures];
    };
    await append.execute(
      new AppendSessionEventsCommand(
        't',
        'interrupted',
        turnEvents(100, { kind: 'turn', toolCalls: 0, openCall: false, system: false }).map((event) => ({ event })),
      ),
    );
    // the policy whose automatic passes these are (an automatic pass runs only while it is in force)
    await new SetCompactionPolicyHandler(store, cache, summarizer).execute(new SetCompactionPolicyCommand('t', 'interrupted', strategy, null, 'chars'));
    expect(await pass(true, 1)).toEqual([1, 1, 1]);
    expect(await pass(true, 2)).toEqual([2, 2, 2]);
    expect(await pass('shutdown', 3)).toEqual([2, 2, 2]);
    const [last] = await store.readStream(sessionStream(key), { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    expect(last.data).toMatchObject({ reason: 'summarizer failed: aborted: the service was shutting down', interrupted: 'shutdown' });
    expect(await pass(true, 4)).toEqual([3, 3, 3]);
  });

  it('folds an append of this process into the cache: the next load reads no event back', async () => {
    const { store: counting, read, reset } = countingReads(store);
    const cache = new SessionStateCache(counting);
    const append = new AppendSessionEventsHandler(counting, cache, { publish: () => undefined } as unknown as EventBus);
    const turn = (n: number) =>
      new AppendSessionEventsCommand(
        't',
        'warm',
        turnEvents(n, { kind: 'turn', toolCalls: 1, openCall: false, system: false }).map((event, i) => ({ event, field: `events[${i}]` })),
      );
    await append.execute(turn(0));
    await cache.load(sessionKey('t', 'warm'));
    reset();
    for (let n = 1; n <= 5; n++) await append.execute(turn(n));
    expect(read()).toBe(0);
    const full = foldSessionWindow(await store.readStream(sessionStream(sessionKey('t', 'warm'))));
    expect(comparable(await cache.load(sessionKey('t', 'warm')))).toEqual(comparable(full));
  });

  it('reads only the active window and the events since the last compaction', async () => {
    const key = sessionKey('t', 'long');
    const cache = new SessionStateCache(store);
    const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
    const compact = new CompactSessionHandler(store, cache, new ScriptedSummarizer());
    for (let n = 0; n < 60; n++) {
      const events = turnEvents(n, { kind: 'turn', toolCalls: 1, openCall: false, system: false });
      await append.execute(
        new AppendSessionEventsCommand(
          't',
          'long',
          events.map((event) => ({ event })),
        ),
      );
      if (n % 10 === 9)
        await compact.execute(new CompactSessionCommand('t', 'long', parseStrategy({ type: 'turn-window', maxTurns: 2 }), null, 'chars', false));
    }
    const since = turnEvents(60, { kind: 'turn', toolCalls: 0, openCall: false, system: false });
    await append.execute(
      new AppendSessionEventsCommand(
        't',
        'long',
        since.map((event) => ({ event })),
      ),
    );

    const { store: counting, read } = countingReads(store);
    const state = (await loadSessionWindow(counting, key))!;
    const total = (await store.readStream(sessionStream(key))).length;
    // Active window (2 turns of 4 events + 2 new events) plus the tail since the last compaction
    // and one backward page (32 events): far fewer than the whole stream.
    expect(state.active.size).toBe(10);
    expect(total).toBeGreaterThan(250);
    expect(read()).toBeLessThanOrEqual(32 + 10 + 2);
  });

  // Full CI run (bad-input e2e): time travel to a revision far past the head walked down one empty page of
  // 1,024 revisions at a time, never giving the event loop a turn (the jest worker spun until CI's time ran out).
  it('reads a few pages for a revision far past the head, and for one after the erased revisions of an earlier life', async () => {
    const key = sessionKey('t', 'far');
    const cache = new SessionStateCache(store);
    const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
    for (let n = 0; n < 3; n++)
      await append.execute(
        new AppendSessionEventsCommand(
          't',
          'far',
          turnEvents(n, { kind: 'turn', toolCalls: 0, openCall: false, system: false }).map((event) => ({ event })),
        ),
      );
    const whole = (await loadSessionWindow(store, key))!;
    let calls = 0;
    const counting: EventStore = Object.create(store);
    counting.readStream = async (stream, options) => {
      if (++calls > 50) throw new Error(`readStream called ${calls} times for a ${whole.active.size}-event session`);
      return store.readStream(stream, options);
    };
    for (const upTo of [2n ** 62n, 2n ** 20n, 4096n]) {
      calls = 0;
      const state = (await foldSessionUpTo(counting, sessionStream(key), upTo))!;
      expect(orderedWindow(state).map((e) => e.event.id)).toEqual(orderedWindow(whole).map((e) => e.event.id));
      expect(calls).toBeLessThanOrEqual(2);
    }
    // A second life after an erasure (its revisions continue after the erased ones): read at and past its head.
    await store.deleteStream(sessionStream(key));
    await append.execute(
      new AppendSessionEventsCommand(
        't',
        'far',
        turnEvents(9, { kind: 'turn', toolCalls: 0, openCall: false, system: false }).map((event) => ({ event })),
      ),
    );
    const second = (await loadSessionWindow(store, key))!;
    const head = (await store.readStream(sessionStream(key), { direction: 'backwards', fromRevision: 'end', maxCount: 1 }))[0].revision;
    expect(second.active.size).toBeGreaterThan(0);
    for (const upTo of [head, head + 1n, 2n ** 62n]) {
      calls = 0;
      const state = (await foldSessionUpTo(counting, sessionStream(key), upTo))!;
      expect(orderedWindow(state).map((e) => e.event.id)).toEqual(orderedWindow(second).map((e) => e.event.id));
      expect(calls).toBeLessThanOrEqual(2);
    }
  });
});
