/**
 * The keys each strategy and trigger type takes (DESIGN §3.4, §3.5), `type` first: the one list
 * {@link parseStrategy} and {@link parseTrigger} refuse other keys by, and the one the unknown-key
 * messages of a request body read to tell a strategy's or trigger's parameter sent beside them
 * (`{"strategy": …, "maxTurns": 3}`) where it belongs ({@link unknownKeysMessage}). Data only, so
 * every module of the library may import it.
 */
import type { StrategyType, Trigger } from './compaction-types';

/** The keys a strategy of each type takes: `type` and its parameters. */
export const STRATEGY_ALLOWED_KEYS: Readonly<Record<StrategyType, readonly string[]>> = {
  'sliding-window': ['type', 'maxEvents'],
  'turn-window': ['type', 'maxTurns'],
  'token-count': ['type', 'maxTokens'],
  'recursive-summarization': ['type', 'maxEventsToKeep', 'overlapSize', 'shadowPrompt', 'systemPrompt'],
  'rolling-summary': ['type', 'keepTurns', 'summarizeAtTokens', 'shadowPrompt', 'systemPrompt'],
};

/** The keys a trigger of each type takes: `type` and its parameters. */
export const TRIGGER_ALLOWED_KEYS: Readonly<Record<Trigger['type'], readonly string[]>> = {
  'turn-count': ['type', 'maxTurns'],
  'token-count': ['type', 'threshold'],
  'any-of': ['type', 'triggers'],
  'all-of': ['type', 'triggers'],
};

/** The body fields that hold parameters (a strategy, a trigger), in the order messages name them. */
export type ParameterHolder = 'strategy' | 'trigger';

/** Every key some type of `holder` takes, `type` first, each once (`strategy` → `type`, `maxEvents`, `maxTurns`, …). */
export function keysOf(holder: ParameterHolder): readonly string[] {
  return [...new Set(Object.values<readonly string[]>(holder === 'strategy' ? STRATEGY_ALLOWED_KEYS : TRIGGER_ALLOWED_KEYS).flat())];
}

/**
 * The types of `holder` that take `key`, in the order of their table (`trigger`, `threshold` →
 * `["token-count"]`; `strategy`, `shadowPrompt` → `["recursive-summarization", "rolling-summary"]`;
 * none → `[]`).
 */
export function typesTaking(holder: ParameterHolder, key: string): string[] {
  const table: Readonly<Record<string, readonly string[]>> = holder === 'strategy' ? STRATEGY_ALLOWED_KEYS : TRIGGER_ALLOWED_KEYS;
  return Object.entries(table)
    .filter(([, keys]) => keys.includes(key))
    .map(([type]) => type);
}
