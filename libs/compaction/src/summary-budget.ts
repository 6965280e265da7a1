/**
 * How large a new summary may be (the summary budget): a summary is sized so that the pass that
 * writes it leaves room, and (rolling-summary) the next pass waits for new content.
 */
import type { RecursiveSummarizationStrategy, RollingSummaryStrategy, SummaryRequest } from './compaction-types';
import type { SummaryLengthLimit } from './summarizer-prompt';
import type { TokenEstimator } from './token-estimators';

/**
 * The budget of the summary a summarizing pass writes: the most its summary event should cost
 * (both formatted lines, DESIGN §3.1), in the unit of the estimator the events were costed with.
 *
 * - `rolling-summary`: half of `summarizeAtTokens` (at least 1). The pass fires when cost(summaries)
 *   + cost(older) > summarizeAtTokens; with the new summary at most half of it, the next pass
 *   waits until more than the other half of new content has left the last `keepTurns` turns,
 *   instead of firing again on the summary alone after every turn.
 * - `recursive-summarization`: `replacedTokens` (at least 1), the cost of what the summary
 *   replaces (the archived real events and the old summaries): the summary is never meant to be
 *   larger than what it replaces. The summarizer's own bounds still apply on top (the extractive
 *   summarizer's `maxChars`, the model's reply).
 *
 * @param replacedTokens cost of the archived real events and old summaries (superseded system
 *   messages excluded), estimator units, ≥ 0.
 */
export function summaryTokenBudget(
  strategy: Pick<RollingSummaryStrategy, 'type' | 'summarizeAtTokens'> | Pick<RecursiveSummarizationStrategy, 'type'>,
  replacedTokens: number,
): number {
  if (strategy.type === 'rolling-summary') return Math.max(1, Math.floor(strategy.summarizeAtTokens / 2));
  return Math.max(1, Math.floor(replacedTokens));
}

/**
 * The part of `request.maxSummaryTokens` left for the summary text itself: the budget minus the
 * cost of the shadow-prompt line (`User: <shadow prompt>`) and of the `Assistant: ` prefix of the
 * text line, floored at 0; undefined when the request has no budget. Units: `estimator`'s (which
 * must be the one the events were costed with).
 */
export function summaryTextBudget(request: Pick<SummaryRequest, 'maxSummaryTokens' | 'shadowPrompt'>, estimator: TokenEstimator): number | undefined {
  const budget = request.maxSummaryTokens;
  if (budget === undefined || !Number.isFinite(budget)) return undefined;
  return Math.max(0, Math.floor(budget) - estimator.count(`User: ${request.shadowPrompt}`) - estimator.count('Assistant: '));
}

/** Least length a model is asked for (tokens; four times as many for characters): a tighter budget would say nothing. */
export const MIN_SUMMARY_LENGTH_TOKENS = 32;

/**
 * What a model is told about the length of its recap for `request` ({@link summaryTextBudget},
 * at least {@link MIN_SUMMARY_LENGTH_TOKENS} tokens or four times as many characters): in
 * characters when `estimator` is `chars`, else in tokens. Undefined when the request has no budget.
 */
export function summaryLengthLimit(
  request: Pick<SummaryRequest, 'maxSummaryTokens' | 'shadowPrompt'>,
  estimator: TokenEstimator,
): SummaryLengthLimit | undefined {
  const text = summaryTextBudget(request, estimator);
  if (text === undefined) return undefined;
  return estimator.name === 'chars'
    ? { max: Math.max(4 * MIN_SUMMARY_LENGTH_TOKENS, text), unit: 'characters' }
    : { max: Math.max(MIN_SUMMARY_LENGTH_TOKENS, text), unit: 'tokens' };
}

/**
 * What a model is told about the length of its reply to a chunk that is not the last of a pass
 * (DESIGN §3.7: each chunk folds into the running summary): `limit` (the pass's, see
 * {@link summaryLengthLimit}), but at most `room`, the most the next call can carry of that reply
 * (`runningSummaryRoom` of the pass's request and the summarizer's input bound, in the
 * summarizer's tokens: a quarter of the bound, less when the prompts take much of it), and at
 * least {@link MIN_SUMMARY_LENGTH_TOKENS} — in characters for a `chars` session, as many
 * characters as that room has tokens (a token is rarely shorter than a character). Asked for the
 * whole pass's budget, a model could reply with more than the next call can carry (a newcomer saw
 * calls told "at most about 47,292 tokens" with a bound of 12,000), and such a reply fails the pass.
 */
export function runningSummaryLengthLimit(limit: SummaryLengthLimit, room: number): SummaryLengthLimit {
  const asked = Math.max(limit.unit === 'characters' ? 4 * MIN_SUMMARY_LENGTH_TOKENS : MIN_SUMMARY_LENGTH_TOKENS, room);
  return { max: Math.min(limit.max, asked), unit: limit.unit };
}

/**
 * What a pass did with its new summary against the summary budget, as a decision records it:
 * `tokens` the budget (`request.maxSummaryTokens`, floored; see {@link summaryTokenBudget}),
 * `summaryTokens` the summary event's cost (both formatted lines, DESIGN §3.1), both in the unit
 * of the estimator the events were costed with (tokens, or UTF-16 code units for `chars`);
 * `exceeded` whether the summary costs more than the budget; `overBudget` what was done with a
 * summary over it: `kept` (stored whole, as the summarizer wrote it: never cut, never refused; the
 * pass then saves `summaryTokens − tokens` less than the budget allowed, see `completePlan`),
 * null when within the budget.
 */
export interface SummaryBudgetUse {
  tokens: number;
  summaryTokens: number;
  exceeded: boolean;
  overBudget: 'kept' | null;
}

/**
 * The one rule of {@link SummaryBudgetUse}: the budget `maxSummaryTokens` (as the request carries
 * it) against the cost of the summary written, `summaryTokens` (≥ 0, the estimator's unit).
 * Undefined when the request had no finite budget (a request built outside the planner): nothing
 * to compare with. A summary over its budget is kept (DESIGN §3.7 leaves its length to the
 * summarizer; the pass reports what it saved). Pure.
 */
export function summaryBudgetUse(maxSummaryTokens: number | undefined, summaryTokens: number): SummaryBudgetUse | undefined {
  if (maxSummaryTokens === undefined || !Number.isFinite(maxSummaryTokens)) return undefined;
  const tokens = Math.max(0, Math.floor(maxSummaryTokens));
  const exceeded = summaryTokens > tokens;
  return { tokens, summaryTokens, exceeded, overBudget: exceeded ? 'kept' : null };
}
