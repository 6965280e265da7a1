import type { ArchiveReasons, CompactionFailureKind, NoopReason, Strategy, SummaryBudgetUse, Trigger } from '@lib/compaction';
import {
  decisionFigures,
  recordedFailureKind,
  type CompactionCompletedData,
  type CompactionFailedData,
  type EstimatorName,
} from '../../events/session-stream-events';
import type { ArchivedOnArrivalRecord, CompactionRecord } from './compaction-history-query';
import type { RequestedBy } from '../../events/requested-by';
import { recordedDecisionSummarizer, type CompleteSummarizerIdentity, type CompleteSummarizerUsage } from '../../decider/summarizer-spend';

/**
 * An event archived on arrival attributed to a compaction (DESIGN §3.3 rule 3: a late answer to a
 * call the compaction archived), as the API shows it: the event's client id, and the revision,
 * global position (decimal strings) and time (ISO-8601 UTC) of the `EventsArchived` (`onArrival:
 * true`) that archived it, written by the append that brought it, after the compaction's decision.
 */
export interface ArchivedOnArrivalItem {
  eventId: string;
  revision: string;
  position: string;
  at: string;
}

/** The public shape of {@link CompactionRecord.archivedOnArrival}. */
export function archivedOnArrivalItems(records: readonly ArchivedOnArrivalRecord[]): ArchivedOnArrivalItem[] {
  return records.map(({ eventId, revision, position, at }) => ({ eventId, revision: revision.toString(), position: position.toString(), at }));
}

/**
 * One compaction decision as the API shows it: what was decided, by what, and at what cost.
 * Write-side bookkeeping of the recorded event (`paramsKey`, `checkpoint`, `keptIds`) stays out.
 * Token figures are in the estimator's unit (tokens, or UTF-16 code units for `chars`).
 */
export interface CompactionHistoryItem {
  compactionId: string;
  /**
   * `compacted` (the window changed), `noop` (a pass that could archive nothing: an automatic one
   * whose trigger still fires, recorded once per wait period, DESIGN §3.5, or one that discarded
   * summarizer calls first, recorded with them as its `summarizer`) or `failed`.
   */
  outcome: 'compacted' | 'noop' | 'failed';
  /** With outcome `noop`: why nothing was archived (`within-limit`, `newest-turn-only`, `open-tool-call`); null otherwise. */
  reason: NoopReason['reason'] | null;
  /**
   * With reason `open-tool-call`: the tool call whose turn held the cut back, and the assistant
   * event holding it (as the pass's answer named them, DESIGN §3.6); null otherwise.
   */
  toolCallId: string | null;
  eventId: string | null;
  /** `command` (POST …/compactions) or `auto` (the session's policy). */
  origin: 'command' | 'auto';
  /**
   * With origin `command`: who ordered it (the API key's label, never the key; the request or NATS
   * command id; the transport). Null for automatic passes and decisions recorded before it was.
   */
  requestedBy: RequestedBy | null;
  /**
   * Where `strategy`, `trigger` and `estimator` came from: `policy`, the session's stored policy
   * (every automatic pass, and a compaction commanded without a strategy: its decision's `from`),
   * or `request`, the command named them.
   */
  from: 'request' | 'policy';
  /**
   * For a pass on the session's policy (`from` `policy`: automatic, or commanded without a
   * strategy): the revision (decimal string) of the policy event it was decided on; null for a
   * command that named its strategy, when its decision did not know it, and for automatic passes
   * recorded before they carried it (2026-12-05).
   */
  policyRevision: string | null;
  strategy: Strategy;
  /** The trigger that gated the pass, or null (always). */
  trigger: Trigger | null;
  estimator: EstimatorName;
  /** Stream revision (decimal string) of the window the pass read. */
  basedOnRevision: string;
  /** Stream revision (decimal string) of the decision's last event. */
  revision: string;
  /** Global position (decimal string) of that event: pass it as `minPosition` to wait for it elsewhere. */
  position: string;
  tokensBefore: number;
  /**
   * Window size after the pass. A failure leaves the window as it was except for superseded system
   * messages it archived (then it is smaller); a failure recorded before failures carried it: `tokensBefore`.
   */
  tokensAfter: number;
  /** `tokensBefore - tokensAfter` as the pass estimated it (the answer's `tokensEstimatedSaved`). */
  tokensSaved: number;
  /**
   * Ids archived by this decision, in order (old summaries and superseded system messages included):
   * what the pass archived at its revision, which its counts and tokens describe.
   */
  archivedIds: string[];
  /**
   * Events archived on arrival attributed to this compaction, in log order: late answers to calls
   * it archived, each archived later by the append that brought it ({@link ArchivedOnArrivalItem}).
   * `archivedIds` and these ids together are the log's events archived by this compaction
   * (`archivedBy`). Empty when none arrived.
   */
  archivedOnArrival: ArchivedOnArrivalItem[];
  /**
   * Why each of `archivedIds` left the window (`ArchiveReasons`, a partition of them: `strategyCut`, the strategy's own
   * cut; `turnStart`, events the strategy's cut kept that went because the cut moved forward to the next user event,
   * DESIGN §3.3.1; `supersededSystem`; `replacedSummaries`); for a failure, its `supersededSystem` only (any failure). Null
   * for a pass that archived nothing and for a completed decision recorded before 2026-12-06.
   */
  archivedBecause: ArchiveReasons | null;
  /**
   * For a failure: what the pass planned to archive (superseded system messages and the events it sent the summarizer to
   * summarize), log order; null otherwise, when it planned nothing more than it archived, and for failures recorded
   * before 2026-12-06.
   */
  plannedArchivedIds: string[] | null;
  /** Events in the window after the pass (the new summary included); null for a failure recorded before failures carried it. */
  keptCount: number | null;
  /** The summary it inserted, or null. */
  summary: { id: string; text: string; coveredIds: string[] } | null;
  /**
   * The summarizer that wrote the summary (or failed to), or null when none was called: `calls` and
   * `usage` sum every call made for the decision; `discarded` is the part of them whose replies
   * the pass did not use (it was planned again after the session moved on), null when none (and
   * for decisions recorded before it was).
   */
  summarizer:
    | (SummarizerFigures & {
        kind: string;
        /** The model configured (`SUMMARIZER_MODEL`, sent with every call), or the extractive summarizer's version name. */
        model: string;
        /**
         * The models the endpoint's replies named (e.g. `gpt-4o-2024-08-06` for `model` `gpt-4o`):
         * distinct, first seen first, at most 8, each at most 200 characters (cut with `…`); empty when
         * no reply named one, and for decisions recorded before they were.
         */
        answeredModels: string[];
        discarded: (SummarizerFigures & { answeredModels: string[] }) | null;
      })
    | null;
  /**
   * With a new summary: its budget and cost (the estimator's unit), whether the summary exceeded
   * the budget and what was done then (`overBudget`: `kept`, stored whole; null within it). Null
   * without a summary, and for decisions recorded before it was.
   */
  summaryBudget: SummaryBudgetUse | null;
  /**
   * Wall time of the pass in milliseconds, from its start to its decision: for a failure, to the
   * failure (the summarizer's attempts, retries and timeouts included); null for a failure recorded
   * before failures carried it.
   */
  durationMs: number | null;
  /**
   * ISO-8601 UTC time it completed or failed, by the deciding replica's process clock, read just
   * before its append: not ordered with the log, and usually a few milliseconds before
   * `recordedAt`. Time travel by time does not go by it: use `recordedAt`.
   */
  at: string;
  /**
   * ISO-8601 UTC time (milliseconds) the store recorded the decision's last event (its `recordedAt`
   * in `GET …/events`, the time its timeline row shows): the clock time travel goes by, so
   * `…/window?atTime=<recordedAt>` answers the window right after this decision (as
   * `atRevision=<revision>` does, unless an event after it was recorded in the same millisecond:
   * then the window after that one, which the answer's `resolved` names).
   */
  recordedAt: string;
  /**
   * With a trigger: whether it still fires on the window after the pass (DESIGN §3.5: a policy
   * that cannot be met; the next automatic pass waits for growth). Null without a trigger, for
   * failures, and for decisions recorded before it was.
   */
  triggerStillFires: boolean | null;
  /**
   * For failures: the stage that failed (`summarize` or `append`), why (`reason`, for people) and the
   * same as a stable kind of the closed set `COMPACTION_FAILURE_KINDS` (`failureKind`, for automation;
   * null for a failure recorded before failures carried it); null otherwise.
   */
  failure: { stage: 'summarize' | 'append'; reason: string; failureKind: CompactionFailureKind | null } | null;
}

/** The public shape of a recorded compaction (see {@link CompactionHistoryItem}). */
export function compactionHistoryItem(record: CompactionRecord): CompactionHistoryItem {
  const failed = record.outcome === 'failed';
  const completed = record.data as CompactionCompletedData;
  const failure = record.data as CompactionFailedData;
  const summarizer = recordedDecisionSummarizer(record.data, record.summary);
  const figures = decisionFigures(record.data);
  const blockedBy = record.outcome === 'noop' && completed.reason === 'open-tool-call' ? completed : null;
  return {
    compactionId: record.compactionId,
    outcome: record.outcome,
    reason: record.outcome === 'noop' ? (completed.reason ?? 'within-limit') : null,
    toolCallId: blockedBy?.toolCallId ?? null,
    eventId: blockedBy?.eventId ?? null,
    origin: record.data.origin === 'auto' ? 'auto' : 'command',
    requestedBy: record.data.requestedBy ?? null,
    from: record.data.origin === 'auto' || record.data.from === 'policy' ? 'policy' : 'request',
    policyRevision: record.data.policyRevision ?? null,
    strategy: record.data.strategy,
    trigger: record.data.trigger ?? null,
    estimator: record.data.estimator,
    basedOnRevision: String(record.data.basedOnRevision),
    revision: record.revision.toString(),
    position: record.position.toString(),
    tokensBefore: figures.tokensBefore,
    tokensAfter: figures.tokensAfter,
    tokensSaved: figures.tokensEstimatedSaved,
    archivedIds: record.archivedIds,
    archivedOnArrival: archivedOnArrivalItems(record.archivedOnArrival),
    // A failed pass archives superseded system messages only (DESIGN §3.7), whenever it was recorded.
    archivedBecause: failed
      ? record.archivedIds.length > 0
        ? { strategyCut: [], turnStart: [], supersededSystem: record.archivedIds, replacedSummaries: [] }
        : null
      : (completed.archivedBecause ?? null),
    plannedArchivedIds: failed ? (failure.plannedArchivedIds ?? null) : null,
    keptCount: figures.keptCount,
    summary: record.summary ? { id: record.summary.summaryId, text: record.summary.text, coveredIds: record.summary.coveredIds } : null,
    summarizer: summarizer ? historySummarizer(summarizer) : null,
    summaryBudget: failed ? null : (completed.summaryBudget ?? null),
    durationMs: failed ? (failure.durationMs ?? null) : completed.durationMs,
    at: record.at,
    recordedAt: record.recordedAt,
    triggerStillFires: failed ? null : (completed.triggerStillFires ?? null),
    failure: failed ? { stage: failure.stage, reason: failure.reason, failureKind: recordedFailureKind(failure) } : null,
  };
}

/** Summarizer figures as the HTTP reads show them (history items, the session's totals): token figures nested under `usage`. */
export interface SummarizerFigures {
  /** HTTP requests that reached the endpoint, retries included (see `SummarizerUsage.calls`). */
  calls: number;
  /** Of `calls`, retries of a failed attempt. */
  retries: number;
  /** Of `calls`, those whose token usage the endpoint did not report: `usage` covers the others only. */
  unreportedUsageCalls: number;
  usage: { promptTokens: number; completionTokens: number };
}

/** The {@link SummarizerFigures} of complete usage figures: the one shape every HTTP read gives them. */
export function summarizerFigures(u: Omit<CompleteSummarizerUsage, 'answeredModels'>): SummarizerFigures {
  return {
    calls: u.calls,
    retries: u.retries,
    unreportedUsageCalls: u.unreportedUsageCalls,
    usage: { promptTokens: u.promptTokens, completionTokens: u.completionTokens },
  };
}

/** The history's shape of a recorded summarizer: {@link summarizerFigures} with the answered models, of the whole and of its discarded part. */
function historySummarizer(s: CompleteSummarizerIdentity): NonNullable<CompactionHistoryItem['summarizer']> {
  const figures = (u: CompleteSummarizerUsage) => ({ ...summarizerFigures(u), answeredModels: u.answeredModels });
  return { kind: s.kind, model: s.model, ...figures(s), discarded: s.discarded ? figures(s.discarded) : null };
}
