import { InvalidParameterError, nearMissOf, quoteInput, STRATEGY_ALLOWED_KEYS, TRIGGER_ALLOWED_KEYS, type ParameterHolder } from '@lib/compaction';

/**
 * The request body a strategy or trigger was sent in, for the advice on a body field sent inside
 * one ({@link misplacedBodyField}): `fields`, every field the body's schema has (`dryRun`,
 * `estimator`, …); `body`, the body as validated (which of them it holds).
 */
export interface ParameterBody {
  fields: readonly string[];
  body: object;
}

/** A body field found inside a strategy or trigger: the path to name as `parameter` and the advice. */
export interface MisplacedBodyField {
  /** The key's path, as the parser names parameters: `strategy.dryRun`, `trigger.triggers[0].dryrun`. */
  parameter: string;
  /** What to do, e.g. `unknown field "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body`. */
  advice: string;
}

/** Deepest composite trigger nesting searched (the parser refuses deeper ones anyway). */
const MAX_SEARCHED_DEPTH = 8;

/** An object of a strategy or trigger as sent, with its path (`strategy`, `trigger.triggers[1]`) and the keys its `type` takes (undefined for no known type). */
interface HeldObject {
  path: string;
  value: Record<string, unknown>;
  allowed: readonly string[] | undefined;
}

/** `input` (sent under `holder`) and, for a composite trigger, its members at every depth, each with its path. */
function heldObjects(holder: ParameterHolder, input: unknown, path: string, depth = 0): HeldObject[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || depth > MAX_SEARCHED_DEPTH) return [];
  const value = input as Record<string, unknown>;
  const table: Readonly<Record<string, readonly string[]>> = holder === 'strategy' ? STRATEGY_ALLOWED_KEYS : TRIGGER_ALLOWED_KEYS;
  const type = Object.hasOwn(value, 'type') && typeof value.type === 'string' ? value.type : undefined;
  const allowed = type !== undefined && Object.hasOwn(table, type) ? table[type] : undefined;
  const found: HeldObject[] = [{ path, value, allowed }];
  if (holder === 'trigger' && Object.hasOwn(value, 'triggers') && Array.isArray(value.triggers))
    value.triggers.forEach((member: unknown, i) => found.push(...heldObjects('trigger', member, `${path}.triggers[${i}]`, depth + 1)));
  return found;
}

/**
 * When `err` refuses an unknown key (`must be absent`) of the strategy or trigger sent under
 * `holder` (`input`), or of a composite trigger's member at any depth, and that object holds a key
 * that is a field of the request body (`fields`), exactly or as a near miss ({@link nearMissOf}:
 * `dryrun` for `dryRun`), and no parameter its type takes: that key and the advice, e.g. for
 * `"strategy": {"type": "turn-window", "dryRun": true}` `unknown field "dryRun": it is a field of
 * the request body, not of the strategy; move it out of "strategy", beside it in the body`; for a
 * near miss `unknown field "dryrun": did you mean "dryRun"? it is a field of the request body, …`;
 * `…; the body has its own: remove it from "strategy"` when the body holds that field already. The
 * key `err` names is taken when it is such a key, else the object's first such key (so a body field
 * sent after another unknown key is still told to move out). Undefined otherwise: the parser's own
 * message stands. A key named like its holder (`strategy` inside `strategy`) is none.
 */
export function misplacedBodyField(
  err: InvalidParameterError,
  holder: ParameterHolder,
  input: unknown,
  { fields, body }: ParameterBody,
): MisplacedBodyField | undefined {
  if (!err.allowed.startsWith('absent')) return undefined;
  const pathOf = (at: HeldObject, key: string): string => `${at.path}.${quoteInput(key, { quoted: false })}`;
  const at = heldObjects(holder, input, holder).find((o) => Object.keys(o.value).some((k) => err.parameter === pathOf(o, k)));
  if (at === undefined) return undefined;
  const bodyFields = fields.filter((f) => f !== holder);
  const fieldOf = (key: string): string | undefined =>
    at.allowed?.includes(key) || (at.allowed !== undefined && nearMissOf(key, at.allowed) !== undefined)
      ? undefined
      : bodyFields.includes(key)
        ? key
        : nearMissOf(key, bodyFields);
  const keys = Object.keys(at.value);
  const named = keys.find((k) => err.parameter === pathOf(at, k));
  const key = named !== undefined && fieldOf(named) !== undefined ? named : keys.find((k) => fieldOf(k) !== undefined);
  if (key === undefined) return undefined;
  const field = fieldOf(key)!;
  const what = `unknown field ${quoteInput(key)}: ${field === key ? '' : `did you mean ${quoteInput(field)}? `}it is a field of the request body, not of the ${holder}`;
  return {
    parameter: pathOf(at, key),
    advice: Object.hasOwn(body, field)
      ? `${what}; the body has its own: remove it from ${quoteInput(holder)}`
      : `${what}; move it out of ${quoteInput(holder)}, beside it in the body${field === key ? '' : ` (as ${quoteInput(field)})`}`,
  };
}
