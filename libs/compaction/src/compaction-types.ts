/**
 * Shapes of strategies, triggers, plans and results (DESIGN §3.4–§3.6).
 *
 * Token figures are in the unit of the estimator the caller used to cost the events: tokens for
 * `cl100k_base` / `o200k_base`, UTF-16 code units for `chars`.
 */
import type { CompactionFailureKind } from './failure-kind';
import type { SummaryBudgetUse } from './summary-budget';

/** `sliding-window`: keep the last `maxEvents` real events (default 20, integer > 0). */
export interface SlidingWindowStrategy {
  type: 'sliding-window';
  maxEvents: number;
}

/** `turn-window`: keep the last `maxTurns` turns (default 10, integer > 0); the preamble stays. */
export interface TurnWindowStrategy {
  type: 'turn-window';
  maxTurns: number;
}

/** `token-count`: keep the newest real events that fit `maxTokens` (default 4000, integer > 0). */
export interface TokenCountStrategy {
  type: 'token-count';
  maxTokens: number;
}

/**
 * `recursive-summarization`: cut as sliding-window with `maxEventsToKeep` (default 10, > 0) and
 * replace the archived part (and the old summaries) with one new summary. `overlapSize`
 * (default 2, ≥ 0 and < maxEventsToKeep) kept events are sent as context not to summarize.
 */
export interface RecursiveSummarizationStrategy {
  type: 'recursive-summarization';
  maxEventsToKeep: number;
  overlapSize: number;
  shadowPrompt: string;
  systemPrompt: string;
}

/**
 * `rolling-summary`: fold the real events older than the last `keepTurns` turns (default 2, > 0)
 * into a summary, but only once cost(summaries) + cost(older) > `summarizeAtTokens`
 * (default 2500, > 0).
 */
export interface RollingSummaryStrategy {
  type: 'rolling-summary';
  keepTurns: number;
  summarizeAtTokens: number;
  shadowPrompt: string;
  systemPrompt: string;
}

/** A strategy with every parameter resolved (defaults applied, validated). */
export type Strategy = SlidingWindowStrategy | TurnWindowStrategy | TokenCountStrategy | RecursiveSummarizationStrategy | RollingSummaryStrategy;

/** The strategy names of DESIGN §3.4. */
export type StrategyType = Strategy['type'];

/** A trigger (DESIGN §3.5). Absent trigger = always fires. */
export type Trigger =
  | { type: 'turn-count'; maxTurns: number }
  | { type: 'token-count'; threshold: number }
  | { type: 'any-of'; triggers: Trigger[] }
  | { type: 'all-of'; triggers: Trigger[] };

/** Outcomes of a pass (DESIGN §3.6). `conflict` is produced by the service, not by the library. */
export type CompactionOutcome = 'compacted' | 'noop' | 'not-triggered' | 'conflict' | 'failed';

/**
 * Why a pass archived nothing (DESIGN §3.6):
 * - `within-limit`: the strategy asks for no cut (nothing to archive);
 * - `newest-turn-only`: the only candidate is the newest turn, which is always kept;
 * - `open-tool-call`: tool safety moved the cut back to the start; `toolCallId` is the call and
 *   `eventId` the assistant event holding it.
 */
export type NoopReason = { reason: 'within-limit' } | { reason: 'newest-turn-only' } | { reason: 'open-tool-call'; toolCallId: string; eventId: string };

/**
 * What the summarizer must be given for one pass. The library never calls a model: the plan
 * carries this request and {@link completePlan} takes the reply.
 */
export interface SummaryRequest {
  /** System prompt for the summarizer (the strategy's `systemPrompt`, or the default recap prompt). */
  systemPrompt: string;
  /** The shadow prompt stored with the new summary (rendered as the user side of it). */
  shadowPrompt: string;
  /** Texts of the summaries currently active (to merge, not drop), in log order. */
  currentSummaries: string[];
  /** Formatted texts (§3.1) of the real events being archived, in log order. Never system messages. */
  toSummarize: string[];
  /** Formatted texts of the first `overlapSize` kept real events: context, not to be summarized. */
  overlap: string[];
  /** Ids of the events the new summary covers (archived real events and old summaries), log order. */
  coveredIds: string[];
  /**
   * The most the new summary should cost, both formatted lines (shadow prompt and text, DESIGN
   * §3.1) in the unit of the estimator the events were costed with; see `summaryTokenBudget`.
   * Set by the planner; absent in requests built elsewhere (no budget then, only the
   * summarizer's own bounds). A summarizer keeps within it where it can; a summary that still
   * costs more is accepted (the pass then reports `tokensEstimatedSaved` floored at 0).
   */
  maxSummaryTokens?: number;
}

/**
 * The result of planning one pass, before any summarizer call.
 *
 * `archivedIds` and `keptIds` partition the active events given to the planner, each in log order.
 * When `summaryRequest` is present the plan is not final: the caller calls the summarizer and
 * passes the reply to {@link completePlan}; `summaryInsertBeforeId` is the kept real event the new
 * summary goes immediately before.
 */
export interface CompactionPlan {
  /** `compacted` (something archived or a summary to write), `noop`, or `not-triggered`. */
  outcome: 'compacted' | 'noop' | 'not-triggered';
  strategy: Strategy;
  trigger: Trigger | null;
  /** Whether the trigger fired (true when there is no trigger). */
  triggerFired: boolean;
  /** Ids of every active event given to the planner, log order (= keptIds ∪ archivedIds). */
  activeIds: string[];
  /** Ids archived by this pass, log order (superseded system messages included). */
  archivedIds: string[];
  /** Ids of the active events kept, log order (no new summary in it). */
  keptIds: string[];
  /** Ids of superseded system messages (a subset of `archivedIds`); they stay archived even if the summarizer fails. */
  supersededSystemIds: string[];
  /** Why each of `archivedIds` is archived ({@link ArchiveReasons}); absent from plans that archive nothing. */
  archiveReasons?: ArchiveReasons;
  /** Present when outcome is `noop`: why nothing was archived. */
  noop?: NoopReason;
  /** Present when a summarizer call is needed. */
  summaryRequest?: SummaryRequest;
  /** Id of the kept real event the new summary goes before; present with `summaryRequest`. */
  summaryInsertBeforeId?: string;
  /** Cost of all active events before the pass (estimator units). */
  tokensBefore: number;
  /** Cost of the archived events (estimator units), old summaries and superseded system messages included. */
  tokensArchived: number;
  /**
   * Cost of the superseded system messages alone (estimator units): what stays archived when the
   * summarizer fails (DESIGN §3.7), used by {@link completePlan} for the failure accounting.
   */
  tokensSuperseded: number;
}

/**
 * The summarizer's reply to a {@link SummaryRequest}, or its failure: its reason and kind (from the
 * summarizer that failed, the one place both are chosen; absent or outside the closed set: `other`).
 */
export type SummaryReply = { text: string } | { failure: string; failureKind?: CompactionFailureKind };

/** The new summary written by a pass. `tokens` is its cost (both formatted lines) in estimator units. */
export interface NewSummary {
  id: string;
  shadowPrompt: string;
  text: string;
  insertBeforeId: string;
  coveredIds: string[];
  tokens: number;
}

/**
 * The final result of a pass (DESIGN §3.6).
 *
 * `keptIds` is the active window after the pass in log order, with the new summary's id in its
 * place. `tokensEstimatedSaved` = cost(archived) − cost(new summary), floored at 0.
 */
export interface CompactionResult {
  outcome: CompactionOutcome;
  archivedIds: string[];
  keptIds: string[];
  summary?: NewSummary;
  tokensBefore: number;
  tokensAfter: number;
  tokensEstimatedSaved: number;
  /** Why the pass failed (summarizer failure, blank reply); present when outcome is `failed`. */
  failureReason?: string;
  /** The kind of the failure, one of `COMPACTION_FAILURE_KINDS` (see `failure-kind.ts`); present when outcome is `failed`. */
  failureKind?: CompactionFailureKind;
  /**
   * With a new summary whose request had a budget: the budget, the summary's cost, whether it was
   * exceeded and what was done then (`summaryBudgetUse`).
   */
  summaryBudget?: SummaryBudgetUse;
}

/**
 * Why a pass archives each event it archives: a partition of its archived ids (log order in each),
 * for the audit trail (which rule of DESIGN §3 sent each event out of the window):
 * - `strategyCut`: real events before the strategy's own cut (DESIGN §3.4);
 * - `turnStart`: real events the strategy's cut would have kept, archived because the cut moved
 *   forward to the next user event (DESIGN §3.3.1; token-count's leading preamble too);
 * - `supersededSystem`: stored system messages a newer one replaced (DESIGN §3.2);
 * - `replacedSummaries`: summaries folded into the new one (DESIGN §3.2, summarizing strategies).
 */
export interface ArchiveReasons {
  strategyCut: string[];
  turnStart: string[];
  supersededSystem: string[];
  replacedSummaries: string[];
}
