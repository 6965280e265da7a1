/** `token-count` (DESIGN §3.4). */
import type { TokenCountStrategy } from '../compaction-types';
import type { RawCut, StrategyInput } from './strategy-cut';

/**
 * Keep the newest real events that fit: budget = maxTokens − cost(pinned system) − cost(all
 * summaries); walk real events newest to oldest, keeping while the running sum stays ≤ budget,
 * stopping at the first that does not fit (the kept part is contiguous). The raw cut is just after
 * that event, or 0 when everything fits: there is no "everything fits" shortcut, so DESIGN §3.3
 * still moves a cut at a leading preamble forward to the first user event. A budget ≤ 0 puts the
 * raw cut at the end, which §3.3 turns into "keep only the newest turn". Only adds carried costs.
 */
export function tokenCountCut(input: StrategyInput, strategy: Pick<TokenCountStrategy, 'maxTokens'>): RawCut {
  const { real } = input;
  const budget = strategy.maxTokens - input.pinnedSystemTokens - input.summaryTokens;
  if (real.length === 0) return { rawCut: null, lowest: 0 };
  if (budget <= 0) return { rawCut: real.length, lowest: 0 };
  let sum = 0;
  for (let i = real.length - 1; i >= 0; i--) {
    sum += real[i].tokens;
    if (sum > budget) return { rawCut: i + 1, lowest: 0 };
  }
  return { rawCut: 0, lowest: 0 };
}
