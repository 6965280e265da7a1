/**
 * The same compaction decided twice at once (two replicas, or a command delivered twice): one pass
 * records it, the other finds it recorded and answers it as recorded (DESIGN §3.6), with what it
 * archived, its summary and the position of its last event, not an empty `archived` beside
 * non-zero savings. The same command asked again after a failed pass is not a duplicate: it runs a
 * new pass.
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, parseTrigger, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { COMPACTION_COMPLETED, COMPACTION_FAILED } from '../events/session-stream-events';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';

/** Answers every call once `open()` is called, with a summary of what it was given, numbered by call. */
class GatedSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'gated' };
  private readonly gate: Promise<void>;
  open: () => void = () => undefined;
  calls = 0;
  constructor() {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    const call = ++this.calls;
    await this.gate;
    // Each call's own text: the two decisions differ, so the store takes the second for another decision with the same ids (not a resend of the first).
    return { ok: true, text: `recap ${call} of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 1, completionTokens: 1 };
  }
}

/** Session `s` of tenant `t` with 8 user questions appended (and the handler that appended them), a gated summarizer and a recursive-summarization strategy keeping 3 events. */
async function eightQuestions(store: SqliteEventStore) {
  const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus);
  for (let n = 0; n < 8; n++) await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
  return { append, summarizer: new GatedSummarizer(), strategy: parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 }) };
}

/** `command` handled by two processes at once (own caches), both planning on the same revision: the pass that wrote the decision and the one answered as its replay. */
async function passTwiceAtOnce(store: SqliteEventStore, summarizer: GatedSummarizer, command: CompactSessionCommand) {
  const passes = [0, 1].map(() => new CompactSessionHandler(store, new SessionStateCache(store), summarizer).execute(command));
  while (summarizer.calls < 2) await new Promise((resolve) => setImmediate(resolve));
  summarizer.open();
  const [first, second] = await Promise.all(passes);
  const [written, replayed] = first.replayed ? [second, first] : [first, second];
  return { written, replayed };
}

describe('a compaction decided twice at once', () => {
  it('answers the second pass with the decision as recorded: same archived ids, summary and position', async () => {
    const store = SqliteEventStore.open(':memory:');
    try {
      const { summarizer, strategy } = await eightQuestions(store);
      // Two processes (own caches) plan the same pass on the same revision.
      const { written, replayed } = await passTwiceAtOnce(store, summarizer, new CompactSessionCommand('t', 's', strategy, null, 'chars', false));
      expect(written.replayed).toBeUndefined();
      expect(replayed.replayed).toBe(true);
      expect(written.archived.length).toBeGreaterThan(0);
      const asRecorded = (a: typeof written) => ({
        compactionId: a.compactionId,
        outcome: a.outcome,
        archived: a.archived,
        kept: a.kept,
        summary: a.summary,
        tokensBefore: a.tokensBefore,
        tokensAfter: a.tokensAfter,
        tokensEstimatedSaved: a.tokensEstimatedSaved,
        position: a.position,
        recorded: a.recorded,
      });
      expect(asRecorded(replayed)).toEqual(asRecorded(written));
    } finally {
      await store.close();
    }
  });
});

describe('a compaction with a trigger answered as a replay', () => {
  it("carries the original answer's triggerStillFires and turnsAfter (two replicas at once, and a transport command delivered again)", async () => {
    const store = SqliteEventStore.open(':memory:');
    try {
      const { append, summarizer, strategy } = await eightQuestions(store);
      // Fires on 2 turns: the 3 kept events leave it firing (the original answer says so, with the turns after the pass).
      const trigger = parseTrigger({ type: 'turn-count', maxTurns: 2 });
      const command = () => new CompactSessionCommand('t', 's', strategy, trigger, 'chars', false);
      const { written, replayed } = await passTwiceAtOnce(store, summarizer, command());
      expect(written.replayed).toBeUndefined();
      expect(replayed.replayed).toBe(true);
      expect([written.triggerStillFires, written.turnsAfter]).toEqual([true, 3]);
      const stillFiring = (a: typeof written) => ({ compactionId: a.compactionId, triggerStillFires: a.triggerStillFires, turnsAfter: a.turnsAfter });
      expect(stillFiring(replayed)).toEqual(stillFiring(written));
      // A transport command delivered again after its decision was recorded: answered as a replay, by another process.
      for (let n = 8; n < 12; n++)
        await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
      const delivered = (redelivered: boolean) =>
        new CompactSessionHandler(store, new SessionStateCache(store), summarizer).execute(
          new CompactSessionCommand('t', 's', strategy, trigger, 'chars', false, 'command', 'message-1', redelivered),
        );
      const original = await delivered(false);
      expect([original.outcome, original.replayed, original.triggerStillFires]).toEqual(['compacted', undefined, true]);
      const again = await delivered(true);
      expect(again.replayed).toBe(true);
      expect(stillFiring(again)).toEqual(stillFiring(original));
    } finally {
      await store.close();
    }
  });
});

/** Answers each call with the next of `outcomes` (the last one repeats), counting the calls. */
class ScriptedSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'scripted' };
  calls = 0;
  constructor(private readonly outcomes: SummarizerOutcome[]) {}
  async summarize(): Promise<SummarizerOutcome> {
    return this.outcomes[Math.min(this.calls++, this.outcomes.length - 1)];
  }
}

describe('the same compaction asked again after a failed pass', () => {
  it('runs a new pass each time (a new summarizer call, a new decision) until one succeeds', async () => {
    const store = SqliteEventStore.open(':memory:');
    try {
      const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus);
      for (let n = 0; n < 8; n++)
        await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
      const failure = (reason: string): SummarizerOutcome => ({ ok: false, reason, calls: 1, promptTokens: 0, completionTokens: 0 });
      const summarizer = new ScriptedSummarizer([
        failure('blank reply'),
        failure('HTTP 500'),
        { ok: true, text: 'the recap', calls: 1, promptTokens: 1, completionTokens: 1 },
      ]);
      const handler = new CompactSessionHandler(store, new SessionStateCache(store), summarizer);
      const strategy = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 });
      const compact = () => handler.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false));

      const blank = await compact();
      const error = await compact();
      const healthy = await compact();
      expect([blank, error, healthy].map((a) => [a.outcome, a.replayed, a.failure?.reason])).toEqual([
        ['failed', undefined, 'summarizer failed: blank reply'],
        ['failed', undefined, 'summarizer failed: HTTP 500'],
        ['compacted', undefined, undefined],
      ]);
      expect(summarizer.calls).toBe(3);
      expect(new Set([blank.compactionId, error.compactionId, healthy.compactionId]).size).toBe(3);
      expect(healthy.summary?.text).toBe('the recap');
      const log = await store.readStream('session-t.s');
      expect(log.filter((e) => e.type === COMPACTION_FAILED)).toHaveLength(2);
      expect(log.filter((e) => e.type === COMPACTION_COMPLETED)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
