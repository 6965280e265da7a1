/** `recursive-summarization` (DESIGN §3.4). */
import type { RecursiveSummarizationStrategy } from '../compaction-types';
import { slidingWindowCut } from './sliding-window';
import type { RawCut, StrategyInput } from './strategy-cut';

/**
 * Cut as sliding-window with `maxEventsToKeep`. When the settled cut archives something, the
 * planner asks for one new summary of the archived real events merged with the current
 * summaries (which it archives), with the first `overlapSize` kept real events as context.
 */
export function recursiveSummarizationCut(input: StrategyInput, strategy: Pick<RecursiveSummarizationStrategy, 'maxEventsToKeep'>): RawCut {
  return slidingWindowCut(input, { maxEvents: strategy.maxEventsToKeep });
}
