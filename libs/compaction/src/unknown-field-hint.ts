/**
 * The one rule for a misspelled field: when a request leaves out a required field and the object
 * that should hold it has keys the service does not know, the error names those keys and, for a
 * near miss of a field name, suggests it (`events: is required (the body has an unknown field
 * "evnts": did you mean "events"?)`). Every validator of the API (the HTTP and NATS bodies' zod
 * schemas, strategies, triggers, OpenAI chat messages) appends this hint to its own "required"
 * message, so the message is otherwise the one it always was.
 *
 * Edit distance: no edit-distance library is a dependency, so {@link fieldNameDistance} is a small
 * optimal-string-alignment (Levenshtein plus adjacent transpositions) distance for field names,
 * bounded to short names: it is never run on a long key (a key longer than
 * {@link MAX_COMPARED_NAME_LENGTH} is no near miss of any field name).
 *
 * Cost (newcomer ncbounds): a body may hold hundreds of thousands of unknown keys (5 MiB of
 * `"k1":1,`), and every hint is computed on the event loop. So near misses are looked for among the
 * first {@link MAX_SCANNED_UNKNOWN_KEYS} unknown keys of an object only ({@link scannedUnknownKeys});
 * the others are counted, never compared: a refusal costs a bounded number of distances, whatever
 * the number of keys (a few list passes over them, each much cheaper than `JSON.parse`).
 */
import { keysOf, STRATEGY_ALLOWED_KEYS, TRIGGER_ALLOWED_KEYS, typesTaking, type ParameterHolder } from './parameter-keys';
import { quoteInput } from './quoted-input';

/** Most unknown keys a hint names; more are counted (`and 3 more`). */
export const MAX_NAMED_UNKNOWN_KEYS = 5;

/** Longest key compared with field names (field names are short; a longer key is no near miss). */
export const MAX_COMPARED_NAME_LENGTH = 64;

/**
 * Most unknown keys of one object looked at for a near miss of a field, or for where a key
 * belongs: the first sent. Keys after them are counted in messages (`and N more`), never compared,
 * so a body of 300,000 unknown keys is refused at the cost of reading it (newcomer ncbounds).
 */
export const MAX_SCANNED_UNKNOWN_KEYS = 64;

/**
 * The unknown keys a hint looks at ({@link MAX_SCANNED_UNKNOWN_KEYS}): the first of `unknownKeys`
 * (in the order sent), `unknownKeys` itself when there are no more. Reads only those elements.
 */
export function scannedUnknownKeys(unknownKeys: readonly string[]): readonly string[] {
  return unknownKeys.length <= MAX_SCANNED_UNKNOWN_KEYS ? unknownKeys : unknownKeys.slice(0, MAX_SCANNED_UNKNOWN_KEYS);
}

/** What {@link unknownFieldHint} needs to know about the object that lacks a required field. */
export interface UnknownFieldHintInput {
  /** The object in words: `the body`, `events[0]`, `strategy`, `the query`. */
  holder: string;
  /** The keys the object holds that are not among its fields, in the order sent. */
  unknownKeys: readonly string[];
  /**
   * The field names a key may be a near miss of, the missing ones first (a tie goes to the earlier
   * one): the missing field(s), then the object's other known fields.
   */
  candidates: readonly string[];
  /** What a key is called: `field` (bodies, default) or `parameter` (a query string). */
  noun?: string;
}

/**
 * The optimal-string-alignment distance of `a` and `b`, case-insensitive: the fewest single
 * character insertions, deletions, substitutions and swaps of two adjacent characters that turn one
 * into the other (`evnts` → `events`: 1; `tpye` → `type`: 1; `userid` → `userId`: 0). Compares
 * UTF-16 code units; meant for short field names.
 */
export function fieldNameDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // rows[i][j]: distance of s[0, i) and t[0, j); three rows are enough for the swap rule.
  let before: number[] = [];
  let previous: number[] = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current: number[] = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, before[j - 2] + 1);
      current.push(d);
    }
    before = previous;
    previous = current;
  }
  return previous[t.length];
}

/**
 * The field `key` is a near miss of, among `candidates` (the first of the closest), or undefined:
 * a key that differs from a field name in letter case only, or by at most one edit (names of at
 * most 5 characters, e.g. `txt` for `text`, `tpye` for `type`) or two (longer names, e.g.
 * `strtegy` for `strategy`); never one of 1 or 2 characters changed into another (`q` is no near
 * miss of `x`).
 */
export function nearMissOf(key: string, candidates: readonly string[]): string | undefined {
  if (key.length > MAX_COMPARED_NAME_LENGTH) return undefined;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of candidates) {
    if (name === key || Math.abs(name.length - key.length) > 2) continue;
    const longest = Math.max(name.length, key.length);
    const allowed = longest <= 2 ? 0 : longest <= 5 ? 1 : 2;
    const d = fieldNameDistance(key, name);
    if (d <= allowed && d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * The {@link scannedUnknownKeys} of `unknownKeys` ordered with the near misses of `candidates`
 * first ({@link nearMissOf}), each paired with the field it is a near miss of; the others keep
 * their order after them. A client that sends dozens of unknown keys sees its typo among the first
 * named; past {@link MAX_SCANNED_UNKNOWN_KEYS}, keys are not compared (bounded work).
 */
function nearMissesFirst(unknownKeys: readonly string[], candidates: readonly string[]): Array<{ key: string; field?: string }> {
  const paired = scannedUnknownKeys(unknownKeys).map((key) => ({ key, field: nearMissOf(key, candidates) }));
  return [...paired.filter((p) => p.field !== undefined), ...paired.filter((p) => p.field === undefined)];
}

/** The body fields that hold parameters, in the order messages name them. */
const PARAMETER_HOLDERS: readonly ParameterHolder[] = ['strategy', 'trigger'];

/** Where a parameter sent at the wrong level belongs ({@link parameterPlacesOf}). */
export interface ParameterPlaces {
  /** The parameter's name: the key itself, or the parameter it is a near miss of (`maxturns` → `maxTurns`). */
  parameter: string;
  /** The fields of the object whose strategy or trigger takes that parameter, in that order (never empty). */
  holders: readonly ParameterHolder[];
  /**
   * Where to move it, as paths: each holder whose object as sent takes it (its `type` does, or
   * no object or `type` was sent there), a composite trigger's members (`trigger.triggers[…]`);
   * empty when the types sent there all refuse it ({@link ParameterPlaces.takenBy} then says which do not).
   */
  places: readonly string[];
  /** The types that take it, as `the turn-window strategy`, `the turn-count trigger`. */
  takenBy: readonly string[];
  /** The types sent that refuse it, as `the token-count trigger` (none when it has places). */
  refusedBy: readonly string[];
}

/** The `type` the object holds under `holder`, when it is an object with a string `type`. */
function sentTypeOf(held: object, holder: ParameterHolder): string | undefined {
  const value: unknown = Object.hasOwn(held, holder) ? (held as Record<string, unknown>)[holder] : undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const type: unknown = Object.hasOwn(value, 'type') ? (value as Record<string, unknown>).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

/** The keys a `holder` of type `type` takes, or undefined for a type that is none of its types. */
function keysOfType(holder: ParameterHolder, type: string): readonly string[] | undefined {
  const table: Readonly<Record<string, readonly string[]>> = holder === 'strategy' ? STRATEGY_ALLOWED_KEYS : TRIGGER_ALLOWED_KEYS;
  return Object.hasOwn(table, type) ? table[type] : undefined;
}

/**
 * Where the unknown key `key` of an object whose schema has `fields` belongs, when it is (exactly,
 * or a near miss by {@link nearMissOf}) a parameter of a strategy or trigger type
 * ({@link keysOf}; `type` is none) and the object has a `strategy` / `trigger` field: that
 * parameter, the fields whose types take it (`maxTurns` → strategy (turn-window) and trigger
 * (turn-count); `maxEvents` → strategy only; `threshold` → trigger only), and of those the places
 * the object as sent (`held`) can take it: a holder whose sent `type` takes it, or not sent (or
 * sent without a type of its own), or a composite trigger's members (`any-of`/`all-of`:
 * `trigger.triggers[…]`); not a holder whose sent type refuses it (`maxTurns` beside a
 * `token-count` strategy and trigger: no place; the types that take it are named instead).
 * Undefined when the key is no such parameter (also for an object without those fields, e.g. an
 * event or a query).
 */
export function parameterPlacesOf(key: string, fields: readonly string[], held: object = {}): ParameterPlaces | undefined {
  const holders = PARAMETER_HOLDERS.filter((h) => fields.includes(h));
  const names = [...new Set(holders.flatMap((h) => keysOf(h).filter((k) => k !== 'type')))];
  const parameter = names.includes(key) ? key : nearMissOf(key, names);
  if (parameter === undefined) return undefined;
  const takers = holders.filter((h) => keysOf(h).includes(parameter));
  const places: string[] = [];
  const refused: string[] = [];
  for (const holder of takers) {
    const sent = sentTypeOf(held, holder);
    const keys = sent === undefined ? undefined : keysOfType(holder, sent);
    if (keys === undefined || keys.includes(parameter)) places.push(holder);
    else if (holder === 'trigger' && keys.includes('triggers')) places.push('trigger.triggers[…]');
    else refused.push(`the ${sent} ${holder}`);
  }
  const takenBy = takers.map((holder) => `the ${typesTaking(holder, parameter).join(' or ')} ${holder}`);
  return { parameter, holders: takers, places, takenBy, refusedBy: places.length > 0 ? [] : refused };
}

/** `"strategy" or "trigger" (strategy.maxTurns / trigger.maxTurns)`: where {@link ParameterPlaces} says to move a key (its places, never empty). */
export function intoPlaces({ parameter, places }: ParameterPlaces): string {
  return `${places.map((p) => quoteInput(p)).join(' or ')} (${places.map((p) => `${p}.${parameter}`).join(' / ')})`;
}

/** For a parameter the types sent refuse: `a parameter of the token-count trigger, not of the turn-count trigger sent: change the type, or remove it`. */
function refusedAdvice({ takenBy, refusedBy }: ParameterPlaces): string {
  return `a parameter of ${takenBy.join(' or ')}, not of ${refusedBy.join(' or ')} sent: change the type, or remove it`;
}

/**
 * The message for keys an object holds that are not among its fields (a refusal of its own, not
 * beside a missing field): `unknown field "x": remove it`, or, when the key is a near miss of a
 * field among `candidates` ({@link nearMissOf}), `unknown field "dryrun": did you mean "dryRun"?`
 * (removing it would change what the request does: a dry run would write). A key that is no such
 * near miss but a parameter of a strategy or trigger, sent beside them in an object whose `fields`
 * (every field its schema has, held or not) include `strategy` / `trigger`, `held` the object as sent
 * ({@link parameterPlacesOf}), is told where it belongs, not to be removed (that would run with the
 * default): `unknown field "maxTurns": it is a parameter of the strategy or the trigger; move it
 * into "strategy" or "trigger" (strategy.maxTurns / trigger.maxTurns)`, for a near miss `unknown
 * field "maxEvent": did you mean "maxEvents", a parameter of the strategy? move it into "strategy"
 * (strategy.maxEvents)`; only into a strategy or trigger whose type as sent takes it (or one not
 * sent), else `it is a parameter of the token-count trigger, not of the turn-count trigger sent:
 * change the type, or remove it`. Several keys: `unknown fields "dryrun", "x": did you mean "dryRun" for
 * "dryrun"? remove the others` or `…: remove them`, with `move "maxTurns" into "strategy" or
 * "trigger" (strategy.maxTurns / trigger.maxTurns), "threshold" into "trigger" (trigger.threshold)`
 * after the question for the named parameters (`…; remove the others` when keys are left); the
 * near misses of `candidates` named first, at most {@link MAX_NAMED_UNKNOWN_KEYS} keys (`and N
 * more`). `candidates` should leave out the fields the object already holds (`Id` beside `id` is
 * no typo of it). Keys are quoted as errors quote client input.
 */
export function unknownKeysMessage({
  unknownKeys,
  candidates,
  noun = 'field',
  fields = [],
  held = {},
}: Omit<UnknownFieldHintInput, 'holder'> & { fields?: readonly string[]; held?: object }): string {
  const ordered = nearMissesFirst(unknownKeys, candidates);
  const named = ordered.slice(0, MAX_NAMED_UNKNOWN_KEYS);
  const more = unknownKeys.length - named.length;
  const list = `${named.map((k) => quoteInput(k.key)).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  const misses = named.filter((k): k is { key: string; field: string } => k.field !== undefined);
  const moves = named.flatMap((k) => {
    const places = k.field === undefined ? parameterPlacesOf(k.key, fields, held) : undefined;
    return places === undefined ? [] : [{ key: k.key, places }];
  });
  if (unknownKeys.length === 1) {
    if (misses.length === 1) return `unknown ${noun} ${list}: did you mean ${quoteInput(misses[0].field)}?`;
    if (moves.length === 0) return `unknown ${noun} ${list}: remove it`;
    const { places } = moves[0];
    const exact = places.parameter === moves[0].key;
    if (places.places.length === 0)
      return `unknown ${noun} ${list}: ${exact ? `it is ${refusedAdvice(places)}` : `did you mean ${quoteInput(places.parameter)}? it is ${refusedAdvice(places)}`}`;
    const of = places.places.map((p) => (p === 'trigger.triggers[…]' ? 'a member of the trigger' : `the ${p}`)).join(' or ');
    const what = exact ? `it is a parameter of ${of};` : `did you mean ${quoteInput(places.parameter)}, a parameter of ${of}?`;
    return `unknown ${noun} ${list}: ${what} move it into ${intoPlaces(places)}`;
  }
  if (misses.length === 0 && moves.length === 0) return `unknown ${noun}s ${list}: remove them`;
  const question = misses.length === 0 ? [] : [`did you mean ${misses.map((m) => `${quoteInput(m.field)} for ${quoteInput(m.key)}`).join(', ')}?`];
  const placed = moves.filter((m) => m.places.places.length > 0);
  const move = placed.length === 0 ? [] : [`move ${placed.map((m) => `${quoteInput(m.key)} into ${intoPlaces(m.places)}`).join(', ')}`];
  const refused = moves.filter((m) => m.places.places.length === 0).map((m) => `${quoteInput(m.key)} is ${refusedAdvice(m.places)}`);
  const others = misses.length + moves.length < unknownKeys.length;
  const advice = [[...question, ...move].join(' '), ...refused].filter((a) => a !== '').join('; ');
  return `unknown ${noun}s ${list}: ${advice}${others ? `${moves.length > 0 ? ';' : ''} remove the others` : ''}`;
}

/**
 * The unknown key of `holder` (a key outside `allowedKeys`) an error should name: the first that is
 * a near miss of an allowed key `holder` does not hold already, among its first
 * {@link MAX_SCANNED_UNKNOWN_KEYS} unknown keys, else the first; undefined when all are allowed. So
 * `{"junk0": 1, "maxEvent": 1}` is answered about the typo, with its suggestion.
 */
export function firstUnknownKey(holder: object, allowedKeys: readonly string[]): string | undefined {
  const unknown: string[] = [];
  for (const key of Object.keys(holder)) {
    if (allowedKeys.includes(key)) continue;
    unknown.push(key);
    if (unknown.length === MAX_SCANNED_UNKNOWN_KEYS) break;
  }
  const free = allowedKeys.filter((k) => !Object.hasOwn(holder, k));
  return unknown.find((k) => nearMissOf(k, free) !== undefined) ?? unknown[0];
}

/**
 * What an {@link InvalidParameterError} for the unknown key `key` of `holder` says it got: `an
 * unknown key`, or `an unknown key; did you mean "maxTurns"?` when `key` is a near miss of one of
 * `allowedKeys` that `holder` does not hold already (`invalid trigger.maxTurn: must be absent
 * (allowed keys: type, maxTurns) (got an unknown key; did you mean "maxTurns"?)`), followed by the
 * other unknown keys `holder` (named `holderName`, e.g. `strategy`) holds, see {@link otherUnknownKeys}:
 * `(got an unknown key; strategy has another unknown key: "k1")`, `(got an unknown key; did you
 * mean "maxTurns"? trigger has 2 other unknown keys: "a", "b")`.
 */
export function unknownKeyGot(key: string, allowedKeys: readonly string[], holder: object, holderName: string): string {
  const field = nearMissOf(
    key,
    allowedKeys.filter((k) => !Object.hasOwn(holder, k)),
  );
  const got = field === undefined ? 'an unknown key' : `an unknown key; did you mean ${quoteInput(field)}?`;
  const others = otherUnknownKeys(key, allowedKeys, holder, holderName);
  return others === '' ? got : `${got}${field === undefined ? ';' : ''} ${others}`;
}

/**
 * The other unknown keys of `holder` besides `key` (the one a refusal names), so a client fixes them
 * all at once instead of one refusal at a time (newcomer ncverify53): `''` when there are none, else
 * `strategy has 9 other unknown keys: "k1", "k2", "k3", "k4" and 5 more` (at most
 * {@link MAX_NAMED_UNKNOWN_KEYS} − 1 named, in the order sent, each quoted as errors quote client
 * input; the rest counted). One pass over the keys, no comparison: bounded whatever their number.
 */
function otherUnknownKeys(key: string, allowedKeys: readonly string[], holder: object, holderName: string): string {
  const named: string[] = [];
  let count = 0;
  for (const other of Object.keys(holder)) {
    if (other === key || allowedKeys.includes(other)) continue;
    count++;
    if (named.length < MAX_NAMED_UNKNOWN_KEYS - 1) named.push(other);
  }
  if (count === 0) return '';
  const more = count - named.length;
  const list = `${named.map((k) => quoteInput(k)).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  return `${holderName} has ${count === 1 ? 'another unknown key' : `${count} other unknown keys`}: ${list}`;
}

/**
 * The hint a "required" message ends with when its object also holds unknown keys: `''` when it
 * holds none; else ` (<holder> has an unknown field "evnts": did you mean "events"?)`, or with
 * several keys ` (<holder> has unknown fields "evnts", "x": did you mean "events" for "evnts"?)`
 * (the suggestion only for the keys that are a near miss, {@link nearMissOf}; no question when none
 * is). Names at most {@link MAX_NAMED_UNKNOWN_KEYS} keys, the near misses first (among the first
 * {@link MAX_SCANNED_UNKNOWN_KEYS}), each quoted as errors quote client input.
 */
export function unknownFieldHint({ holder, unknownKeys, candidates, noun = 'field' }: UnknownFieldHintInput): string {
  if (unknownKeys.length === 0) return '';
  const named = nearMissesFirst(unknownKeys, candidates).slice(0, MAX_NAMED_UNKNOWN_KEYS);
  const more = unknownKeys.length - named.length;
  const list = `${named.map((k) => quoteInput(k.key)).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  const has = unknownKeys.length === 1 ? `has an unknown ${noun} ${list}` : `has unknown ${noun}s ${list}`;
  const misses = named.filter((k): k is { key: string; field: string } => k.field !== undefined);
  let question = '';
  if (misses.length === 1 && unknownKeys.length === 1) question = `: did you mean ${quoteInput(misses[0].field)}?`;
  else if (misses.length > 0) question = `: did you mean ${misses.map((m) => `${quoteInput(m.field)} for ${quoteInput(m.key)}`).join(', ')}?`;
  return ` (${holder} ${has}${question})`;
}
