/**
 * The one rule for a key sent inside a strategy or trigger that belongs somewhere else: a field of
 * the request body (`dryRun`), a parameter of another type of the same object (`threshold` in a
 * `turn-count` trigger, `maxEvents` in a `turn-window` strategy) or a parameter of the other object
 * (`threshold` in a strategy), exactly or as a near miss ({@link nearMissOf}). The parser answers
 * such a key with `must be absent (allowed keys: …)`, or, in an object without its `type`, with
 * `type: is required`; this rule says where the key belongs instead, for every transport.
 */
import {
  InvalidParameterError,
  intoPlaces,
  keysOf,
  MAX_SCANNED_UNKNOWN_KEYS,
  nearMissOf,
  parameterPlacesOf,
  quoteInput,
  STRATEGY_ALLOWED_KEYS,
  TRIGGER_ALLOWED_KEYS,
  typesTaking,
  type ParameterHolder,
} from '@lib/compaction';

/**
 * The request body a strategy or trigger was sent in, for the advice on a key sent inside one
 * ({@link misplacedField}): `fields`, every field the body's schema has (`dryRun`, `estimator`, …);
 * `body`, the body as validated (which of them it holds, and the types of its strategy and trigger).
 */
export interface ParameterBody {
  fields: readonly string[];
  body: object;
  /** Fields of other requests that this body does not take, each with the advice for one sent in its strategy or trigger ({@link POLICY_FOREIGN_FIELDS}). */
  foreign?: Readonly<Record<string, string>>;
}

/**
 * The fields a policy body (`PUT …/policy`, NATS `policy`) does not take but a compaction does, with
 * what to do instead: a policy has no dry run, so `dryRun` sent in its strategy (or trigger) is no
 * misplaced body field; it belongs to a compaction request only.
 */
export const POLICY_FOREIGN_FIELDS: Readonly<Record<string, string>> = {
  dryRun:
    'a policy has no dry run: "dryRun" is a field of a compaction request only (POST /v1/sessions/{sessionId}/compactions, NATS compact); remove it (to see what a pass would do without writing it, send "dryRun": true to POST …/compactions with this strategy and trigger, or with neither once the policy is set)',
};

/** A key found inside a strategy or trigger that belongs elsewhere: the parameter the answer names and its whole message. */
export interface MisplacedField {
  /**
   * The path the answer names as `parameter`: the key's (`strategy.dryRun`, `trigger.triggers[0].threshold`)
   * when its object has a type; the missing `type`'s (`strategy.type`) when it has none.
   */
  parameter: string;
  /**
   * The message, e.g. `trigger.threshold: unknown field "threshold": it is a parameter of the
   * token-count trigger, not of the turn-count trigger sent; change "type" to "token-count", or use
   * what the turn-count trigger takes: "maxTurns"`.
   */
  message: string;
}

/** Deepest composite trigger nesting searched (the parser refuses deeper ones anyway). */
const MAX_SEARCHED_DEPTH = 8;

/** An object of a strategy or trigger as sent, with its path (`strategy`, `trigger.triggers[1]`), its `type` when a string, and the keys that type takes (undefined for no known type). */
interface HeldObject {
  path: string;
  value: Record<string, unknown>;
  type: string | undefined;
  allowed: readonly string[] | undefined;
}

/** `input` (sent under `holder`) and, for a composite trigger, its members at every depth, each with its path. */
function heldObjects(holder: ParameterHolder, input: unknown, path: string, depth = 0): HeldObject[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || depth > MAX_SEARCHED_DEPTH) return [];
  const value = input as Record<string, unknown>;
  const table: Readonly<Record<string, readonly string[]>> = holder === 'strategy' ? STRATEGY_ALLOWED_KEYS : TRIGGER_ALLOWED_KEYS;
  const type = Object.hasOwn(value, 'type') && typeof value.type === 'string' ? value.type : undefined;
  const allowed = type !== undefined && Object.hasOwn(table, type) ? table[type] : undefined;
  const found: HeldObject[] = [{ path, value, type, allowed }];
  if (holder === 'trigger' && Object.hasOwn(value, 'triggers') && Array.isArray(value.triggers))
    value.triggers.forEach((member: unknown, i) => found.push(...heldObjects('trigger', member, `${path}.triggers[${i}]`, depth + 1)));
  return found;
}

/** Where a key belongs: the name it is or is a near miss of (`field`), and the advice (`it is a field of the request body, …`). */
interface Belonging {
  field: string;
  advice: string;
}

/** A place a key may belong to: the names there, and the advice for a key that is (or is a near miss of) `name`. */
interface Place {
  names: readonly string[];
  advice: (name: string, nearMiss: boolean) => string;
}

/** `"a", "b" or "c"`: names quoted, the last joined by `or`. */
function quotedList(names: readonly string[]): string {
  const quoted = names.map((n) => quoteInput(n));
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

/**
 * The places a key of `at` (sent under `holder`) may belong to, in the order they are tried: the
 * request body's fields; the parameters of the holder's other types (only when `at` has a type: a
 * type-less object takes every parameter of its holder); the fields of other requests the body
 * names as foreign (a policy's `dryRun`); the parameters of the other holder, when the body has it.
 */
function placesFor(at: HeldObject, holder: ParameterHolder, { fields, body, foreign }: ParameterBody): Place[] {
  const bodyFields = fields.filter((f) => f !== holder);
  const places: Place[] = [
    {
      names: bodyFields,
      advice: (field, nearMiss) => {
        const what = `it is a field of the request body, not of the ${holder}`;
        return Object.hasOwn(body, field)
          ? `${what}; the body has its own: remove it from ${quoteInput(holder)}`
          : `${what}; move it out of ${quoteInput(holder)}, beside it in the body${nearMiss ? ` (as ${quoteInput(field)})` : ''}`;
      },
    },
  ];
  if (at.type !== undefined && at.allowed !== undefined) {
    const sent = `the ${at.type} ${holder}`;
    const own = at.allowed.filter((k) => k !== 'type');
    places.push({
      names: keysOf(holder).filter((k) => k !== 'type' && !at.allowed!.includes(k)),
      advice: (parameter) => {
        const takers = typesTaking(holder, parameter);
        const instead = own.includes('triggers') ? 'or move it into a member of its "triggers"' : `or use what ${sent} takes: ${quotedList(own)}`;
        return `it is a parameter of the ${takers.join(' or ')} ${holder}, not of ${sent} sent; change "type" to ${quotedList(takers)}, ${instead}`;
      },
    });
  }
  if (foreign !== undefined) {
    places.push({ names: Object.keys(foreign), advice: (field) => foreign[field] });
  }
  const other: ParameterHolder = holder === 'strategy' ? 'trigger' : 'strategy';
  if (fields.includes(other))
    places.push({
      names: keysOf(other).filter((k) => k !== 'type'),
      advice: (parameter) => {
        const where = parameterPlacesOf(parameter, [other], body)!;
        const what = `it is a parameter of ${where.takenBy.join(' or ')}, not of a ${holder}`;
        return where.places.length > 0
          ? `${what}; move it into ${intoPlaces(where)}`
          : `${what}, nor of ${where.refusedBy.join(' or ')} sent: change the ${other}'s type, or remove it`;
      },
    });
  return places;
}

/**
 * Where `key` of `at` belongs ({@link placesFor}): the first place holding it exactly, else the
 * first holding a near miss of it; undefined when it is (or is a near miss of) a key `at` may hold
 * (`own`: the parser's own question stands) or belongs nowhere known.
 */
function belongingOf(key: string, own: readonly string[], places: readonly Place[]): Belonging | undefined {
  if (own.includes(key) || nearMissOf(key, own) !== undefined) return undefined;
  for (const place of places) if (place.names.includes(key)) return { field: key, advice: place.advice(key, false) };
  for (const place of places) {
    const field = nearMissOf(key, place.names);
    if (field !== undefined) return { field, advice: place.advice(field, true) };
  }
  return undefined;
}

/**
 * When `err` (from parsing the strategy or trigger sent under `holder` as `input`) is about a key
 * that belongs elsewhere, the answer saying where; undefined otherwise (the parser's message stands).
 * Two errors qualify, for the object itself or a composite trigger's member at any depth:
 *
 * - an unknown key refused (`must be absent`) in an object with a type: the key `err` names when it
 *   belongs elsewhere, else the object's first key that does (so one sent after another unknown key
 *   is still told), e.g. `strategy.dryRun: unknown field "dryRun": it is a field of the request
 *   body, not of the strategy; move it out of "strategy", beside it in the body`; `trigger.threshold:
 *   unknown field "threshold": it is a parameter of the token-count trigger, not of the turn-count
 *   trigger sent; change "type" to "token-count", or use what the turn-count trigger takes: "maxTurns"`;
 *   `strategy.threshold: … it is a parameter of the token-count trigger, not of a strategy; move it
 *   into "trigger" (trigger.threshold)`; a near miss asks first (`unknown field "dryrun": did you mean
 *   "dryRun"? it is a field of the request body, …`);
 * - a missing `type` in an object holding such a key: the parser's message, which lists the unknown
 *   keys, then the first one's advice, the parameter still the missing type: `strategy.type: is
 *   required: one of … (strategy has an unknown field "dryRun"); "dryRun": it is a field of the
 *   request body, not of the strategy; move it out of "strategy", beside it in the body`.
 *
 * Places are tried in the order body, other types of the holder, the other holder; an exact name
 * before a near miss. A key that is (or is a near miss of) one the object may hold gets the
 * parser's question; a key named like its holder (`strategy` inside `strategy`) is no body field.
 * Only the first {@link MAX_SCANNED_UNKNOWN_KEYS} keys of the object outside those it may hold are
 * looked at (besides the one `err` names), so the work is bounded whatever the number of keys sent.
 */
export function misplacedField(err: InvalidParameterError, holder: ParameterHolder, input: unknown, body: ParameterBody): MisplacedField | undefined {
  const pathOf = (at: HeldObject, key: string): string => `${at.path}.${quoteInput(key, { quoted: false })}`;
  const objects = heldObjects(holder, input, holder);
  // the object whose key `err` refused: found by the key as sent, never by quoting every key of every object
  const named = err.allowed.startsWith('absent') ? err.unknownKey : undefined;
  const refused =
    named !== undefined ? objects.find((o) => o.allowed !== undefined && Object.hasOwn(o.value, named) && err.parameter === pathOf(o, named)) : undefined;
  const untyped =
    refused === undefined && err.message.startsWith(`${err.parameter}: is required`)
      ? objects.find((o) => o.value.type === undefined && err.parameter === `${o.path}.type`)
      : undefined;
  const at = refused ?? untyped;
  if (at === undefined) return undefined;
  const own = refused !== undefined ? refused.allowed! : keysOf(holder);
  const places = placesFor(at, holder, body);
  // the first keys outside those the object may hold, as the parser looked at them (firstUnknownKey, missingTypeHint)
  const scanned: string[] = [];
  for (const key of Object.keys(at.value)) {
    if (own.includes(key)) continue;
    scanned.push(key);
    if (scanned.length === MAX_SCANNED_UNKNOWN_KEYS) break;
  }
  const found = scanned.flatMap((key) => {
    const belonging = belongingOf(key, own, places);
    return belonging === undefined ? [] : [{ key, ...belonging }];
  });
  const chosen = found.find((f) => f.key === named) ?? found[0];
  if (chosen === undefined) return undefined;
  const { key, field, advice } = chosen;
  const question = field === key ? '' : `did you mean ${quoteInput(field)}? `;
  if (refused !== undefined) {
    const parameter = pathOf(at, key);
    return { parameter, message: `${parameter}: unknown field ${quoteInput(key)}: ${question}${advice}` };
  }
  return { parameter: err.parameter, message: `${err.message}; ${quoteInput(key)}: ${question}${advice}` };
}
