/**
 * What a strategy decides before the shared guarantees of DESIGN §3.3 are applied.
 */
import type { CostedEvent } from '../session-event';

/** The figures a strategy may look at (DESIGN §3.2 classes), all carried costs. */
export interface StrategyInput {
  /** The real events of the pass, log order. */
  real: readonly CostedEvent[];
  /** Positions in `real` of the user events (turn starts), ascending. */
  turnStarts: readonly number[];
  /** Cost of the pinned system message (0 when none), estimator units. */
  pinnedSystemTokens: number;
  /** Cost of all active summaries, estimator units. */
  summaryTokens: number;
}

/**
 * A strategy's raw decision: the real events `[lowest, rawCut)` should be archived, before
 * `settleCut` applies DESIGN §3.3. `rawCut` null = no cut.
 */
export interface RawCut {
  rawCut: number | null;
  /** First position that may be archived: 0, or the preamble length for turn-window. */
  lowest: number;
}
