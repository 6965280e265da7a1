/**
 * Refuses, before anything is read, a summarizing strategy whose fixed prompt parts leave too
 * little of the summarizer's input bound for events (DESIGN §3.4); the rule itself is
 * `checkSummarizerPromptsFit` of the compaction library.
 */
import { checkSummarizerPromptsFit, InvalidParameterError, type Strategy } from '@lib/compaction';
import { InvalidRequestError } from '../errors';
import type { Summarizer } from '../summarizers/summarizer';

/**
 * Checks `strategy` against `summarizer.inputBound` (no bound, or a strategy that never
 * summarizes: nothing to check).
 * @throws InvalidRequestError (400 `invalid_parameter`) naming `strategy.systemPrompt` (or
 *   `strategy.shadowPrompt`, `strategy.overlapSize`) and the room left for events.
 */
export function checkStrategyFitsSummarizer(strategy: Strategy, summarizer: Summarizer): void {
  const bound = summarizer.inputBound;
  if (!bound) return;
  try {
    checkSummarizerPromptsFit(strategy, bound.maxInputTokens, bound.estimator);
  } catch (err) {
    if (!(err instanceof InvalidParameterError)) throw err;
    const parameter = `strategy.${err.parameter}`;
    throw new InvalidRequestError(parameter, `${parameter}: must be ${err.allowed} (SUMMARIZER_MAX_INPUT_TOKENS sets the bound)`, 'invalid_parameter');
  }
}
