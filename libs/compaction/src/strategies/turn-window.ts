/** `turn-window` (DESIGN §3.4). */
import type { TurnWindowStrategy } from '../compaction-types';
import type { RawCut, StrategyInput } from './strategy-cut';

/**
 * Keep the last `maxTurns` turns: if turns ≤ maxTurns, no cut; else archive the oldest turns
 * whole. The preamble (real events before the first user event) is always kept in place, so the
 * archived range starts at the first user event.
 */
export function turnWindowCut(input: StrategyInput, strategy: Pick<TurnWindowStrategy, 'maxTurns'>): RawCut {
  const starts = input.turnStarts;
  const lowest = starts.length > 0 ? starts[0] : input.real.length;
  if (starts.length <= strategy.maxTurns) return { rawCut: null, lowest };
  return { rawCut: starts[starts.length - strategy.maxTurns], lowest };
}
