/**
 * The answer to a compaction (DESIGN §3.6), built in one place from how the pass concluded.
 */
import {
  triggerFigures,
  type CompactionFailureKind,
  type CompactionPlan,
  type CompactionResult,
  type NoopReason,
  type SummaryBudgetUse,
} from '@lib/compaction';
import { costedWindow, orderedWindow, windowTokens, type RecordedCompaction, type SessionWindowState } from '../domain/session-window';
import {
  COMPACTION_COMPLETED,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  type CompactionCompletedData,
  type EstimatorName,
  type EventsArchivedData,
  type SummarizerIdentity,
  type SummaryInsertedData,
} from '../events/session-stream-events';
import { stillFiring, type CompactSession, type CompactionDecision } from './compaction-decider';
import { recordedSummarizer } from './summarizer-spend';
import { policySourceFields } from './compaction-by-policy';

/**
 * The answer to a compaction (DESIGN §3.6). Ids are client ids. Token figures are in the unit of
 * `estimator` (tokens, or UTF-16 code units for `chars`). `revision` is the session's stream
 * revision after the pass (decimal string).
 */
export interface CompactionAnswer {
  /**
   * Id of the recorded decision (`GET …/compactions/:compactionId`); present exactly when
   * `recorded` is true (issue 17: an unrecorded answer carries no id that leads nowhere).
   */
  compactionId?: string;
  outcome: CompactionResult['outcome'];
  archived: string[];
  kept: string[];
  summary?: { id: string; text: string; shadowPrompt: string; insertBeforeId: string; coveredIds: string[]; tokens: number };
  tokensBefore: number;
  tokensAfter: number;
  tokensEstimatedSaved: number;
  revision: string;
  /**
   * Global position (decimal string) of the log state the answer stands on: the last event of the
   * decision written (or, `replayed`, recorded earlier); for an answer that writes nothing (`noop`,
   * `not-triggered`, `conflict`, dry runs), the session's last event it was decided on. Pass it as
   * `minPosition` to read, through any replica, a window that includes what the answer saw.
   * Always present: when the store did not tell the position of that event (a KurrentDB server
   * answering none), the log's head read after the pass, which is at or past it
   * ({@link positionedAnswer}).
   */
  position: string;
  estimator: EstimatorName;
  dryRun: boolean;
  /**
   * `policy` when the request named no strategy: the pass used the strategy, trigger and estimator
   * of the session's stored policy as in force on the state it was decided on (`compactionOn`).
   * Absent when the request named its own.
   */
  from?: 'policy';
  /**
   * With `from`, and on an automatic pass's answer (origin `auto`, for the scheduler): the revision
   * of that policy's event (decimal string, as `GET …/policy` answers it); absent when not known.
   */
  policyRevision?: string;
  /**
   * Whether the decision is in the log (and in the compaction history under `compactionId`).
   * `not-triggered`, `conflict`, dry runs and commanded `noop` are answered but not recorded; an
   * automatic `noop` whose trigger still fires is recorded once per wait period (DESIGN §3.5), and
   * a `noop` (commanded or automatic) of a pass that discarded summarizer calls is recorded with
   * them as its `summarizer` (`recordsSpentNoop`; not while an automatic wait is in force).
   */
  recorded: boolean;
  /** True when this answer is a decision recorded earlier for the same unchanged input. */
  replayed?: boolean;
  /**
   * Present when outcome is `failed`: why (`reason`, for people) and the same as a kind of the closed set
   * `COMPACTION_FAILURE_KINDS` (`failureKind`, for automation; null only when a replayed failure was
   * recorded before failures carried it).
   */
  failure?: { stage: 'summarize'; reason: string; failureKind: CompactionFailureKind | null };
  /** Present when outcome is `noop`: why nothing was archived (`within-limit`, `newest-turn-only`, `open-tool-call`). */
  reason?: NoopReason['reason'];
  /** With reason `open-tool-call`: the call that held the cut back. */
  toolCallId?: string;
  /** With reason `open-tool-call`: the assistant event holding that call. */
  eventId?: string;
  /**
   * With a trigger, for a pass that was not a dry run and not `not-triggered`: whether the trigger
   * still fires on the window after the pass (the part no strategy may archive is over it; DESIGN
   * §3.5: the next automatic pass then waits for growth).
   */
  triggerStillFires?: boolean;
  /**
   * User events in the window after the pass (with `triggerStillFires`), for the growth rule of
   * DESIGN §3.5; absent when the decision was written on top of events appended while the pass
   * ran (then no growth wait follows it).
   */
  turnsAfter?: number;
  /**
   * With a new summary (written, or `replayed` from a decision that recorded it): its budget, its
   * cost, whether it exceeded the budget and what was done then (`kept`: stored whole), in the
   * estimator's unit (`SummaryBudgetUse` of `@lib/compaction`).
   */
  summaryBudget?: SummaryBudgetUse;
  /**
   * Present for a dry run that would call the summarizer: what it would be asked, and with a model
   * summarizer `modelCalls`, the calls it would make as planned now and the bound on a pass's calls
   * (a pass planned over the bound fails `call_limit` before its first call).
   */
  pendingSummary?: { insertBeforeId: string; coveredIds: string[]; modelCalls?: PlannedModelCalls };
  /**
   * The summarizer recorded with the decision answered (written, or `replayed`): its identity and
   * the usage of every call made for it, summed, with `discarded` the part whose replies were not
   * used (see {@link discardedSummarizerCalls}). Absent when no summarizer was called for it.
   */
  summarizer?: SummarizerIdentity;
  /**
   * The summarizer calls this request's pass made whose replies went into no decision it wrote
   * (identity and usage, summed): the session moved on while the summarizer ran and the pass was
   * planned again (then it may call again, or answer `not-triggered`, `noop` or `conflict`), an
   * automatic pass's policy changed meanwhile (`conflict`, abandoned: `passAuthority`), or the same compaction was recorded first by another
   * pass (the answer is then `replayed`). Present on any answer whose pass discarded a reply, so
   * the cost of a call shows also when nothing is written; when the pass wrote a decision, the
   * same figures are in its `summarizer` (included in the totals, and as `summarizer.discarded`),
   * a `noop` included: a pass that discarded replies and then found nothing to archive records a
   * `noop` decision for them (`recordsSpentNoop`), so `not-triggered`, `conflict` and a `replayed`
   * answer are the endings whose discarded calls are in no decision of the log.
   */
  discardedSummarizerCalls?: SummarizerIdentity;
}

/**
 * How a pass concluded, with what its answer is built from:
 * - `unrecorded`: the planner's `not-triggered` or `noop` on `state`;
 * - `dry-run`: the would-be result of a pass that would compact (`plan` still holds the summary request);
 * - `recorded`: the decision appended, with the stream revision and global position of its last event;
 * - `replay`: a decision recorded earlier for the same unchanged input, answered on `state`'s window
 *   and, when given, `decisionEvents` (the decision's events as recorded: what it archived, its
 *   summary, the window it left, the position of its last event, and with a trigger whether it still
 *   fires after it: the original answer's fields);
 * - `conflict`: the pass was recomputed as often as allowed and the stream kept moving, or an automatic
 *   pass was abandoned (its policy changed meanwhile: `passAuthority`); `state` is the latest.
 */
/** The model calls a pass would make as planned now (`planned`, one per chunk) and the bound on them (`max`, `SUMMARIZER_MAX_CALLS_PER_PASS`). */
export interface PlannedModelCalls {
  planned: number;
  max: number;
}

export type CompactionConclusion =
  | { kind: 'unrecorded'; plan: CompactionPlan; state: SessionWindowState }
  | { kind: 'dry-run'; plan: CompactionPlan; result: CompactionResult; state: SessionWindowState; modelCalls?: PlannedModelCalls }
  | { kind: 'recorded'; decision: CompactionDecision; revision: bigint; position: bigint }
  | { kind: 'replay'; recorded: RecordedCompaction; state: SessionWindowState; decisionEvents?: readonly RecordedDecisionEvent[] }
  | { kind: 'conflict'; state: SessionWindowState };

/** A decision event as the log holds it: type, data and global position. */
export interface RecordedDecisionEvent {
  type: string;
  data: unknown;
  position: bigint;
}

/**
 * What a recorded decision's events say (log order): the ids its `EventsArchived` archived (not a
 * later append's archive on arrival), its summary with its cost in `estimator`, the window its
 * `CompactionCompleted` left, and the position of its last event. Events of other decisions are
 * ignored. With the summarizer that answered the decision, when one did, and, with a trigger,
 * `triggerStillFires` and `turnsAfter` as its `CompactionCompleted` recorded them (the original
 * answer's: {@link stillFiring} on the window it left; absent from decisions recorded before they were).
 */
function recordedDecision(events: readonly RecordedDecisionEvent[], compactionId: string, estimator: EstimatorName) {
  const own = events.filter((e) => (e.data as { compactionId?: unknown }).compactionId === compactionId);
  const archived = own
    .filter((e) => e.type === EVENTS_ARCHIVED && !(e.data as EventsArchivedData).onArrival)
    .flatMap((e) => (e.data as EventsArchivedData).archivedIds);
  const inserted = own.find((e) => e.type === SUMMARY_INSERTED)?.data as SummaryInsertedData | undefined;
  const completed = own.find((e) => e.type === COMPACTION_COMPLETED)?.data as CompactionCompletedData | undefined;
  return {
    archived,
    kept: completed?.keptIds,
    summary: inserted && {
      id: inserted.summaryId,
      text: inserted.text,
      shadowPrompt: inserted.shadowPrompt,
      insertBeforeId: inserted.insertBeforeId,
      coveredIds: inserted.coveredIds,
      tokens: inserted.costs[estimator],
    },
    // The decision's own last event (its CompactionCompleted or CompactionFailed), not a later archive on arrival attributed
    // to it; unknown (-1n) when the store does not tell positions.
    position: lastOfDecision(own),
    summarizer: completed?.summarizer,
    summaryBudget: completed?.summaryBudget,
    stillFiring: {
      ...(completed?.triggerStillFires !== undefined ? { triggerStillFires: completed.triggerStillFires } : {}),
      ...(completed?.triggerStillFires !== undefined && completed.turnsAfter !== undefined ? { turnsAfter: completed.turnsAfter } : {}),
    },
  };
}

/** The position (text) of the last event of a decision among its `own` events (archives on arrival later attributed to it left out), or undefined when unknown. */
function lastOfDecision(own: readonly RecordedDecisionEvent[]): string | undefined {
  const decision = own.filter((e) => !(e.type === EVENTS_ARCHIVED && (e.data as EventsArchivedData).onArrival));
  const last = decision[decision.length - 1];
  return last !== undefined && last.position >= 0n ? last.position.toString() : undefined;
}

/** The answer's fields of a noop reason (DESIGN §3.6). */
function noopFields(noop: NoopReason): Pick<CompactionAnswer, 'reason' | 'toolCallId' | 'eventId'> {
  return { reason: noop.reason, ...(noop.reason === 'open-tool-call' ? { toolCallId: noop.toolCallId, eventId: noop.eventId } : {}) };
}

/**
 * A {@link CompactionAnswer} whose `position` may be unknown: the store did not tell the position
 * of the event it stands on (see {@link positionedAnswer}).
 */
export type UnpositionedCompactionAnswer = Omit<CompactionAnswer, 'position'> & { position?: string };

/**
 * `answer` with its `position`: its own, or else `logHead` (the store's head position, read after
 * the pass: at or past the event the answer stands on, so a read at that `minPosition` includes
 * what the answer saw).
 */
export function positionedAnswer(answer: UnpositionedCompactionAnswer, logHead: bigint): CompactionAnswer {
  return { ...answer, position: answer.position ?? logHead.toString() };
}

/** `{ position }` of the log state `state` was loaded at (see {@link CompactionAnswer.position}), or nothing when unknown. */
function decidedAt(state: SessionWindowState): { position?: string } {
  return state.position !== null && state.position >= 0n ? { position: state.position.toString() } : {};
}

/**
 * The answer to `command` for how its pass concluded (see {@link CompactionConclusion}), with
 * `discarded` (from `discardedSummarizerCalls` of ./summarizer-spend) as its
 * {@link CompactionAnswer.discardedSummarizerCalls} when the pass threw summarizer replies away.
 */
export function answerCompaction(conclusion: CompactionConclusion, command: CompactSession, discarded?: SummarizerIdentity): UnpositionedCompactionAnswer {
  return { ...answerConclusion(conclusion, command), ...(discarded ? { discardedSummarizerCalls: discarded } : {}) };
}

/** The answer's fields from how the pass concluded (see {@link answerCompaction}). */
function answerConclusion(conclusion: CompactionConclusion, command: CompactSession): UnpositionedCompactionAnswer {
  const common = { estimator: command.estimator, dryRun: command.dryRun, ...policySourceFields(command) };
  switch (conclusion.kind) {
    case 'unrecorded': {
      const { plan, state } = conclusion;
      const noop = plan.noop;
      return {
        outcome: plan.outcome,
        ...(noop ? noopFields(noop) : {}),
        ...(plan.outcome === 'noop' && !command.dryRun ? stillFiring(command.trigger, triggerFigures(costedWindow(state, command.estimator))) : {}),
        archived: [],
        kept: [...plan.keptIds],
        tokensBefore: plan.tokensBefore,
        tokensAfter: plan.tokensBefore,
        tokensEstimatedSaved: 0,
        revision: state.revision!.toString(),
        ...decidedAt(state),
        ...common,
        recorded: false,
      };
    }
    case 'dry-run': {
      const { plan, result, state, modelCalls } = conclusion;
      return {
        outcome: result.outcome,
        archived: result.archivedIds,
        kept: result.keptIds,
        tokensBefore: result.tokensBefore,
        tokensAfter: plan.tokensBefore - plan.tokensArchived,
        tokensEstimatedSaved: plan.tokensArchived,
        revision: state.revision!.toString(),
        ...decidedAt(state),
        ...common,
        recorded: false,
        ...(plan.summaryRequest
          ? {
              pendingSummary: {
                insertBeforeId: plan.summaryInsertBeforeId!,
                coveredIds: plan.summaryRequest.coveredIds,
                ...(modelCalls ? { modelCalls } : {}),
              },
            }
          : {}),
      };
    }
    case 'recorded': {
      const { decision, revision, position } = conclusion;
      const { result } = decision;
      const s = result.summary;
      return {
        compactionId: decision.compactionId,
        outcome: result.outcome,
        archived: result.archivedIds,
        kept: result.keptIds,
        ...(s
          ? { summary: { id: s.id, text: s.text, shadowPrompt: s.shadowPrompt, insertBeforeId: s.insertBeforeId, coveredIds: s.coveredIds, tokens: s.tokens } }
          : {}),
        ...(result.summaryBudget ? { summaryBudget: result.summaryBudget } : {}),
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        tokensEstimatedSaved: result.tokensEstimatedSaved,
        revision: revision.toString(),
        ...(position >= 0n ? { position: position.toString() } : {}),
        ...common,
        recorded: true,
        ...(result.outcome === 'failed'
          ? { failure: { stage: 'summarize' as const, reason: result.failureReason ?? 'summarizer failed', failureKind: result.failureKind ?? 'other' } }
          : {}),
        ...(result.outcome === 'noop' && decision.noop ? noopFields(decision.noop) : {}),
        ...(result.outcome === 'compacted' || result.outcome === 'noop' ? stillFiring(command.trigger, decision.after, decision.rebased) : {}),
        ...(decision.summarizer ? { summarizer: decision.summarizer } : {}),
      };
    }
    case 'replay': {
      const { recorded, state } = conclusion;
      const kept = orderedWindow(state);
      const failure = recorded.failure;
      const decision = conclusion.decisionEvents ? recordedDecision(conclusion.decisionEvents, recorded.compactionId, command.estimator) : null;
      return {
        compactionId: recorded.compactionId,
        outcome: recorded.outcome,
        archived: failure ? failure.archivedIds : (decision?.archived ?? []),
        kept: (!failure && decision?.kept) || kept.map((e) => e.event.id),
        ...(decision?.summary ? { summary: decision.summary } : {}),
        ...(decision?.summaryBudget ? { summaryBudget: decision.summaryBudget } : {}),
        ...(decision?.position ? { position: decision.position } : decidedAt(state)),
        tokensBefore: recorded.tokensBefore,
        tokensAfter: recorded.tokensAfter,
        tokensEstimatedSaved: recorded.tokensEstimatedSaved,
        // The decision's revision, as its original answer gave it and paired with its position (newcomer ncsqlite69 F1: the
        // session's revision when answered, 6 appends later, beside the decision's position).
        revision: recorded.revision.toString(),
        ...common,
        recorded: true,
        replayed: true,
        ...(recorded.noop ? noopFields(recorded.noop) : {}),
        ...(failure
          ? {
              failure: { stage: 'summarize' as const, reason: failure.reason, failureKind: failure.failureKind ?? null },
              ...(failure.summarizer ? { summarizer: recordedSummarizer(failure.summarizer) } : {}),
            }
          : { ...decision?.stillFiring, ...(decision?.summarizer ? { summarizer: recordedSummarizer(decision.summarizer) } : {}) }),
      };
    }
    case 'conflict': {
      const { state } = conclusion;
      const kept = orderedWindow(state);
      const tokens = windowTokens(kept, command.estimator);
      return {
        outcome: 'conflict',
        archived: [],
        kept: kept.map((e) => e.event.id),
        tokensBefore: tokens,
        tokensAfter: tokens,
        tokensEstimatedSaved: 0,
        revision: state.revision!.toString(),
        ...decidedAt(state),
        ...common,
        recorded: false,
      };
    }
  }
}
