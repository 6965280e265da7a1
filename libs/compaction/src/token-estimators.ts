/**
 * Token estimators (DESIGN §3.1): `cl100k_base` and `o200k_base` (real tokenizers, through
 * gpt-tokenizer) and `chars` (UTF-16 length). Callers may plug in their own {@link TokenEstimator}
 * anywhere one is taken.
 */
import { formatEventLines } from './formatter';
import type { CostedEvent, SessionEvent } from './session-event';
import { BpeTokenCounter, PieceCountTable } from './bpe-token-counter';

/**
 * Counts the cost of a text. `count` must be pure, synchronous, and return a finite integer ≥ 0
 * for any JavaScript string. The unit is the estimator's own: tokens for the tiktoken
 * estimators, UTF-16 code units for `chars`.
 */
export interface TokenEstimator {
  /** Stable name, recorded with decisions (e.g. `cl100k_base`). */
  readonly name: string;
  /** Cost of `text` in this estimator's unit. */
  count(text: string): number;
  /**
   * Optional: `count(text)` when that is at most `limit`, else any number over `limit`, possibly
   * found without reading the whole text (the built-in tokenizers stop at the first pre-token past
   * the limit). Used through {@link fitsTokens}.
   */
  countUpTo?(text: string, limit: number): number;
}

/**
 * True when `estimator.count(text) <= limit` (the estimator's unit). The same answer as that
 * comparison, through `countUpTo` where the estimator has it: a text far over a small limit (a
 * search over truncations of megabytes, `fitTextToTokens`) then costs about the limit, not the text.
 */
export function fitsTokens(text: string, limit: number, estimator: TokenEstimator): boolean {
  return (estimator.countUpTo ? estimator.countUpTo(text, limit) : estimator.count(text)) <= limit;
}

/** The built-in estimators of DESIGN §3.1. */
export type EstimatorName = 'cl100k_base' | 'o200k_base' | 'chars';

/** Every built-in estimator name; `cl100k_base` (the default) first. */
export const ESTIMATOR_NAMES: readonly EstimatorName[] = ['cl100k_base', 'o200k_base', 'chars'];

/** The default estimator (DESIGN §3.1). */
export const DEFAULT_ESTIMATOR_NAME: EstimatorName = 'cl100k_base';

/** True when `x` is one of {@link ESTIMATOR_NAMES}. */
export function isEstimatorName(x: unknown): x is EstimatorName {
  return typeof x === 'string' && (ESTIMATOR_NAMES as readonly string[]).includes(x);
}

/**
 * An estimator that can also count in steps, so a caller can interleave other work on one
 * thread: `countInSteps(text)` yields now and then and returns `count(text)`.
 */
export interface SteppedTokenEstimator extends TokenEstimator {
  countInSteps(text: string): Generator<void, number, void>;
}

/** `chars`: the UTF-16 length of the text (`text.length`), so a surrogate pair counts 2. */
const charsEstimator: SteppedTokenEstimator = {
  name: 'chars',
  count: (text: string) => text.length,
  // eslint-disable-next-line require-yield
  countInSteps: function* (text: string) {
    return text.length;
  },
};

function loadEncoding(name: 'cl100k_base' | 'o200k_base'): unknown {
  // Loaded lazily, one encoding at a time. A plain `require` because the package exposes these
  // paths through its `exports` map, which TypeScript's node10 resolution does not read.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = (name === 'cl100k_base' ? require('gpt-tokenizer/encoding/cl100k_base') : require('gpt-tokenizer/encoding/o200k_base')) as {
    default: unknown;
  };
  return module.default;
}

/**
 * The short pre-tokens' counts of both built-in encodings, in one table: an event's cost is counted
 * under `cl100k_base`, then under `o200k_base`, and their pre-tokens are mostly the same strings
 * (see {@link PieceCountTable}).
 */
const sharedPieceCounts = new PieceCountTable();

/**
 * A BPE tokenizer estimator. Counts are those of OpenAI's tiktoken (and js-tiktoken, and
 * gpt-tokenizer, whose vocabulary and pre-tokenizer are used; checked on the shared conversations
 * and on adversarial texts, see the estimator tests and benchmark 5), in time near-linear in the
 * text whatever it holds ({@link BpeTokenCounter}). Special-token text such as "<|endoftext|>" in
 * user content is counted as ordinary text, so counting never throws.
 */
function tiktokenEstimator(name: 'cl100k_base' | 'o200k_base'): SteppedTokenEstimator {
  const counter = new BpeTokenCounter(loadEncoding(name), { table: sharedPieceCounts, slot: name === 'cl100k_base' ? 0 : 1 });
  return {
    name,
    count: (text: string) => counter.count(text),
    countUpTo: (text: string, limit: number) => counter.countUpTo(text, limit),
    countInSteps: (text: string) => counter.countInSteps(text),
  };
}

const cache = new Map<EstimatorName, SteppedTokenEstimator>();

/**
 * The built-in estimator `name`, created on first use and cached (the same instance is returned
 * afterwards). Throws `Error` for a name that is not an {@link EstimatorName}.
 */
export function getEstimator(name: EstimatorName): SteppedTokenEstimator {
  let estimator = cache.get(name);
  if (estimator) return estimator;
  switch (name) {
    case 'chars':
      estimator = charsEstimator;
      break;
    case 'cl100k_base':
    case 'o200k_base':
      estimator = tiktokenEstimator(name);
      break;
    default:
      throw new Error(`unknown estimator ${JSON.stringify(name)}; allowed: ${ESTIMATOR_NAMES.join(', ')}`);
  }
  cache.set(name, estimator);
  return estimator;
}

/**
 * The cost of one event (DESIGN §3.1): `estimator.count` applied to each of its formatted lines
 * ({@link formatEventLines}), summed. In the estimator's unit (tokens, or UTF-16 code units for
 * `chars`). Compute it once, when the event is appended, and carry it in {@link CostedEvent}.
 */
export function eventCost(event: SessionEvent, estimator: TokenEstimator): number {
  let total = 0;
  for (const line of formatEventLines(event)) total += estimator.count(line);
  return total;
}

/**
 * {@link eventCost} computed in steps: yields between pieces of work (see
 * {@link SteppedTokenEstimator.countInSteps}) and returns the same number.
 */
export function* eventCostInSteps(event: SessionEvent, estimator: SteppedTokenEstimator): Generator<void, number, void> {
  let total = 0;
  for (const line of formatEventLines(event)) total += yield* estimator.countInSteps(line);
  return total;
}

/**
 * Pairs each event with its cost under `estimator` ({@link eventCost}). A convenience for tests
 * and imports; the service computes costs once at append time and stores them.
 */
export function costEvents(events: readonly SessionEvent[], estimator: TokenEstimator): CostedEvent[] {
  return events.map((event) => ({ event, tokens: eventCost(event, estimator) }));
}
