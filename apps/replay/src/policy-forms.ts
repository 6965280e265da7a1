/**
 * `--strategy` and `--trigger` values: JSON (`{"type":"token-count","maxTokens":2000}`) or a
 * short form, validated with the service's own parsers so a bad value stops the replay before
 * anything is sent.
 *
 * Short forms:
 * - strategy `type[:values]`, values positional in the order of {@link STRATEGY_PARAMETER_ORDER}
 *   or `name=value`, comma-separated: `token-count:2000`, `sliding-window:12`,
 *   `recursive-summarization:8,2`, `rolling-summary:keepTurns=2,summarizeAtTokens=800`;
 * - trigger `token-count:3000`, `turn-count:6`, `none`; `a|b` is any-of, `a&b` is all-of.
 */
import { parseStrategy, parseTrigger, InvalidParameterError, STRATEGY_TYPES, type Strategy, type Trigger } from '@lib/compaction';
import { ReplayError } from './replay-error';

/** Positional parameter names of each strategy's short form. */
export const STRATEGY_PARAMETER_ORDER: Record<string, string[]> = {
  'sliding-window': ['maxEvents'],
  'turn-window': ['maxTurns'],
  'token-count': ['maxTokens'],
  'recursive-summarization': ['maxEventsToKeep', 'overlapSize'],
  'rolling-summary': ['keepTurns', 'summarizeAtTokens'],
};

const TRIGGER_PARAMETER: Record<string, string> = { 'token-count': 'threshold', 'turn-count': 'maxTurns' };

/** One auto-compaction policy the replay runs: a name (session id prefix), a strategy and a trigger. */
export interface ReplayPlan {
  /** Short name used in session ids and the report (e.g. `token-count`). */
  name: string;
  strategy: Strategy;
  trigger: Trigger | null;
}

function valueOf(raw: string, what: string): number | string {
  const t = raw.trim();
  if (/^-?\d+$/.test(t)) return Number(t);
  if (t === '') throw new ReplayError(`${what}: empty value`);
  return t;
}

function explain(err: unknown, option: string, raw: string): never {
  if (err instanceof InvalidParameterError || err instanceof ReplayError)
    throw new ReplayError(`${option} ${JSON.stringify(raw)} is not valid: ${err.message}`);
  throw err;
}

/** `text` parsed as JSON. @throws ReplayError naming the JSON error. */
function parseJsonOption(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ReplayError(`not valid JSON (${(err as Error).message})`);
  }
}

/**
 * Parses one strategy (JSON or short form).
 * @throws ReplayError naming the option and the bad parameter.
 */
export function parseStrategyOption(raw: string): Strategy {
  try {
    const text = raw.trim();
    if (text.startsWith('{')) {
      return parseStrategy(parseJsonOption(text));
    }
    const colon = text.indexOf(':');
    const type = colon < 0 ? text : text.slice(0, colon);
    if (!(STRATEGY_TYPES as readonly string[]).includes(type))
      throw new ReplayError(`unknown strategy "${type}": use one of ${STRATEGY_TYPES.join(', ')}, all, or JSON`);
    const input: Record<string, unknown> = { type };
    if (colon >= 0) {
      const order = STRATEGY_PARAMETER_ORDER[type];
      text
        .slice(colon + 1)
        .split(',')
        .forEach((part, i) => {
          const eq = part.indexOf('=');
          if (eq >= 0) input[part.slice(0, eq).trim()] = valueOf(part.slice(eq + 1), part);
          else if (i < order.length) input[order[i]] = valueOf(part, order[i]);
          else throw new ReplayError(`${type} takes at most ${order.length} positional value(s) (${order.join(', ')})`);
        });
    }
    return parseStrategy(input);
  } catch (err) {
    explain(err, '--strategy', raw);
  }
}

function shortTrigger(text: string): unknown {
  if (text.includes('|')) return { type: 'any-of', triggers: text.split('|').map(shortTrigger) };
  if (text.includes('&')) return { type: 'all-of', triggers: text.split('&').map(shortTrigger) };
  const [type, value, ...rest] = text.split(':').map((s) => s.trim());
  const param = TRIGGER_PARAMETER[type];
  if (!param) throw new ReplayError(`unknown trigger "${type}": use token-count:N, turn-count:N, a|b (any-of), a&b (all-of), none, or JSON`);
  if (value === undefined || rest.length > 0) throw new ReplayError(`write ${type}:<${param}>`);
  return { type, [param]: valueOf(value, param) };
}

/**
 * Parses a trigger (JSON, short form, or `none`); undefined or `none` gives null (always fires).
 * @throws ReplayError naming the option and the bad parameter.
 */
export function parseTriggerOption(raw: string | undefined): Trigger | null {
  if (raw === undefined) return null;
  try {
    const text = raw.trim();
    if (text === 'none' || text === 'null') return null;
    if (text.startsWith('{')) {
      return parseTrigger(parseJsonOption(text));
    }
    return parseTrigger(shortTrigger(text));
  } catch (err) {
    explain(err, '--trigger', raw);
  }
}

/**
 * The plans of `--strategy all`: every strategy of DESIGN §3.4 with budgets chosen for the
 * tau-bench airline conversations (cl100k_base): a 1254-token system policy, sessions of 1.5k to
 * 10k tokens (median 3.2k) and 3 to 26 user turns (median 7). Each one compacts on most sessions
 * while keeping the system policy plus at least the current turn:
 *
 * - `sliding-window` 12 events, `turn-window` 3 turns, `token-count` 2000 tokens (≈750 of
 *   conversation beside the policy), `recursive-summarization` 8 events with 2 of overlap: gated by
 *   a `token-count:2500` trigger (compact once the window is twice the policy), as a real agent
 *   would run them rather than on every append;
 * - `rolling-summary` keeps 2 turns verbatim and summarizes once the older part passes 800 tokens:
 *   its own threshold is the trigger.
 *
 * `trigger` given on the command line replaces these triggers.
 */
export function allPlans(trigger?: Trigger | null): ReplayPlan[] {
  const gate: Trigger | null = trigger !== undefined ? trigger : { type: 'token-count', threshold: 2500 };
  return [
    { name: 'sliding-window', strategy: parseStrategy({ type: 'sliding-window', maxEvents: 12 }), trigger: gate },
    { name: 'turn-window', strategy: parseStrategy({ type: 'turn-window', maxTurns: 3 }), trigger: gate },
    { name: 'token-count', strategy: parseStrategy({ type: 'token-count', maxTokens: 2000 }), trigger: gate },
    { name: 'recursive-summarization', strategy: parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 8, overlapSize: 2 }), trigger: gate },
    { name: 'rolling-summary', strategy: parseStrategy({ type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 800 }), trigger: trigger ?? null },
  ];
}

/**
 * The plans for `--strategy` / `--trigger` as given (default strategy: `all`).
 * @throws ReplayError on an invalid value.
 */
export function plansFromOptions(strategy: string | undefined, trigger: string | undefined): ReplayPlan[] {
  const parsedTrigger = trigger === undefined ? undefined : parseTriggerOption(trigger);
  if (strategy === undefined || strategy.trim() === 'all') return allPlans(parsedTrigger);
  const s = parseStrategyOption(strategy);
  return [{ name: s.type, strategy: s, trigger: parsedTrigger ?? null }];
}
