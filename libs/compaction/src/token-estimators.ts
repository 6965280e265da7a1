/**
 * Token estimators (DESIGN §3.1): `cl100k_base` and `o200k_base` (real tokenizers, through
 * gpt-tokenizer) and `chars` (UTF-16 length). Callers may plug in their own {@link TokenEstimator}
 * anywhere one is taken.
 */
import { formatEventLines } from './formatter';
import type { CostedEvent, SessionEvent } from './session-event';

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

/** `chars`: the UTF-16 length of the text (`text.length`), so a surrogate pair counts 2. */
const charsEstimator: TokenEstimator = { name: 'chars', count: (text: string) => text.length };

/** The part of gpt-tokenizer's per-encoding module this file uses. */
interface EncodingModule {
  countTokens(text: string, options?: { allowedSpecial?: Set<string>; disallowedSpecial?: Set<string> }): number;
}

function loadEncoding(name: 'cl100k_base' | 'o200k_base'): EncodingModule {
  // Loaded lazily, one encoding at a time. A plain `require` because the package exposes these
  // paths through its `exports` map, which TypeScript's node10 resolution does not read.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (name === 'cl100k_base' ? require('gpt-tokenizer/encoding/cl100k_base') : require('gpt-tokenizer/encoding/o200k_base')) as EncodingModule;
}

/**
 * A BPE tokenizer estimator. Counts come from `gpt-tokenizer`, which gives the same counts as
 * OpenAI's tiktoken and js-tiktoken (checked on the shared conversations, see the estimator
 * tests and benchmark 5) at about ten times js-tiktoken's speed.
 */
function tiktokenEstimator(name: 'cl100k_base' | 'o200k_base'): TokenEstimator {
  const encoding = loadEncoding(name);
  // Special-token text such as "<|endoftext|>" in user content is counted as ordinary text
  // (no special token allowed, none disallowed), so counting never throws.
  const options = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  return {
    name,
    count: (text: string) => (text.length === 0 ? 0 : encoding.countTokens(text, options)),
  };
}

const cache = new Map<EstimatorName, TokenEstimator>();

/**
 * The built-in estimator `name`, created on first use and cached (the same instance is returned
 * afterwards). Throws `Error` for a name that is not an {@link EstimatorName}.
 */
export function getEstimator(name: EstimatorName): TokenEstimator {
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
 * Pairs each event with its cost under `estimator` ({@link eventCost}). A convenience for tests
 * and imports; the service computes costs once at append time and stores them.
 */
export function costEvents(events: readonly SessionEvent[], estimator: TokenEstimator): CostedEvent[] {
  return events.map((event) => ({ event, tokens: eventCost(event, estimator) }));
}
