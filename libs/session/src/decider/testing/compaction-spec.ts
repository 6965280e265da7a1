/**
 * The `when` half of compaction specs: runs the compaction decider's two steps the way the
 * handler does (plan → the summarizer, when the plan asks → decide), with a scripted summarizer,
 * and reports the events to append, the answer, and what the summarizer was asked.
 *
 * ```ts
 * given(user('u1'), reply('a1'), user('u2'))
 *   .when(compact(command(slidingWindow(1))))
 *   .then(({ events, answer }) => …);
 * ```
 */
import { parseStrategy, type CompactionFailureKind, type SummaryRequest, type Trigger } from '@lib/compaction';
import type { EventData } from '@lib/event-store';
import { foldSessionWindow, orderedWindow, type SessionWindowState } from '../../domain/session-window';
import { cloneSessionWindow } from '../../domain/clone-session-window';
import type { SummarizerOutcome, SummarizerUsage } from '../../summarizers/summarizer';
import { answerCompaction, type UnpositionedCompactionAnswer } from '../compaction-answer';
import { discardedSummarizerCalls } from '../summarizer-spend';
import { decideCompaction, planSessionCompaction, type CompactSession, type CompactionContext, type PlannedCompaction } from '../compaction-decider';

/** What one compaction decided. */
export interface CompactionRun {
  /** The decision events to append in one append; empty when the pass concluded without appending. */
  events: EventData[];
  /** The answer as the decider builds it (for an appended decision: at the revision of its last event, position 0; the handler fills a position the store did not tell). */
  answer: UnpositionedCompactionAnswer;
  /** Each request the summarizer was given, in order. */
  summarizerRequests: SummaryRequest[];
  /** The planned pass, when the pass appends (for rebase specs). */
  pass?: PlannedCompaction;
}

/** A summarizer reply with `text` (one call, no usage). */
export const summaryText = (text: string): SummarizerOutcome => ({ ok: true, text, calls: 1, promptTokens: 0, completionTokens: 0 });

/** A summarizer failure with `reason` and, when given, its `failureKind` (one call, no usage). */
export const summaryFailure = (reason: string, failureKind?: CompactionFailureKind): SummarizerOutcome => ({
  ok: false,
  reason,
  ...(failureKind ? { failureKind } : {}),
  calls: 1,
  promptTokens: 0,
  completionTokens: 0,
});

/** The context of every spec decision: a fixed time, and a summarizer named `scripted`. */
export const SPEC_CONTEXT: CompactionContext = {
  now: new Date('2026-11-30T12:00:01.000Z'),
  startedAt: new Date('2026-11-30T12:00:00.000Z'),
  summarizer: { kind: 'extractive', model: 'scripted' },
};

/** A compaction command of session `t`/`s` with `strategy` (parsed, defaults applied), costed with `chars`. */
export function compactCommand(
  strategy: Record<string, unknown>,
  options: Partial<Omit<CompactSession, 'strategy'>> & { trigger?: Trigger | null } = {},
): CompactSession {
  return {
    type: 'CompactSession',
    tenantId: 't',
    sessionId: 's',
    trigger: null,
    estimator: 'chars',
    dryRun: false,
    origin: 'command',
    ...options,
    strategy: parseStrategy(strategy),
  };
}

/**
 * Decides `command` on a state, with `summarize` answering the summarizer's requests (default: a
 * summary `summary of N events`). `discarded`: the usage of summarizer calls the pass made in
 * earlier attempts and discarded (as the handler's ledger passes it to the plan and the decision).
 */
export function compact(
  command: CompactSession,
  summarize: (request: SummaryRequest) => SummarizerOutcome = (r) => summaryText(`summary of ${r.toSummarize.length} events`),
  discarded?: SummarizerUsage,
): (state: SessionWindowState | null) => CompactionRun {
  return (state) => {
    const step = planSessionCompaction(command, state, discarded);
    const answered = discardedSummarizerCalls(SPEC_CONTEXT.summarizer, discarded);
    if (step.kind === 'conclude') return { events: [], answer: answerCompaction(step.conclusion, command, answered), summarizerRequests: [] };
    const request = step.pass.plan.summaryRequest;
    const context = discarded ? { ...SPEC_CONTEXT, discarded } : SPEC_CONTEXT;
    const decision = decideCompaction(command, state!, step.pass, request ? summarize(request) : undefined, context);
    const revision = state!.revision! + BigInt(decision.events.length);
    return {
      events: decision.events,
      answer: answerCompaction({ kind: 'recorded', decision, revision, position: 0n }, command, answered),
      summarizerRequests: request ? [request] : [],
      pass: step.pass,
    };
  };
}

/** The ids of the window once `events` are appended after `state` (log order, summaries in their place). */
export function windowAfter(state: SessionWindowState, events: readonly EventData[]): string[] {
  let revision = state.revision ?? -1n;
  const after = foldSessionWindow(
    events.map((e) => ({ type: e.type, data: e.data, revision: ++revision })),
    cloneSessionWindow(state),
  );
  return orderedWindow(after).map((e) => e.event.id);
}
