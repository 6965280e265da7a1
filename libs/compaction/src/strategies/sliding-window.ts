/** `sliding-window` (DESIGN §3.4). */
import type { SlidingWindowStrategy } from '../compaction-types';
import type { RawCut, StrategyInput } from './strategy-cut';

/**
 * Keep the last `maxEvents` real events: if real events ≤ maxEvents, no cut; else the raw cut is
 * at count − maxEvents (then DESIGN §3.3 moves it). Summaries and system messages use no slot.
 * Also the cut rule of `recursive-summarization` (with `maxEventsToKeep`).
 */
export function slidingWindowCut(input: StrategyInput, strategy: Pick<SlidingWindowStrategy, 'maxEvents'>): RawCut {
  const n = input.real.length;
  return { rawCut: n <= strategy.maxEvents ? null : n - strategy.maxEvents, lowest: 0 };
}
