/**
 * Every summarizer call's cost shows somewhere (DESIGN §3.7, §4: a decision records the
 * summarizer's identity and usage). A pass that called the summarizer and then did not use the
 * reply (planned again after the session moved on, erased meanwhile, another pass's decision found
 * first, or `conflict`) reports that call: in the decision it finally writes (`summarizer` sums
 * every call, `summarizer.discarded` the unused part), in its answer (`discardedSummarizerCalls`,
 * also when nothing is written) and to the metrics ({@link SummarizerCallsSpent}, also when the
 * command ends in an error).
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, parseTrigger, type Strategy, type SummaryRequest, type Trigger } from '@lib/compaction';
import { EventStoreUnavailableError, SqliteEventStore, type AppendOptions, type EventData, type EventStore } from '@lib/event-store';
import { COMPACTION_COMPLETED, COMPACTION_FAILED, type CompactionCompletedData, type SummarizerIdentity } from '../events/session-stream-events';
import type { SummarizeOptions, Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { SessionNotFoundError } from '../errors';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { compactionHistoryItem } from '../read-side/queries/compaction-history-item';
import { listCompactions } from '../read-side/queries/compaction-history-query';
import { getSessionSummary } from '../read-side/queries/session-summary-query';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler, MAX_COMPACTION_ATTEMPTS, SummarizerCallsSpent } from './compact-session';
import { EraseSessionCommand, EraseSessionHandler } from './erase-session';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { SessionStateCache } from './session-state-cache';

/** A gate: `open()` lets whoever waits on `opened` go on. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Each call waits until the test answers it (`answer(n)`, 1-based, in any order); call n reports n×100 prompt and n×10 completion tokens. */
class HeldSummarizer implements Summarizer {
  readonly identity = { kind: 'openai-compatible' as const, model: 'held-model' };
  private readonly slots: Array<{ made: ReturnType<typeof gate>; answered: ReturnType<typeof gate> }> = [];
  calls = 0;
  /** The options of each call, in order (the abort signal, the calls spent by the pass's earlier attempts). */
  readonly options: SummarizeOptions[] = [];
  /** When set, runs before call n answers (e.g. an append that moves the stream on). */
  before?: (call: number) => Promise<void>;
  /** Calls answered at once, without waiting for `answer`. */
  free = false;
  /** Calls answered (a failure, as the model summarizer's aborted call) as soon as their signal is aborted. */
  abortable = false;

  private slot(n: number) {
    while (this.slots.length < n) this.slots.push({ made: gate(), answered: gate() });
    return this.slots[n - 1];
  }

  /** Resolves once call `n` has been made. */
  called(n: number): Promise<void> {
    return this.slot(n).made.opened;
  }

  /** Lets call `n` answer. */
  answer(n: number): void {
    this.slot(n).answered.open();
  }

  async summarize(request: SummaryRequest, options: SummarizeOptions = {}): Promise<SummarizerOutcome> {
    const n = ++this.calls;
    this.options.push(options);
    if (this.abortable) options.signal?.addEventListener('abort', () => this.answer(n));
    this.slot(n).made.open();
    if (!this.free) await this.slot(n).answered.opened;
    if (this.before) await this.before(n);
    if (this.abortable && options.signal?.aborted)
      return { ok: false, reason: 'aborted', failureKind: 'aborted', calls: 1, promptTokens: 0, completionTokens: 0 };
    return { ok: true, text: `recap ${n} of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: n * 100, completionTokens: n * 10 };
  }
}

const bigger = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 });
// the extractive-like test summarizer retries nothing, reports every call's usage and names no answered model
const usage = (calls: number, promptTokens: number, completionTokens: number) => ({
  calls,
  promptTokens,
  completionTokens,
  retries: 0,
  unreportedUsageCalls: 0,
  answeredModels: [] as string[],
});
const identity = { kind: 'openai-compatible', model: 'held-model' };

function setUp(store: EventStore = SqliteEventStore.open(':memory:')) {
  const cache = new SessionStateCache(store);
  const spent: SummarizerCallsSpent[] = [];
  const bus = { publish: (e: unknown) => e instanceof SummarizerCallsSpent && spent.push(e) } as unknown as EventBus;
  const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
  const summarizer = new HeldSummarizer();
  const compactions = new CompactSessionHandler(store, cache, summarizer, bus);
  const say = (id: string, type: 'user' | 'system' = 'user') =>
    append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id, type, text: `${type} text ${id}` } }]));
  const turns = async (from: number, to: number) => {
    for (let n = from; n < to; n++) await say(`u${n}`);
  };
  const decisions = async () =>
    (await store.readStream('session-t.s'))
      .filter((e) => e.type === COMPACTION_COMPLETED || e.type === COMPACTION_FAILED)
      .map((e) => e.data as CompactionCompletedData);
  // an automatic pass runs only while the policy that fired it is in force (passAuthority)
  const policy = (strategy: Strategy | null, trigger: Trigger | null) =>
    new SetCompactionPolicyHandler(store, cache, summarizer).execute(new SetCompactionPolicyCommand('t', 's', strategy, trigger, 'chars'));
  return { store, cache, summarizer, compactions, say, turns, decisions, spent, bus, policy };
}

/** Lets pending I/O callbacks and promises run. */
async function settle(rounds = 50): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('a summarizer call whose reply a pass does not use', () => {
  it('an automatic pass decides first; a commanded compaction with other parameters on the same revision, planned again, answers not-triggered: the answer and the metrics show its call', async () => {
    const { store, summarizer, compactions, turns, decisions, spent, policy } = setUp();
    try {
      await turns(0, 8);
      await policy(bigger, parseTrigger({ type: 'turn-count', maxTurns: 5 }));
      const auto = compactions.execute(new CompactSessionCommand('t', 's', bigger, parseTrigger({ type: 'turn-count', maxTurns: 5 }), 'chars', false, 'auto'));
      await summarizer.called(1);
      // another strategy and trigger: not the automatic pass's, so a pass of its own
      const other = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 });
      const commanded = compactions.execute(new CompactSessionCommand('t', 's', other, parseTrigger({ type: 'turn-count', maxTurns: 4 }), 'chars', false));
      await summarizer.called(2);
      summarizer.answer(1);
      expect(await auto).toMatchObject({ outcome: 'compacted', recorded: true });
      summarizer.answer(2);
      const answer = await commanded;

      expect(summarizer.calls).toBe(2);
      // planned again on the window the automatic pass left (3 turns): not triggered, nothing written
      expect(answer).toMatchObject({ outcome: 'not-triggered', recorded: false });
      expect(answer.discardedSummarizerCalls).toEqual({ ...identity, ...usage(1, 200, 20) });
      expect(await decisions()).toHaveLength(1);
      expect(spent.map((e) => ({ origin: e.origin, outcome: e.outcome, used: e.used, discarded: e.discarded }))).toEqual([
        { origin: 'auto', outcome: 'compacted', used: usage(1, 100, 10), discarded: undefined },
        { origin: 'command', outcome: 'not-triggered', used: undefined, discarded: usage(1, 200, 20) },
      ]);
      expect(spent[1].summarizer).toEqual(identity);
    } finally {
      await store.close();
    }
  });

  it("planned again and compacting with a second call: the decision records both calls, one of them discarded, and so do its answer and its history item; the second attempt is told the first one's call (SUMMARIZER_MAX_CALLS_PER_PASS bounds the pass, not each attempt; newcomer nccost63 F1)", async () => {
    const { store, summarizer, compactions, turns, decisions, spent, policy } = setUp();
    try {
      await turns(0, 8);
      await policy(bigger, null);
      const auto = compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false, 'auto'));
      await summarizer.called(1);
      const smaller = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 });
      const commanded = compactions.execute(new CompactSessionCommand('t', 's', smaller, null, 'chars', false));
      await summarizer.called(2);
      summarizer.answer(1);
      await auto;
      summarizer.answer(2);
      summarizer.answer(3);
      const answer = await commanded;

      expect(summarizer.calls).toBe(3);
      // call 2: the commanded pass's first attempt (nothing spent before); call 3: its second attempt, after call 2's reply was discarded
      expect(summarizer.options.map((o) => o.callsSpent)).toEqual([0, 0, 1]);
      const recorded: SummarizerIdentity = { ...identity, ...usage(2, 500, 50), discarded: usage(1, 200, 20) };
      expect(answer).toMatchObject({ outcome: 'compacted', recorded: true, summarizer: recorded });
      expect(answer.discardedSummarizerCalls).toEqual({ ...identity, ...usage(1, 200, 20) });
      const [, second] = await decisions();
      expect(second.summarizer).toEqual(recorded);
      expect(spent[1]).toMatchObject({ outcome: 'compacted', used: usage(1, 300, 30), discarded: usage(1, 200, 20) });

      // the audit shows it: the compaction history (the read side's projection of the log)
      const readModels = ReadModelStore.open(':memory:');
      const projector = new SessionProjector(readModels);
      await projector.rebuild(store);
      const items = listCompactions(readModels, 't', 's')!.map(compactionHistoryItem);
      expect(items.map((i) => i.summarizer)).toEqual([
        { ...identity, calls: 1, retries: 0, unreportedUsageCalls: 0, usage: { promptTokens: 100, completionTokens: 10 }, answeredModels: [], discarded: null },
        {
          ...identity,
          calls: 2,
          retries: 0,
          unreportedUsageCalls: 0,
          usage: { promptTokens: 500, completionTokens: 50 },
          answeredModels: [],
          discarded: { calls: 1, retries: 0, unreportedUsageCalls: 0, usage: { promptTokens: 200, completionTokens: 20 }, answeredModels: [] },
        },
      ]);
    } finally {
      await store.close();
    }
  });

  it('compactions commanded at once: the ones planned again that find nothing left to archive record a noop decision with their calls, and the audit (compaction history, session spend) shows them (ncauditor F2)', async () => {
    const { store, summarizer, compactions, turns, decisions, spent } = setUp();
    try {
      await turns(0, 8);
      const keep = (n: number) => parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: n, overlapSize: 1 });
      // three writers, other parameters each (so no pass is shared, nor replayed): every plan calls the model
      const writers = [3, 4, 5].map((n) => compactions.execute(new CompactSessionCommand('t', 's', keep(n), null, 'chars', false)));
      await summarizer.called(3);
      summarizer.answer(1);
      expect(await writers[0]).toMatchObject({ outcome: 'compacted', recorded: true });
      summarizer.answer(2);
      summarizer.answer(3);
      const [second, third] = [await writers[1], await writers[2]];

      expect(summarizer.calls).toBe(3);
      // planned again on the window the first left (3 events): nothing to archive, but their calls are recorded
      for (const [answer, n] of [
        [second, 2],
        [third, 3],
      ] as const) {
        const calls = usage(1, n * 100, n * 10);
        expect(answer).toMatchObject({
          outcome: 'noop',
          reason: 'within-limit',
          recorded: true,
          archived: [],
          summarizer: { ...identity, ...calls, discarded: calls },
        });
        expect(answer.compactionId).toEqual(expect.any(String));
        expect(answer.discardedSummarizerCalls).toEqual({ ...identity, ...calls });
      }
      const written = await decisions();
      expect(written.map((d) => [d.outcome, d.origin, d.compactionId])).toEqual([
        ['compacted', 'command', expect.any(String)],
        ['noop', 'command', second.compactionId],
        ['noop', 'command', third.compactionId],
      ]);
      expect(written[1].summarizer).toEqual({ ...identity, ...usage(1, 200, 20), discarded: usage(1, 200, 20) });
      expect(spent.map((e) => [e.outcome, e.used, e.discarded])).toEqual([
        ['compacted', usage(1, 100, 10), undefined],
        ['noop', undefined, usage(1, 200, 20)],
        ['noop', undefined, usage(1, 300, 30)],
      ]);

      // the audit: the compaction history lists the noops with their calls and usage, and the session's spend counts them
      const readModels = ReadModelStore.open(':memory:');
      await new SessionProjector(readModels).rebuild(store);
      const items = listCompactions(readModels, 't', 's')!.map(compactionHistoryItem);
      const discardedFigures = (n: number) => ({
        calls: 1,
        retries: 0,
        unreportedUsageCalls: 0,
        usage: { promptTokens: n * 100, completionTokens: n * 10 },
        answeredModels: [],
      });
      expect(items.map((i) => [i.outcome, i.reason, i.summarizer])).toEqual([
        ['compacted', null, { ...identity, ...discardedFigures(1), discarded: null }],
        ['noop', 'within-limit', { ...identity, ...discardedFigures(2), discarded: discardedFigures(2) }],
        ['noop', 'within-limit', { ...identity, ...discardedFigures(3), discarded: discardedFigures(3) }],
      ]);
      expect(getSessionSummary(readModels, 't', 's', 'chars')?.summarizerSpend).toMatchObject({
        calls: 3,
        usage: { promptTokens: 600, completionTokens: 60 },
        discarded: { calls: 2, usage: { promptTokens: 500, completionTokens: 50 } },
      });
    } finally {
      await store.close();
    }
  });

  it('another replica records the same compaction first: the replayed answer reports the call this pass made', async () => {
    const { store, summarizer, compactions, turns, decisions, bus, spent } = setUp();
    try {
      await turns(0, 8);
      // a second replica: its own state cache and handler, the same summarizer
      const replica = new CompactSessionHandler(store, new SessionStateCache(store), summarizer, bus);
      const first = compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false));
      await summarizer.called(1);
      const second = replica.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false));
      await summarizer.called(2);
      summarizer.answer(1);
      const a = await first;
      summarizer.answer(2);
      const b = await second;

      expect(b).toMatchObject({ replayed: true, compactionId: a.compactionId, summarizer: a.summarizer });
      expect(b.discardedSummarizerCalls).toEqual({ ...identity, ...usage(1, 200, 20) });
      expect(a.discardedSummarizerCalls).toBeUndefined();
      expect(await decisions()).toHaveLength(1);
      expect(spent[1]).toMatchObject({ outcome: 'compacted', used: undefined, discarded: usage(1, 200, 20) });
    } finally {
      await store.close();
    }
  });

  it('a system message appended while the model runs (nclongrun F1): the pass is written at the new revision with its one call, nothing discarded, the system message it superseded archived', async () => {
    const { store, summarizer, compactions, say, turns, decisions } = setUp();
    try {
      await say('sys0', 'system');
      await turns(0, 8);
      summarizer.free = true;
      summarizer.before = async (n) => {
        await say(`sys${n}`, 'system');
      };
      const answer = await compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false));
      expect(summarizer.calls).toBe(1);
      expect(answer).toMatchObject({ outcome: 'compacted', recorded: true });
      expect(answer.discardedSummarizerCalls).toBeUndefined();
      const [decision] = await decisions();
      expect(decision.keptIds).toEqual([expect.any(String), 'u5', 'u6', 'u7', 'sys1']);
      expect(decision.summarizer?.discarded).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('the stream moves on during every call in a way no rebase survives: conflict, and the answer reports every call', async () => {
    const { store, summarizer, compactions, say, turns, decisions, spent } = setUp();
    try {
      await turns(0, 8);
      summarizer.free = true;
      // another compaction decided meanwhile each time (a sliding window over two more turns): no pass may be rebased onto it
      const sliding = parseStrategy({ type: 'sliding-window', maxEvents: 6 });
      summarizer.before = async (n) => {
        await say(`late${n}a`);
        await say(`late${n}b`);
        expect(await compactions.execute(new CompactSessionCommand('t', 's', sliding, null, 'chars', false))).toMatchObject({ outcome: 'compacted' });
      };
      const answer = await compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false));
      expect(summarizer.calls).toBe(MAX_COMPACTION_ATTEMPTS);
      expect(answer).toMatchObject({ outcome: 'conflict', recorded: false });
      expect(answer.discardedSummarizerCalls).toEqual({ ...identity, ...usage(4, 1000, 100) });
      // the only decisions are the sliding windows', 4
      expect((await decisions()).map((d) => d.strategy.type)).toEqual(Array(MAX_COMPACTION_ATTEMPTS).fill('sliding-window'));
      expect(spent.map((e) => [e.outcome, e.used, e.discarded])).toEqual([['conflict', undefined, usage(4, 1000, 100)]]);
    } finally {
      await store.close();
    }
  });

  // Its call aborted by the erasure (the model summarizer's call returns at once, before the erasure has written its record:
  // newcomer nccost63 F2, ncrecheck63 F2), or one that answers all the same (a summarizer that ignores the signal).
  it.each([
    ['answered all the same', false],
    ['aborted at once', true],
  ])(
    'the session is erased while the summarizer runs (its call %s): the signal is aborted, the command answers the erased-session 404 (erasedAt) carrying the call, and the metrics still get it',
    async (_how, abortable) => {
      const { store, cache, summarizer, turns, spent, bus } = setUp();
      const readModels = ReadModelStore.open(':memory:');
      const projector = new SessionProjector(readModels);
      const compactions = new CompactSessionHandler(store, cache, summarizer, bus, undefined, undefined, readModels);
      projector.start(store);
      try {
        await turns(0, 8);
        summarizer.abortable = abortable;
        const pass = compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false)).catch((e: unknown) => e);
        await summarizer.called(1);
        const signal = summarizer.options[0].signal!;
        expect(signal.aborted).toBe(false);
        const erased = await new EraseSessionHandler(store, cache, projector).execute(new EraseSessionCommand('t', 's'));
        expect(signal.aborted).toBe(true);
        summarizer.answer(1);
        const err = await pass;
        expect(err).toBeInstanceOf(SessionNotFoundError);
        // as GET /v1/sessions/{id} answers an erased id, plus the call the endpoint served (and billed)
        const call = abortable ? usage(1, 0, 0) : usage(1, 100, 10);
        expect((err as SessionNotFoundError).details).toEqual({ erasedAt: erased.erasedAt, discardedSummarizerCalls: { ...identity, ...call } });
        expect((err as SessionNotFoundError).message).toContain(`was erased at ${erased.erasedAt}`);
        expect(spent.map((e) => [e.outcome, e.used, e.discarded])).toEqual([['error', undefined, call]]);
      } finally {
        await projector.stop();
        await store.close();
      }
    },
  );

  it('the session is erased and written again while the summarizer runs: the command answers the erased-session 404 carrying the call, and writes nothing into the new life', async () => {
    const { store, cache, summarizer, compactions, turns, decisions, spent } = setUp();
    const projector = new SessionProjector(ReadModelStore.open(':memory:'));
    projector.start(store);
    try {
      await turns(0, 8);
      const pass = compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false));
      await summarizer.called(1);
      await new EraseSessionHandler(store, cache, projector).execute(new EraseSessionCommand('t', 's'));
      await turns(10, 18);
      summarizer.answer(1);
      summarizer.answer(2);
      const error = await pass.then(
        () => null,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(SessionNotFoundError);
      expect((error as SessionNotFoundError).details?.discardedSummarizerCalls).toEqual({ ...identity, ...usage(1, 100, 10) });
      expect(summarizer.calls).toBe(1);
      expect(await decisions()).toEqual([]);
      expect(spent.map((e) => ({ outcome: e.outcome, discarded: e.discarded }))).toEqual([{ outcome: 'error', discarded: usage(1, 100, 10) }]);
    } finally {
      await projector.stop();
      await store.close();
    }
  });

  describe('an automatic pass whose authority ends while the model runs (passAuthority) is abandoned: nothing written, its call discarded', () => {
    const trigger = parseTrigger({ type: 'turn-count', maxTurns: 2 });
    const autoPass = () => new CompactSessionCommand('t', 's', bigger, trigger, 'chars', false, 'auto');

    it.each([
      ['turned off', null],
      ['replaced', parseStrategy({ type: 'sliding-window', maxEvents: 4 })],
    ])('its policy %s: answers conflict, recorded false, with the call in discardedSummarizerCalls and the metrics (F1)', async (_case, next) => {
      const { store, summarizer, compactions, turns, decisions, spent, policy } = setUp();
      try {
        await policy(bigger, trigger);
        await turns(0, 8);
        const pass = compactions.execute(autoPass());
        await summarizer.called(1);
        await policy(next, next ? trigger : null);
        summarizer.answer(1);
        const answer = await pass;
        expect(answer).toMatchObject({ outcome: 'conflict', recorded: false, discardedSummarizerCalls: { ...identity, ...usage(1, 100, 10) } });
        expect(summarizer.calls).toBe(1);
        expect(await decisions()).toEqual([]);
        expect(spent.map((e) => ({ origin: e.origin, outcome: e.outcome, discarded: e.discarded }))).toEqual([
          { origin: 'auto', outcome: 'conflict', discarded: usage(1, 100, 10) },
        ]);
      } finally {
        await store.close();
      }
    });

    it('its session erased and written again with the same ids (no policy in the new life): the erased-session 404, nothing written in the new life (F2)', async () => {
      const { store, cache, summarizer, compactions, turns, decisions, spent, policy } = setUp();
      const projector = new SessionProjector(ReadModelStore.open(':memory:'));
      projector.start(store);
      try {
        await policy(bigger, trigger);
        await turns(0, 8);
        const pass = compactions.execute(autoPass());
        await summarizer.called(1);
        await new EraseSessionHandler(store, cache, projector).execute(new EraseSessionCommand('t', 's'));
        await turns(0, 8);
        summarizer.free = true;
        summarizer.answer(1);
        await expect(pass).rejects.toBeInstanceOf(SessionNotFoundError);
        expect(summarizer.calls).toBe(1);
        expect(await decisions()).toEqual([]);
        expect(spent.map((e) => ({ origin: e.origin, outcome: e.outcome, discarded: e.discarded }))).toEqual([
          { origin: 'auto', outcome: 'error', discarded: usage(1, 100, 10) },
        ]);
      } finally {
        await projector.stop();
        await store.close();
      }
    });
  });

  it('the store fails the append after the call: the command throws, and the metrics still get the call', async () => {
    const base = SqliteEventStore.open(':memory:');
    let failing = false;
    const store: EventStore = Object.assign(Object.create(base) as EventStore, {
      appendToStream: (stream: string, events: EventData[], options: AppendOptions) => {
        if (failing) return Promise.reject(new EventStoreUnavailableError('store down'));
        return base.appendToStream(stream, events, options);
      },
    });
    const { summarizer, compactions, turns, spent } = setUp(store);
    try {
      await turns(0, 8);
      summarizer.free = true;
      summarizer.before = () => {
        failing = true;
        return Promise.resolve();
      };
      const thrown = await compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false)).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(EventStoreUnavailableError);
      expect(spent.map((e) => [e.outcome, e.used, e.discarded])).toEqual([['error', undefined, usage(1, 100, 10)]]);
    } finally {
      await base.close();
    }
  });

  it('nothing discarded: the decision records its one call without `discarded`, the answer has no discardedSummarizerCalls, and requests sharing the pass publish nothing more', async () => {
    const { store, summarizer, compactions, turns, decisions, spent } = setUp();
    try {
      await turns(0, 8);
      const answers = [0, 1, 2].map(() => compactions.execute(new CompactSessionCommand('t', 's', bigger, null, 'chars', false)));
      await summarizer.called(1);
      await settle();
      summarizer.answer(1);
      const all = await Promise.all(answers);
      expect(summarizer.calls).toBe(1);
      for (const a of all) {
        expect(a.summarizer).toEqual({ ...identity, ...usage(1, 100, 10) });
        expect(a.discardedSummarizerCalls).toBeUndefined();
      }
      expect((await decisions())[0].summarizer).toEqual({ ...identity, ...usage(1, 100, 10) });
      expect(spent.map((e) => [e.outcome, e.used, e.discarded])).toEqual([['compacted', usage(1, 100, 10), undefined]]);
    } finally {
      await store.close();
    }
  });
});
