/**
 * Validation of strategy parameters (DESIGN §3.4): defaults, integer counts, allowed ranges.
 * Invalid parameters are rejected before anything is read.
 */
import type {
  RecursiveSummarizationStrategy,
  RollingSummaryStrategy,
  SlidingWindowStrategy,
  Strategy,
  StrategyType,
  TokenCountStrategy,
  TurnWindowStrategy,
} from './compaction-types';
import { describeValue, InvalidParameterError } from './invalid-parameter-error';
import { DEFAULT_SHADOW_PROMPT, DEFAULT_SUMMARIZER_SYSTEM_PROMPT } from './summarizer-prompt';
import { codePointLength, LENGTH_UNIT } from './text-length';
import { quoteInput } from './quoted-input';
import { showsNothing, SHOWS_NOTHING_DESCRIPTION } from './text-shows-nothing';
import { keysOf, STRATEGY_ALLOWED_KEYS } from './parameter-keys';
import { firstUnknownKey, unknownFieldHint, unknownKeyGot } from './unknown-field-hint';

/** Largest accepted count or token figure in any parameter (1e9). Anything above is rejected. */
export const MAX_PARAMETER_VALUE = 1_000_000_000;

/** Longest accepted `shadowPrompt`, in characters (Unicode code points). */
export const MAX_SHADOW_PROMPT_LENGTH = 10_000;

/** Longest accepted summarizer `systemPrompt`, in characters (Unicode code points). */
export const MAX_SYSTEM_PROMPT_LENGTH = 100_000;

/** The strategy names of DESIGN §3.4, in the order of its table. */
export const STRATEGY_TYPES: readonly StrategyType[] = ['sliding-window', 'turn-window', 'token-count', 'recursive-summarization', 'rolling-summary'];

/** Default parameters of every strategy (DESIGN §3.4). */
export const STRATEGY_DEFAULTS = {
  'sliding-window': { maxEvents: 20 },
  'turn-window': { maxTurns: 10 },
  'token-count': { maxTokens: 4000 },
  'recursive-summarization': {
    maxEventsToKeep: 10,
    overlapSize: 2,
    shadowPrompt: DEFAULT_SHADOW_PROMPT,
    systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
  },
  'rolling-summary': {
    keepTurns: 2,
    summarizeAtTokens: 2500,
    shadowPrompt: DEFAULT_SHADOW_PROMPT,
    systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
  },
} as const;

/** Every key some strategy type takes, `type` first: what a strategy without a type may have meant. */
const STRATEGY_KEYS: readonly string[] = keysOf('strategy');

/**
 * The {@link unknownFieldHint} of object `input` (at `path`) that lacks its required `type`: its
 * keys that no variant takes (`known`, `type` first), with a suggestion for a near miss.
 * @internal shared with triggers.ts
 */
export function missingTypeHint(input: Record<string, unknown>, path: string, known: readonly string[]): string {
  return unknownFieldHint({ holder: path, unknownKeys: Object.keys(input).filter((k) => !known.includes(k)), candidates: known });
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * Reads an integer parameter: `undefined`, or `null` when the parameter is optional (a `fallback`:
 * an optional field sent null counts as absent, the rule of every request body), → `fallback`;
 * otherwise it must be a number, an integer, and within [min, max]. Throws
 * {@link InvalidParameterError} naming `path`.
 * @internal shared with triggers.ts
 */
export function readInteger(value: unknown, path: string, min: number, max: number, fallback?: number): number {
  const allowed = `an integer from ${min} to ${max}`;
  if (value === undefined || (value === null && fallback !== undefined)) {
    if (fallback === undefined) throw InvalidParameterError.missing(path, allowed);
    return fallback;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidParameterError(path, allowed, describeValue(value));
  }
  return value;
}

/** Reads an optional text parameter: `undefined` or `null` (absent) → `fallback`; otherwise a valid, non-blank string within `maxLength`. Throws {@link InvalidParameterError} naming `path`. */
function readText(value: unknown, path: string, maxLength: number, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  const allowed = `a non-blank string (not ${SHOWS_NOTHING_DESCRIPTION}) of at most ${maxLength} ${LENGTH_UNIT}, valid Unicode (no lone surrogate)`;
  if (
    typeof value !== 'string' ||
    showsNothing(value) ||
    (value.length > maxLength && codePointLength(value) > maxLength) ||
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)
  ) {
    throw new InvalidParameterError(path, allowed, describeValue(value));
  }
  return value;
}

/** Refuses the first key of `input` outside `allowedKeys` ({@link firstUnknownKey}: a near miss first): `invalid <prefix>.<key>: must be absent (…)`, the message naming or counting its other unknown keys ({@link unknownKeyGot}). */
export function rejectUnknownKeys(input: Record<string, unknown>, allowedKeys: readonly string[], prefix: string): void {
  const key = firstUnknownKey(input, allowedKeys);
  if (key !== undefined) {
    throw new InvalidParameterError(
      `${prefix}.${quoteInput(key, { quoted: false })}`,
      `absent (allowed keys: ${allowedKeys.join(', ')})`,
      unknownKeyGot(key, allowedKeys, input, prefix),
      key,
    );
  }
}

/**
 * Validates a strategy object and applies the defaults of DESIGN §3.4; returns a fully resolved
 * {@link Strategy} (a new object; the input is not modified).
 *
 * Rules: `type` is one of {@link STRATEGY_TYPES}; counts (`maxEvents`, `maxTurns`, `maxTokens`,
 * `maxEventsToKeep`, `keepTurns`, `summarizeAtTokens`) are integers from 1 to
 * {@link MAX_PARAMETER_VALUE}; `overlapSize` is an integer ≥ 0 and < `maxEventsToKeep` (when
 * absent, its default 2 is lowered to `maxEventsToKeep − 1` so that a small window stays valid);
 * `shadowPrompt` / `systemPrompt` are non-blank strings (bounded length); unknown keys are
 * rejected; an absent key takes its default. `maxTokens` and `summarizeAtTokens` are in the
 * unit of the estimator the session is costed with.
 *
 * @throws InvalidParameterError whose `parameter` is `strategy.<name>` (e.g.
 *   `strategy.maxEvents`, `strategy.overlapSize`, `strategy.type`) and whose `allowed` says the range;
 *   a left-out `type` (or strategy) reads `strategy.type: is required: one of …`, naming the keys
 *   no strategy takes when there are some (`… (strategy has an unknown field "tpye": did you mean "type"?)`).
 */
export function parseStrategy(input: unknown): Strategy {
  if (input === undefined) throw InvalidParameterError.missing('strategy', 'an object with a "type"');
  if (!isPlainObject(input)) throw new InvalidParameterError('strategy', 'an object with a "type"', describeValue(input));
  const type = input.type;
  if (type === undefined)
    throw InvalidParameterError.missing('strategy.type', `one of ${STRATEGY_TYPES.join(', ')}`, missingTypeHint(input, 'strategy', STRATEGY_KEYS));
  if (typeof type !== 'string' || !(STRATEGY_TYPES as readonly string[]).includes(type)) {
    throw new InvalidParameterError('strategy.type', `one of ${STRATEGY_TYPES.join(', ')}`, describeValue(type));
  }
  const t = type as StrategyType;
  rejectUnknownKeys(input, STRATEGY_ALLOWED_KEYS[t], 'strategy');
  const max = MAX_PARAMETER_VALUE;
  switch (t) {
    case 'sliding-window': {
      const d = STRATEGY_DEFAULTS[t];
      const s: SlidingWindowStrategy = { type: t, maxEvents: readInteger(input.maxEvents, 'strategy.maxEvents', 1, max, d.maxEvents) };
      return s;
    }
    case 'turn-window': {
      const d = STRATEGY_DEFAULTS[t];
      const s: TurnWindowStrategy = { type: t, maxTurns: readInteger(input.maxTurns, 'strategy.maxTurns', 1, max, d.maxTurns) };
      return s;
    }
    case 'token-count': {
      const d = STRATEGY_DEFAULTS[t];
      const s: TokenCountStrategy = { type: t, maxTokens: readInteger(input.maxTokens, 'strategy.maxTokens', 1, max, d.maxTokens) };
      return s;
    }
    case 'recursive-summarization': {
      const d = STRATEGY_DEFAULTS[t];
      const maxEventsToKeep = readInteger(input.maxEventsToKeep, 'strategy.maxEventsToKeep', 1, max, d.maxEventsToKeep);
      const overlapDefault = Math.min(d.overlapSize, maxEventsToKeep - 1);
      let overlapSize: number;
      if (input.overlapSize === undefined || input.overlapSize === null) {
        overlapSize = overlapDefault;
      } else {
        const allowed = `an integer ≥ 0 and < maxEventsToKeep (${maxEventsToKeep}), i.e. from 0 to ${maxEventsToKeep - 1}`;
        const v = input.overlapSize;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= maxEventsToKeep) {
          throw new InvalidParameterError('strategy.overlapSize', allowed, describeValue(v));
        }
        overlapSize = v;
      }
      const s: RecursiveSummarizationStrategy = {
        type: t,
        maxEventsToKeep,
        overlapSize,
        shadowPrompt: readText(input.shadowPrompt, 'strategy.shadowPrompt', MAX_SHADOW_PROMPT_LENGTH, d.shadowPrompt),
        systemPrompt: readText(input.systemPrompt, 'strategy.systemPrompt', MAX_SYSTEM_PROMPT_LENGTH, d.systemPrompt),
      };
      return s;
    }
    case 'rolling-summary': {
      const d = STRATEGY_DEFAULTS[t];
      const s: RollingSummaryStrategy = {
        type: t,
        keepTurns: readInteger(input.keepTurns, 'strategy.keepTurns', 1, max, d.keepTurns),
        summarizeAtTokens: readInteger(input.summarizeAtTokens, 'strategy.summarizeAtTokens', 1, max, d.summarizeAtTokens),
        shadowPrompt: readText(input.shadowPrompt, 'strategy.shadowPrompt', MAX_SHADOW_PROMPT_LENGTH, d.shadowPrompt),
        systemPrompt: readText(input.systemPrompt, 'strategy.systemPrompt', MAX_SYSTEM_PROMPT_LENGTH, d.systemPrompt),
      };
      return s;
    }
  }
}
