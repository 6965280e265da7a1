/**
 * Random session logs written by the real write-side handlers, for property specs over what the
 * log and its projections promise (time travel, the compaction audit): turns with tool calls
 * answered, left open and abandoned; late answers to abandoned calls (archived on arrival when a
 * compaction archived their call), alone or with the next turn; new system prompts; compactions
 * by the strategies of {@link randomLogOps}, with summaries and failed summaries.
 */
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent, type Strategy, type SummaryRequest } from '@lib/compaction';
import type { EventStore } from '@lib/event-store';
import type { Summarizer, SummarizerOutcome } from '../../libs/session/src/summarizers/summarizer';
import { AppendSessionEventsHandler } from '../../libs/session/src/write-side/append-session-events';
import { appendAs } from '../../libs/session/src/write-side/testing/append-as';
import { CompactSessionCommand, CompactSessionHandler } from '../../libs/session/src/write-side/compact-session';
import { SessionStateCache } from '../../libs/session/src/write-side/session-state-cache';

/** Replies with a summary naming the ids it covers, or fails, as the op says. */
class ScriptedSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'scripted' };
  fail = false;
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    if (this.fail) return { ok: false, reason: 'scripted failure', calls: 1, promptTokens: 0, completionTokens: 0 };
    return { ok: true, text: `summary of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 1, completionTokens: 1 };
  }
}

/**
 * One step of a random log: a turn (a user message; `answered` tool calls each with its result;
 * then an assistant answer, or a call left `open`; with `withLate`, led by a late answer to an
 * abandoned call; with `system`, led by a new system prompt), a late answer alone, or a compaction.
 */
export type RandomLogOp =
  | { kind: 'turn'; answered: number; open: boolean; withLate: boolean; system: boolean }
  | { kind: 'late' }
  | { kind: 'compact'; strategy: Strategy; fail: boolean };

/** What {@link randomLogOps} draws: up to `maxAnswered` answered calls per turn, system prompts or not, rolling summaries or not. */
export interface RandomLogShape {
  maxAnswered: number;
  systemPrompts: boolean;
  rollingSummary: boolean;
}

/** The arbitrary of one {@link RandomLogOp} (turns 4 : late answers 2 : compactions 2). */
export function randomLogOps(shape: RandomLogShape): fc.Arbitrary<RandomLogOp> {
  const strategies: fc.Arbitrary<Strategy>[] = [
    fc.integer({ min: 1, max: 4 }).map((maxEvents) => parseStrategy({ type: 'sliding-window', maxEvents })),
    fc.integer({ min: 1, max: 2 }).map((maxTurns) => parseStrategy({ type: 'turn-window', maxTurns })),
    fc.integer({ min: 1, max: 120 }).map((maxTokens) => parseStrategy({ type: 'token-count', maxTokens })),
    fc.integer({ min: 2, max: 4 }).map((maxEventsToKeep) => parseStrategy({ type: 'recursive-summarization', maxEventsToKeep, overlapSize: 1 })),
  ];
  if (shape.rollingSummary)
    strategies.push(fc.integer({ min: 1, max: 2 }).map((keepTurns) => parseStrategy({ type: 'rolling-summary', keepTurns, summarizeAtTokens: 10 })));
  const turn = fc.record({
    kind: fc.constant('turn' as const),
    answered: fc.integer({ min: 0, max: shape.maxAnswered }),
    open: fc.boolean(),
    withLate: fc.boolean(),
    system: shape.systemPrompts ? fc.boolean() : fc.constant(false),
  });
  return fc.oneof(
    { weight: 4, arbitrary: turn },
    { weight: 2, arbitrary: fc.constant({ kind: 'late' as const }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('compact' as const), strategy: fc.oneof(...strategies), fail: fc.boolean() }) },
  );
}

/**
 * Ops that, written after any others, leave a late answer archived on arrival in the log: a call
 * left open, a turn after it, a compaction keeping only the last event (it archives every call
 * still open), then a late answer alone (to the oldest call left open: archived by then).
 */
export const LATE_ANSWER_ARCHIVED_ON_ARRIVAL: readonly RandomLogOp[] = [
  { kind: 'turn', answered: 0, open: true, withLate: false, system: false },
  { kind: 'turn', answered: 0, open: false, withLate: false, system: false },
  { kind: 'compact', strategy: parseStrategy({ type: 'sliding-window', maxEvents: 1 }), fail: false },
  { kind: 'late' },
];

/**
 * Random logs that each hold a late answer archived on arrival: `op`s before and after
 * {@link LATE_ANSWER_ARCHIVED_ON_ARRIVAL} (up to `maxLength` each). For a property's coverage of
 * on-arrival archives that does not rest on chance (a count of random logs that happened to hold
 * them fell to its floor in some seeds).
 */
export function logsWithLateAnswerArchived(op: fc.Arbitrary<RandomLogOp>, maxLength: number): fc.Arbitrary<RandomLogOp[]> {
  return fc.tuple(fc.array(op, { maxLength }), fc.array(op, { maxLength })).map(([before, after]) => [...before, ...LATE_ANSWER_ARCHIVED_ON_ARRIVAL, ...after]);
}

/**
 * Writes `ops` to session `sessionId` of tenant `t` in `store` through a fresh state cache and the
 * real append and compaction handlers (a compaction before the first turn is skipped). Resolves
 * once every op is written; rejects with the first handler error.
 */
export async function writeRandomSessionLog(store: EventStore, sessionId: string, ops: readonly RandomLogOp[]): Promise<void> {
  const cache = new SessionStateCache(store);
  const summarizer = new ScriptedSummarizer();
  const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
  const compact = new CompactSessionHandler(store, cache, summarizer);
  // Call ids left open, oldest first, and whether a compaction ran since (it may have archived them).
  const open: Array<{ id: string; compacted: boolean }> = [];
  let n = 0;
  const lateAnswer = (): SessionEvent[] => {
    const at = open.findIndex((c) => c.compacted);
    if (at < 0) return [];
    const [{ id }] = open.splice(at, 1);
    return [{ id: `late-${id}`, type: 'tool', responses: [{ toolCallId: id, name: 'g', data: `late ${id}` }] }];
  };
  const send = (events: SessionEvent[]) => appendAs(append, sessionId, events);
  for (const op of ops) {
    if (op.kind === 'compact') {
      if (n === 0) continue;
      summarizer.fail = op.fail;
      await compact.execute(new CompactSessionCommand('t', sessionId, op.strategy, null, 'chars', false));
      for (const c of open) c.compacted = true;
      continue;
    }
    const late = op.kind === 'late' || op.withLate ? lateAnswer() : [];
    if (op.kind === 'late') {
      if (late.length > 0) await send(late);
      continue;
    }
    const m = n++;
    // A new system prompt supersedes the last one: every later pass archives that one.
    const events: SessionEvent[] = [...late, ...(op.system ? [{ id: `s${m}`, type: 'system' as const, text: `rules ${m}` }] : [])];
    events.push({ id: `u${m}`, type: 'user', text: `question ${m}` });
    for (let i = 0; i < op.answered; i++) {
      // Call ids are reused across turns once answered, as real agents do.
      events.push({ id: `c${m}-${i}`, type: 'assistant', text: null, toolCalls: [{ id: `call-${i}`, name: 'f', arguments: '{}' }] });
      events.push({ id: `t${m}-${i}`, type: 'tool', responses: [{ toolCallId: `call-${i}`, name: 'f', data: `result ${m}` }] });
    }
    if (op.open) {
      events.push({ id: `o${m}`, type: 'assistant', text: null, toolCalls: [{ id: `open-${m}`, name: 'g', arguments: '{}' }] });
      open.push({ id: `open-${m}`, compacted: false });
    } else events.push({ id: `a${m}`, type: 'assistant', text: `answer ${m}` });
    await send(events);
  }
}
