/**
 * Whether the fixed parts of a summarizer request fit the summarizer's input bound (DESIGN §3.4,
 * §3.7): checked when the bound is configured (start-up) and when a summarizing strategy is
 * accepted (a compaction request or a policy), never discovered as a failed pass later.
 */
import type { Strategy } from './compaction-types';
import { InvalidParameterError } from './invalid-parameter-error';
import { JOIN_SLACK, MIN_EVENT_ROOM, summarizerInputCost } from './summary-chunks';
import { SUMMARIZER_SECTION, summaryLengthSection } from './summarizer-prompt';
import type { TokenEstimator } from './token-estimators';

/** The fixed parts of a summarizer request: the strategy's prompts and how many overlap events go with it. */
export interface SummarizerPromptParts {
  systemPrompt: string;
  shadowPrompt: string;
  /** Kept events sent as context (recursive-summarization `overlapSize`; 0 for rolling-summary). */
  overlapSize: number;
}

/** Largest bound {@link minimumSummarizerInputTokens} searches, estimator units. */
const MAX_SEARCHED_BOUND = 100_000_000;

/**
 * Cost of the fixed parts that do not depend on the bound: system prompt, empty user sections,
 * shadow prompt, and the length instruction every call ends with (at its longest: the model
 * summarizer takes its cost off the bound before it plans; a bound that could not hold it used to
 * drop it, and the model was told no length: newcomer ncsumm62 F1).
 */
function fixedCost(parts: SummarizerPromptParts, estimator: TokenEstimator): number {
  const empty = { systemPrompt: parts.systemPrompt, shadowPrompt: parts.shadowPrompt, currentSummaries: [], toSummarize: [], overlap: [], coveredIds: [] };
  const lengthInstruction = estimator.count(summaryLengthSection({ max: LONGEST_LENGTH_ASKED, unit: 'characters' })) + JOIN_SLACK;
  return summarizerInputCost(empty, estimator) + estimator.count(parts.shadowPrompt) + lengthInstruction;
}

/** The longest length a call's instruction names (a summary budget's digits are at most these many). */
const LONGEST_LENGTH_ASKED = 999_999_999;

function roomFor(fixed: number, headers: { summary: number; context: number }, overlapSize: number, maxInputTokens: number): number {
  const available = maxInputTokens - fixed - JOIN_SLACK;
  const overlap = overlapSize > 0 ? Math.max(Math.floor(available * 0.15), headers.context + 2 * overlapSize) : 0;
  return Math.ceil((available - overlap) / 2) - headers.summary - 1;
}

function headerCosts(estimator: TokenEstimator): { summary: number; context: number } {
  return { summary: estimator.count(SUMMARIZER_SECTION.previousSummary) + 2, context: estimator.count(SUMMARIZER_SECTION.context) + 2 };
}

/**
 * The room (estimator units) every chunk of a summarizer request with these fixed parts keeps for
 * events under `maxInputTokens`, in the worst case `planSummaryChunks` allows: the prompts, the
 * section headings and the join slack taken, the overlap at its cap, and half of the rest held
 * for the previous or running summary. `planSummaryChunks` accepts a request with one current
 * summary whenever this is ≥ {@link MIN_EVENT_ROOM}. May be negative.
 */
export function summarizerEventRoom(parts: SummarizerPromptParts, maxInputTokens: number, estimator: TokenEstimator): number {
  return roomFor(fixedCost(parts, estimator), headerCosts(estimator), parts.overlapSize, maxInputTokens);
}

/**
 * The smallest bound (estimator units) whose {@link summarizerEventRoom} is at least
 * {@link MIN_EVENT_ROOM} for these fixed parts. Costs the prompts once, then only adds.
 */
export function minimumSummarizerInputTokens(parts: SummarizerPromptParts, estimator: TokenEstimator): number {
  const fixed = fixedCost(parts, estimator);
  const headers = headerCosts(estimator);
  let lo = 1;
  let hi = MAX_SEARCHED_BOUND;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (roomFor(fixed, headers, parts.overlapSize, mid) >= MIN_EVENT_ROOM) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Rejects a summarizing strategy whose fixed parts leave fewer than {@link MIN_EVENT_ROOM} units
 * of `maxInputTokens` for events (DESIGN §3.4). Non-summarizing strategies always pass.
 *
 * @throws InvalidParameterError naming `systemPrompt` (or `shadowPrompt` when it is the larger
 *   prompt, or `overlapSize` when the prompts alone would fit), with the room left and the bound.
 */
export function checkSummarizerPromptsFit(strategy: Strategy, maxInputTokens: number, estimator: TokenEstimator): void {
  if (strategy.type !== 'recursive-summarization' && strategy.type !== 'rolling-summary') return;
  const parts: SummarizerPromptParts = {
    systemPrompt: strategy.systemPrompt,
    shadowPrompt: strategy.shadowPrompt,
    overlapSize: strategy.type === 'recursive-summarization' ? strategy.overlapSize : 0,
  };
  const room = summarizerEventRoom(parts, maxInputTokens, estimator);
  if (room >= MIN_EVENT_ROOM) return;
  const promptsFit = parts.overlapSize > 0 && summarizerEventRoom({ ...parts, overlapSize: 0 }, maxInputTokens, estimator) >= MIN_EVENT_ROOM;
  const parameter = promptsFit ? 'overlapSize' : estimator.count(parts.shadowPrompt) > estimator.count(parts.systemPrompt) ? 'shadowPrompt' : 'systemPrompt';
  throw new InvalidParameterError(
    parameter,
    `shorter: with it the summarizer's input bound of ${maxInputTokens} ${estimator.name} units leaves ${Math.max(0, room)} for the events to summarize, ` +
      `and at least ${MIN_EVENT_ROOM} are needed`,
  );
}
