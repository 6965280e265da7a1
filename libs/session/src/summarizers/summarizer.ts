/**
 * The summarizer port (DESIGN §3.7): turns a {@link SummaryRequest} into summary text.
 *
 * Implementations: {@link OpenAiSummarizer} (any OpenAI-compatible chat-completions endpoint)
 * and {@link ExtractiveSummarizer} (deterministic, no model; the default when no endpoint is
 * configured). The write side records `identity` and the usage figures of every outcome with
 * the decision it makes (summary inserted, or compaction failed).
 */
import type { CompactionFailureKind, SummaryRequest, TokenEstimator } from '@lib/compaction';

/** Which summarizer wrote (or failed to write) a summary; recorded with every decision. */
export interface SummarizerIdentityInfo {
  /** `openai-compatible` for a chat-completions endpoint, `extractive` for the built-in one. */
  kind: 'openai-compatible' | 'extractive';
  /** Model name sent to the endpoint (e.g. `gpt-4o-mini`), or the extractive summarizer's version name. */
  model: string;
}

/** Usage figures of one `summarize` call, summed over every model call it made. */
export interface SummarizerUsage {
  /**
   * Model calls made: every HTTP request that reached the endpoint, one per chunk plus every
   * retry of a failed attempt (a timed-out or reset attempt included: it may have been billed). An
   * attempt that never connected to the endpoint (connection refused, host not found) reached no
   * model and is not counted: a pass whose every attempt did so records `calls: 0`.
   */
  calls: number;
  /** Prompt tokens reported by the endpoint, summed over the calls that reported usage. */
  promptTokens: number;
  /** Completion tokens reported by the endpoint, summed over the calls that reported usage. */
  completionTokens: number;
  /**
   * Of `calls`, those that were the HTTP client's retry of a failed attempt (SUMMARIZER_MAX_RETRIES).
   * Absent means 0 (summarizers that never retry, decisions recorded before it was counted).
   */
  retries?: number;
  /**
   * Of `calls`, those whose token usage the endpoint did not report: an attempt that failed (timed
   * out, reset, an HTTP error answer) or a reply without readable `usage` (absent, not numbers, only
   * `total_tokens`). Their tokens are unknown, not 0: the token figures cover the other calls only.
   * Absent means 0 (as for `retries`).
   */
  unreportedUsageCalls?: number;
  /**
   * The models the endpoint said answered the calls (each reply's `model`, e.g. `gpt-4o-2024-08-06`
   * when `gpt-4o` was asked for), distinct, in the order first seen, each read by
   * `answeredModelName` (at most `MAX_ANSWERED_MODEL_LENGTH` characters) and at most
   * `MAX_ANSWERED_MODELS` of them (`mergeAnsweredModels`). A reply that names none (no `model`,
   * not a string, blank) and a failed attempt add nothing. Absent means none (the extractive
   * summarizer, decisions recorded before it was).
   */
  answeredModels?: string[];
}

/**
 * The result of a summarize call. `ok: true` carries the summary text (trimmed, never blank).
 * `ok: false` carries a `reason` that says what happened (timeout, HTTP status, rate limit,
 * malformed JSON, blank reply, refusal, …) and never contains message text or an API key, and
 * `failureKind`, the same fault as one of the closed set `COMPACTION_FAILURE_KINDS` (`credentials`,
 * `rate_limited`, `invalid_reply`, …, see `failure-kind.ts` of `@lib/compaction`), chosen where the
 * reason is built so the two never disagree (both summarizers of this library always set it; a
 * summarizer that sets none, or one outside the set, is recorded as `other`);
 * `interrupted: 'shutdown'` when the call was aborted because the service shut down (not the
 * model's failure: the pass is recorded failed, but the auto-compaction backoff does not count it).
 */
export type SummarizerOutcome =
  | ({ ok: true; text: string } & SummarizerUsage)
  | ({ ok: false; reason: string; failureKind?: CompactionFailureKind; interrupted?: 'shutdown' } & SummarizerUsage);

/** Options of one summarize call. */
export interface SummarizeOptions {
  /** Aborts the call (an aborted call resolves to `ok: false`, reason `aborted`). */
  signal?: AbortSignal;
  /**
   * The estimator the session's events were costed with: the unit of `request.maxSummaryTokens`.
   * Without it the summary budget is not applied (only the summarizer's own bounds).
   */
  estimator?: TokenEstimator;
  /**
   * The longest summary the caller can store, in characters (Unicode code points; the service's
   * `MAX_TEXT_LENGTH`), integer ≥ 1. The model summarizer fails the pass at the first reply longer
   * than it (intermediate chunk replies included; reason from `replyLengthRefusal`); the
   * extractive summarizer keeps its text within it. Absent: no such bound (the write side still
   * applies `replyLengthRefusal` to the final text of every summarizer).
   */
  maxTextLength?: number;
  /**
   * Model calls (one per chunk, retries aside) already made for the same compaction pass by its
   * earlier attempts (a pass planned again after another decision landed while its model call
   * ran): counted against the summarizer's bound on a pass's calls (`SUMMARIZER_MAX_CALLS_PER_PASS`),
   * so planning again does not renew it. Integer ≥ 0; absent: 0.
   */
  callsSpent?: number;
  /**
   * Awaited before each model call of a pass after its first (between chunks), so the caller can
   * tell whether the pass is still wanted: it aborts `signal` when it is not (another decision
   * landed that the pass's plan cannot be rebased onto, its policy changed, the session was erased;
   * newcomer ncrecheck63 F7), and the summarizer then makes no further call (`failureKind` `aborted`).
   */
  beforeNextCall?: () => Promise<void>;
}

/**
 * Summarizes a request. `summarize` never throws for model faults (timeouts, 5xx, 429 after
 * retries, malformed JSON, blank or whitespace replies, refusals, replies over
 * `options.maxTextLength`): they resolve to `{ ok: false, reason }`. Callers should still guard against a programming error throwing.
 */
export interface Summarizer {
  readonly identity: SummarizerIdentityInfo;
  /**
   * The bound on one model call's input, when the summarizer has one: strategies whose fixed
   * prompt parts leave too little of it for events are refused up front (DESIGN §3.4).
   */
  readonly inputBound?: SummarizerInputBound;
  summarize(request: SummaryRequest, options?: SummarizeOptions): Promise<SummarizerOutcome>;
  /**
   * Milliseconds left of the pause the model endpoint's rate limit (HTTP 429) set: until then no
   * call is sent to it, every pass's calls wait (or fail at once when it is longer than they wait);
   * 0 when there is none. Absent for a summarizer that never pauses (the extractive one).
   */
  pauseRemainingMs?(): number;
  /**
   * The model calls a pass would make for `request` as planned now (`planned`, one per chunk; replies
   * longer than planned may add some) and the bound on a pass's calls (`max`,
   * `SUMMARIZER_MAX_CALLS_PER_PASS`): a dry run's preview of its cost. Null when it cannot be planned.
   * Absent for a summarizer that calls no model (the extractive one).
   */
  plannedCalls?(request: SummaryRequest, options?: Pick<SummarizeOptions, 'estimator'>): Promise<{ planned: number; max: number } | null>;
}

/** A summarizer's input bound: `maxInputTokens` in the unit of `estimator` (system + user message). */
export interface SummarizerInputBound {
  maxInputTokens: number;
  estimator: TokenEstimator;
}
