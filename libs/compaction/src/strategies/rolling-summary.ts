/** `rolling-summary` (DESIGN §3.4). */
import type { RollingSummaryStrategy } from '../compaction-types';
import type { CostedEvent } from '../session-event';
import type { RawCut, StrategyInput } from './strategy-cut';

/**
 * The raw cut before the last `keepTurns` turns: "older" = the real events before them (with
 * fewer turns than `keepTurns`, older is the preamble alone; with no user event, nothing).
 * Whether it fires is {@link rollingSummaryFires}, decided after DESIGN §3.3 settles the cut.
 */
export function rollingSummaryCut(input: StrategyInput, strategy: Pick<RollingSummaryStrategy, 'keepTurns'>): RawCut {
  const starts = input.turnStarts;
  if (starts.length === 0) return { rawCut: null, lowest: 0 };
  const rawCut = starts.length > strategy.keepTurns ? starts[starts.length - strategy.keepTurns] : starts[0];
  return { rawCut, lowest: 0 };
}

/**
 * Rolling-summary fires only when there is something older (`cut > 0`) and cost(current
 * summaries) + cost(older real events) > `summarizeAtTokens`. Below the threshold nothing changes:
 * older turns stay verbatim, never silently dropped. Only adds carried costs.
 */
export function rollingSummaryFires(
  real: readonly CostedEvent[],
  cut: number,
  summaryTokens: number,
  strategy: Pick<RollingSummaryStrategy, 'summarizeAtTokens'>,
): boolean {
  if (cut <= 0) return false;
  let older = 0;
  for (let i = 0; i < cut; i++) older += real[i].tokens;
  return summaryTokens + older > strategy.summarizeAtTokens;
}
