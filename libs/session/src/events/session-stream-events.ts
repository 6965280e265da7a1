/**
 * The events stored in a session stream `session-<sessionId>` (DESIGN §4): conversation events
 * and decision events live in the same stream.
 *
 * Every payload is plain JSON. Event ids inside payloads (`eventId`, `archivedIds`, …) are the
 * *client* ids (free-form strings such as `u1`); the store's UUID is derived from
 * (sessionId, client id) by {@link storeEventId}.
 */
import {
  compactionFailureKind,
  type ArchiveReasons,
  type CompactionFailureKind,
  type CompactionOutcome,
  type NoopReason,
  type SessionEvent,
  type Strategy,
  type SummaryBudgetUse,
  type Trigger,
} from '@lib/compaction';
import type { RequestedBy } from './requested-by';

/** Estimator names whose costs are stored with each conversation event. */
export type EstimatorName = 'cl100k_base' | 'o200k_base' | 'chars';

/** Cost of one event under each estimator (tokens, or UTF-16 code units for `chars`). */
export type EventCosts = Record<EstimatorName, number>;

/** Stream name prefix; the category is `session`. */
export const SESSION_STREAM_PREFIX = 'session-';

/**
 * The key of a session inside the store: `<tenantId>.<sessionId>`. Tenant ids never contain a
 * dot, so the key splits back at its first dot. Tenants therefore never share a stream, even for
 * the same session id.
 */
export function sessionKey(tenantId: string, sessionId: string): string {
  return `${tenantId}.${sessionId}`;
}

/** `session-<tenantId>.<sessionId>` (category `session`). Takes a {@link sessionKey}. */
export function sessionStream(key: string): string {
  return `${SESSION_STREAM_PREFIX}${key}`;
}

/**
 * Metadata stored with every event of a session stream: the tenant and the public session id, so
 * projections never parse stream names.
 */
export interface SessionEventMetadata {
  tenantId: string;
  sessionId: string;
}

/** Type name of a recorded conversation event. */
export const CONVERSATION_EVENT = 'ConversationEventAppended';
/** Decision: events archived by a compaction. */
export const EVENTS_ARCHIVED = 'EventsArchived';
/** Decision: a summary inserted by a compaction. */
export const SUMMARY_INSERTED = 'SummaryInserted';
/** Decision: a compaction finished (its figures). Always the last event of a compaction's append. */
export const COMPACTION_COMPLETED = 'CompactionCompleted';
/** Decision: a compaction failed (stage and reason). */
export const COMPACTION_FAILED = 'CompactionFailed';
/** A session's auto-compaction policy was set. */
export const POLICY_SET = 'AutoCompactionPolicySet';

/**
 * A conversation event (user, assistant, tool, system, or an imported summary).
 * `event.id` is the client id (or one the service assigned). `costs` were computed once, at append.
 */
export interface ConversationEventData {
  event: SessionEvent;
  costs: EventCosts;
  /**
   * ISO-8601 time given by the client, if any. (The store's own record time stands in otherwise;
   * it is kept out of the payload so that a retried request carries identical data.)
   */
  createdAt?: string;
  /** Client metadata, stored verbatim. */
  metadata?: Record<string, unknown>;
  /** Owner of the session for cross-session recall, when the client named one. */
  userId?: string;
}

/**
 * Decision: the ids archived by one compaction (client ids, log order). Also written by an append
 * that brings a late answer to an abandoned call the compaction archived (DESIGN §3.3 rule 3):
 * then `onArrival` is true and the answer is archived, attributed to that compaction.
 */
export interface EventsArchivedData {
  compactionId: string;
  archivedIds: string[];
  /** True when written by an append (a late answer archived on arrival), not by the compaction itself. */
  onArrival?: boolean;
}

/** Identity and token usage of the summarizer that wrote a summary (or failed to). */
export interface SummarizerIdentity {
  /** `openai-compatible` or `extractive`. */
  kind: string;
  /** Model name, e.g. `gpt-4o-mini`, or `extractive-v1`. */
  model: string;
  /**
   * Model calls made for this pass (chunking may need several; every HTTP request that reached the
   * endpoint, retries included), discarded ones included (see `discarded`): `calls`,
   * `promptTokens`, `completionTokens`, `retries` and `unreportedUsageCalls` are every call's
   * figures, summed (see `SummarizerUsage`; read with `usageOf`).
   */
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** Of `calls`, retries of a failed attempt; absent in decisions recorded before it was (read as 0). */
  retries?: number;
  /** Of `calls`, those whose usage the endpoint did not report (tokens unknown); absent in decisions recorded before it was (read as 0). */
  unreportedUsageCalls?: number;
  /**
   * The models the endpoint's replies named (`model` of each reply, e.g. `gpt-4o-2024-08-06` when
   * `model` is `gpt-4o`): distinct, first seen first, at most 8, each at most 200 characters (cut
   * with `…`; see `answeredModelName`). Empty when no reply named one (every attempt failed, the
   * extractive summarizer); absent in decisions recorded before it was (read as empty).
   */
  answeredModels?: string[];
  /**
   * The part of the figures above spent on calls whose reply the pass did not use: it called the
   * summarizer, then the stream moved on in a way the reply could not be rebased onto (another
   * compaction, an archived event answered, a new system message) or the session was erased and
   * written again, so the pass was planned again (DESIGN §4). Absent when no reply was discarded,
   * and in decisions recorded before it was (read as none).
   */
  discarded?: { calls: number; promptTokens: number; completionTokens: number; retries?: number; unreportedUsageCalls?: number; answeredModels?: string[] };
}

/** Decision: a summary inserted immediately before `insertBeforeId`, covering `coveredIds`. */
export interface SummaryInsertedData {
  compactionId: string;
  /** Id of the new summary event (service-assigned, `summaryIdOn`: `summary-<compactionId>`, or `summary-<compactionId>-<n>` (n ≥ 2) when an event of the session had that id). */
  summaryId: string;
  shadowPrompt: string;
  text: string;
  insertBeforeId: string;
  /**
   * Stream revision of the `insertBeforeId` event (decimal string): the summary's place in the
   * window, so a fold that starts from a checkpoint (without that event) orders it the same.
   */
  insertBeforeRevision?: string;
  coveredIds: string[];
  costs: EventCosts;
  summarizer: SummarizerIdentity;
  createdAt: string;
}

/**
 * Carried by the last decision event of a compaction (completed or failed) so the write side can
 * load a session in O(active window + events since): where the active entries are, and the state
 * that would otherwise need the whole stream. Revisions are decimal strings (bigint in JSON).
 * Stored under the JSON key `checkpoint` of the decision event (the name it had before "checkpoint"
 * was kept for the projector's position); logs written before the rename load unchanged.
 */
export interface SessionSnapshot {
  /** Inclusive revision ranges `[from, to]` holding exactly the active window's entries (plus decision events in between). */
  keptRanges: Array<[string, string]>;
  policy: PolicySetData | null;
  /** Revision of the policy event (decimal string); absent in snapshots written before it was recorded. */
  policyRevision?: string;
  consecutiveFailures: number;
  userId?: string;
  /** Open calls archived with their turn: `[callId, compactionId, toolName]` (see SessionWindowState.archivedOpenCalls). */
  archivedOpenCalls?: Array<[string, string, string]>;
}

/**
 * Decision: a compaction's figures. `outcome` is `compacted` (the window changed), or `noop` for
 * an automatic pass that could archive nothing while its trigger still fires (DESIGN §3.5: recorded
 * so the audit shows a policy that cannot be met, and the next automatic pass waits for growth from
 * it; at most one such record per wait period). A commanded noop is never recorded.
 */
export interface CompactionCompletedData {
  compactionId: string;
  outcome: Extract<CompactionOutcome, 'compacted' | 'noop'>;
  /** With outcome `noop`: why nothing was archived (`within-limit`, `newest-turn-only`, `open-tool-call`). */
  reason?: NoopReason['reason'];
  /** With reason `open-tool-call`: the call that held the cut back. */
  toolCallId?: string;
  /** With reason `open-tool-call`: the assistant event holding that call. */
  eventId?: string;
  trigger: Trigger | null;
  strategy: Strategy;
  estimator: EstimatorName;
  archivedCount: number;
  keptCount: number;
  tokensBefore: number;
  tokensAfter: number;
  tokensEstimatedSaved: number;
  /** Stream revision the pass read (its decisions were appended with this expected revision, or re-checked). */
  basedOnRevision: string;
  /** Ids of the active window after the pass, log order (the new summary's id in its place). */
  keptIds: string[];
  /**
   * Why each event the pass archived left the window (`ArchiveReasons`: the strategy's cut, the cut moved to a turn
   * start, a superseded system message, a summary replaced); absent when it archived nothing, and from decisions
   * recorded before 2026-12-06.
   */
  archivedBecause?: ArchiveReasons;
  summarizer?: SummarizerIdentity;
  durationMs: number;
  completedAt: string;
  /** `auto` when started by the session's policy, `command` otherwise. */
  origin: 'auto' | 'command';
  /** With origin `command`: who ordered it (absent on automatic passes, and on decisions recorded before it was). */
  requestedBy?: RequestedBy;
  /**
   * `policy` when the compaction was commanded without a strategy: its strategy, trigger and
   * estimator are the session's stored policy, as in force on the state the pass was decided on.
   * Absent when the command named them, on automatic passes (origin `auto`: always the policy), and
   * on decisions recorded before 2026-12-05.
   */
  from?: 'policy';
  /**
   * With `from`, and on automatic passes (origin `auto`): the revision of the policy's event the
   * pass was decided on (decimal string); absent when the write side did not know it, on a command
   * that named its strategy, and on automatic passes recorded before they carried it (2026-12-05).
   */
  policyRevision?: string;
  /** Canonical JSON of (strategy, trigger, estimator): same key + unchanged input = same decision. */
  paramsKey: string;
  /** The session snapshot (JSON key kept as `checkpoint` so older logs load). */
  checkpoint: SessionSnapshot;
  /**
   * With a trigger: whether it still fires on the window after the pass (DESIGN §3.5: a policy
   * that cannot be met; the next automatic pass waits until the window has grown).
   */
  triggerStillFires?: boolean;
  /** With a trigger: user events in the window after the pass (`tokensAfter` is the token figure). */
  turnsAfter?: number;
  /**
   * With a new summary: its budget, its cost, whether it exceeded the budget and what was done
   * then (`kept`: stored whole; see `SummaryBudgetUse` of `@lib/compaction`). Absent without a
   * summary, and in decisions recorded before it was.
   */
  summaryBudget?: SummaryBudgetUse;
}

/** Decision: a compaction failed. Superseded system messages may still have been archived. */
export interface CompactionFailedData {
  compactionId: string;
  /** `summarize` (model error, blank reply, timeout) or `append`. */
  stage: 'summarize' | 'append';
  reason: string;
  /**
   * The same failure as a stable, machine-readable kind of the closed set `COMPACTION_FAILURE_KINDS`
   * (`credentials`, `rate_limited`, `timeout`, `invalid_reply`, …; see `failure-kind.ts` of
   * `@lib/compaction`), chosen with the reason by the summarizer that failed. Absent on failures
   * recorded before it was (2026-12-04): read it with {@link recordedFailureKind}.
   */
  failureKind?: CompactionFailureKind;
  /**
   * `shutdown`: the summarizer call was aborted because the service shut down (at half of its
   * shutdown bound), not failed by the model: the session's `consecutiveFailures` (the
   * auto-compaction backoff) does not count this decision. Absent on every other failure, and on
   * failures recorded before it was (those count).
   */
  interrupted?: 'shutdown';
  strategy: Strategy;
  trigger: Trigger | null;
  basedOnRevision: string;
  summarizer?: SummarizerIdentity;
  /**
   * Wall time from the pass's start to its failure, ms (the summarizer's attempts, retries and
   * timeouts included), as a completed pass's `durationMs`; absent on failures recorded before it was.
   */
  durationMs?: number;
  failedAt: string;
  origin: 'auto' | 'command';
  /** With origin `command`: who ordered it (absent on automatic passes, and on decisions recorded before it was). */
  requestedBy?: RequestedBy;
  /**
   * `policy` when the compaction was commanded without a strategy: its strategy, trigger and
   * estimator are the session's stored policy, as in force on the state the pass was decided on.
   * Absent when the command named them, on automatic passes (origin `auto`: always the policy), and
   * on decisions recorded before 2026-12-05.
   */
  from?: 'policy';
  /**
   * With `from`, and on automatic passes (origin `auto`): the revision of the policy's event the
   * pass was decided on (decimal string); absent when the write side did not know it, on a command
   * that named its strategy, and on automatic passes recorded before they carried it (2026-12-05).
   */
  policyRevision?: string;
  /** Tokens of the window before the pass, and ids archived anyway (superseded system messages). */
  tokensBefore: number;
  archivedIds: string[];
  /**
   * What the pass planned to archive (and so sent to the summarizer, with its overlap), had the summarizer answered: the
   * superseded system messages of `archivedIds` and the events it would have summarized, log order. Absent when it
   * planned nothing more, and from failures recorded before 2026-12-06.
   */
  plannedArchivedIds?: string[];
  /**
   * The window after the failure: its tokens, `tokensBefore - tokensAfter` as the pass estimated
   * it, and its event count (it differs from the window before when superseded system messages
   * were archived). Absent on failures recorded before they were: read them with {@link decisionFigures}.
   */
  tokensAfter?: number;
  tokensEstimatedSaved?: number;
  keptCount?: number;
  estimator: EstimatorName;
  paramsKey: string;
  checkpoint: SessionSnapshot;
}

/**
 * The `failureKind` a `CompactionFailed` recorded: null for a failure recorded before failures
 * carried one; a value outside the closed set (a later build's) reads as `other`, so every
 * reader answers a kind of `COMPACTION_FAILURE_KINDS` or null. Pure.
 */
export function recordedFailureKind(data: Pick<CompactionFailedData, 'failureKind'>): CompactionFailureKind | null {
  return data.failureKind === undefined || data.failureKind === null ? null : compactionFailureKind(data.failureKind);
}

/** The window figures of a recorded compaction decision, in the unit of its estimator (see {@link decisionFigures}). */
export interface DecisionFigures {
  tokensBefore: number;
  tokensAfter: number;
  tokensEstimatedSaved: number;
  /** Events in the window after the decision; null for a failure recorded before failures carried it. */
  keptCount: number | null;
}

/**
 * The window figures a decision recorded (`CompactionCompleted` or `CompactionFailed` data): the
 * one reading of them for every reader (the compaction history, the replay of a decision, the
 * answer to a replayed command). A failure that archived superseded system messages shrank the
 * window: its figures say so. A failure recorded before failures carried figures after them
 * reads as nothing saved (`tokensAfter = tokensBefore`, `keptCount` null). Pure.
 */
export function decisionFigures(data: CompactionCompletedData | CompactionFailedData): DecisionFigures {
  const { tokensBefore } = data;
  if ('keptIds' in data) return { tokensBefore, tokensAfter: data.tokensAfter, tokensEstimatedSaved: data.tokensEstimatedSaved, keptCount: data.keptCount };
  return {
    tokensBefore,
    tokensAfter: data.tokensAfter ?? tokensBefore,
    tokensEstimatedSaved: data.tokensEstimatedSaved ?? 0,
    keptCount: data.keptCount ?? null,
  };
}

/**
 * A session's auto-compaction policy event: a policy set ({@link PolicyInForceData}) or cleared
 * ({@link PolicyClearedData}, `strategy` null). The decider writes it (`policyEventData`).
 */
export type PolicySetData = PolicyInForceData | PolicyClearedData;

/**
 * A policy set: its strategy, trigger (null: fires always) and estimator; `setAt` ISO-8601 UTC;
 * `requestedBy`: who set it (see {@link PolicyEventRequester}).
 */
export interface PolicyInForceData extends PolicyEventRequester {
  strategy: Strategy;
  trigger: Trigger | null;
  estimator: EstimatorName;
  setAt: string;
}

/**
 * Who wrote a policy event (set or clear): the `PUT …/policy` or NATS `policy` command's
 * {@link RequestedBy} (API key label, request or command id, transport), never the key. Absent on
 * events written before 2026-12-07 (newcomer ncui74 F1) and on those of a caller that names none.
 * Not part of the policy: the same policy set by someone else is the same policy (`policyKey`).
 */
export interface PolicyEventRequester {
  requestedBy?: RequestedBy;
}

/**
 * A policy cleared: no strategy, no trigger, and no estimator (a cleared policy counts in none, as
 * `GET …/policy` answers). Clears written by earlier builds may hold more, and stay as written:
 * before 2026-12-05 the estimator their PUT defaulted to (`cl100k_base`), before 2026-12-01 also a
 * trigger or estimator the PUT sent beside a null strategy. Those values mean nothing: every reader
 * takes a clear as a clear, whatever it holds.
 */
export interface PolicyClearedData extends PolicyEventRequester {
  strategy: null;
  /** Null (written so since 2026-12-01; see above). */
  trigger: Trigger | null;
  /** Null (written so since 2026-12-05; see above). */
  estimator: EstimatorName | null;
  setAt: string;
}
