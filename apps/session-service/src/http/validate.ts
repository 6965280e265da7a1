/**
 * Runs a zod schema and turns its first issue into an {@link InvalidRequestError} whose
 * `parameter` is the JSON path of the offending field (e.g. `events[2].text`). Messages are the
 * schemas' own; where a schema gives none, {@link plainWording} says what to fix in the API's terms
 * (never zod's "Too small: expected array to have >=1 items").
 */
import type { z } from 'zod';
import { nearMissOf, quoteInput, scannedUnknownKeys, unknownFieldHint, unknownKeysMessage } from '@lib/compaction';
import { InvalidRequestError, LENGTH_UNIT, type InvalidRequestCode } from '@lib/session';
import { foreignFieldAdvice } from './foreign-field-advice';

/** `['events', 2, 'text']` → `events[2].text`. */
export function jsonPath(prefix: string, path: ReadonlyArray<PropertyKey>): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(body)';
}

/** Options of {@link validate}. */
export interface ValidateOptions {
  /** Code of an issue by the top-level field it is about (e.g. `{ q: 'invalid_query' }`); default `validation_failed`. */
  codes?: Readonly<Record<string, InvalidRequestCode>>;
  /** What an unknown top-level key is called: `field` (bodies, default) or `query parameter`. */
  unknownKey?: 'field' | 'query parameter';
  /**
   * Fields of other requests the body does not take, each with what to do instead (a policy's
   * `dryRun`: `POLICY_FOREIGN_FIELDS`). One sent at the top level of the body, exactly or as a near
   * miss ({@link foreignFieldAdvice}), is answered with that advice: `dryRun: unknown field "dryRun":
   * a policy has no dry run: …`, or after the other unknown keys' message, or after a missing
   * field's hint, as `; "dryRun": a policy has no dry run: …`. Code and `parameter` as without it.
   */
  foreign?: Readonly<Record<string, string>>;
}

/**
 * The code `codes` gives the field `name`, or `validation_failed`. Only the record's own entries
 * count: a field named after a member every object inherits (`__proto__`, `constructor`,
 * `toString`, sent as an unknown query parameter) is `validation_failed` too, never that member.
 */
export function codeOfField(codes: ValidateOptions['codes'], name: PropertyKey | undefined): InvalidRequestCode {
  return codes !== undefined && typeof name === 'string' && Object.hasOwn(codes, name) ? codes[name] : 'validation_failed';
}

/**
 * Parses `value` with `schema`.
 * @throws InvalidRequestError (400, code `validation_failed` or the one `options.codes` gives the
 *   field) naming the first invalid field: `<path>: <what to fix>`.
 */
export function validate<T extends z.ZodType>(schema: T, value: unknown, prefix = '', options: ValidateOptions = {}): z.infer<T> {
  const parsed = parseStoppingEarly(schema, value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  let path = issue.path;
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys: string[] }).keys;
    const noun = issue.path.length === 0 && !prefix ? (options.unknownKey ?? 'field') : 'field';
    // a near miss of a field the object does not hold already is suggested instead of "remove it" (which would change the request)
    const holder = valueAt(value, issue.path);
    const held = holder !== null && typeof holder === 'object' ? holder : {};
    const fields = [...(fieldsAt(schema, issue.path) ?? [])];
    const candidates = fields.filter((field) => !Object.hasOwn(held, field));
    // a strategy's or trigger's parameter sent beside them (`{"strategy": …, "maxTurns": 3}`) is told where it belongs: removing it would run with the default
    message = unknownKeysMessage({ unknownKeys: keys, candidates, fields, held, noun: noun === 'query parameter' ? 'query parameter' : 'field' });
    // a field of another request (a policy's dryRun) is told why it is not here and where it belongs
    const foreign = issue.path.length === 0 && !prefix ? foreignFieldAdvice(keys, candidates, options.foreign) : undefined;
    if (foreign !== undefined)
      message =
        keys.length === 1 ? `unknown ${noun} ${quoteInput(foreign.key)}: ${foreign.advice}` : `${message}; ${quoteInput(foreign.key)}: ${foreign.advice}`;
    // the key named as `parameter` is the one the message names first: a near miss (among the keys it looks at), else the first sent
    const first = scannedUnknownKeys(keys).find((k) => nearMissOf(k, candidates) !== undefined) ?? keys[0];
    path = [...issue.path, quoteInput(first, { quoted: false })];
  }
  const code = prefix ? 'validation_failed' : codeOfField(options.codes, path[0]);
  if (path.length === 0 && !prefix && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new InvalidRequestError(
      '(body)',
      value === undefined
        ? // no body arrived: most often a client that declared none (newcomer ncapi71 F7: an HTTP/1.0 POST without Content-Length)
          'the request has no body: send a JSON object (see /docs for its fields), its length in Content-Length (in HTTP/1.1, or Transfer-Encoding: chunked)'
        : 'the request body must be a JSON object (see /docs for its fields)',
      'validation_failed',
    );
  }
  const emptyParts = emptyTextPartsAt(value, path) ?? textPartsWithoutTextAt(value, path, message);
  if (emptyParts) {
    const where = jsonPath(prefix, emptyParts.path);
    throw new InvalidRequestError(where, `${where}: ${emptyParts.message}`, code);
  }
  const where = jsonPath(prefix, path);
  const hint = issue.code === 'unrecognized_keys' ? '' : missingFieldHint(schema, value, parsed.error.issues, path, prefix, options);
  throw new InvalidRequestError(where, `${where}: ${message}${hint}`, code);
}

/**
 * `schema.safeParse(value, { error: plainWording })`, at a cost bounded by the first invalid element
 * rather than by the body. A first pass stops at the first issue (zod's `abortEarly`, which
 * `schema.validate` uses: a container stops before its next child once one has an issue); a valid
 * body is answered by it, as by `safeParse`. A refused one is parsed again whole, with every array
 * on the first issue's path cut after the element holding it (`events[0].textParts[0]` keeps
 * `events[0]` and its first part): its issues are the whole body's up to that element (so the first
 * issue, and the missing fields and unknown keys of its object that {@link missingFieldHint} reads,
 * are the same), while the 1000 × 1024 invalid parts of a 3 MB body cost one issue, not a million
 * (docs/performance.md).
 */
export function parseStoppingEarly<T extends z.ZodType>(schema: T, value: unknown): z.ZodSafeParseResult<z.infer<T>> {
  // abortEarly is a parse context field zod 4.6 sets for schema.validate (ParseContextInternal); safeParse passes the context on
  const early = schema.safeParse(value, { error: plainWording, abortEarly: true } as z.core.ParseContext<z.core.$ZodIssue>);
  if (early.success) return early;
  const whole = schema.safeParse(cutAfter(value, early.error.issues[0].path), { error: plainWording });
  return whole.success ? early : whole;
}

/** `value` with each array on `path` cut after the element `path` goes through (`value` itself when none is cut). */
function cutAfter(value: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  if (path.length === 0 || value === null || typeof value !== 'object') return value;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    if (typeof head !== 'number' || head >= value.length) return value;
    const inner = cutAfter(value[head], rest);
    if (inner === value[head] && head === value.length - 1) return value;
    const out = value.slice(0, head + 1);
    out[head] = inner;
    return out;
  }
  if (typeof head !== 'string' || !Object.hasOwn(value, head)) return value;
  const inner = cutAfter((value as Record<string, unknown>)[head], rest);
  if (inner === (value as Record<string, unknown>)[head]) return value;
  // a copy that keeps every key as an own property (a `__proto__` key included: defineProperty, not assignment)
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    Object.defineProperty(out, key, { value: (value as Record<string, unknown>)[key], enumerable: true, writable: true, configurable: true });
  Object.defineProperty(out, head, { value: inner, enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * When the issue at `issuePath` is about a field its object (a JSON object of `value`) left out,
 * the {@link unknownFieldHint} of that object: the keys it holds that `schema` does not take there
 * (zod's `unrecognized_keys` issue for that object; else, as for an event without its `type`,
 * where zod reports no key, its keys no variant of the schema takes), with a suggestion for a
 * near miss of a missing field (every field `issues` says the object left out) or another field of
 * that object; for the body itself, then the advice for a field of another request among its keys
 * (`options.foreign`: `strategy: is required (the body has an unknown field "dryRun"); "dryRun": a
 * policy has no dry run: …`). `''` when the field is there (its value is wrong) or the object has no unknown key.
 */
export function missingFieldHint(
  schema: z.ZodType,
  value: unknown,
  issues: readonly z.core.$ZodIssue[],
  issuePath: ReadonlyArray<PropertyKey>,
  prefix = '',
  options: Pick<ValidateOptions, 'unknownKey' | 'foreign'> = {},
): string {
  const field = issuePath[issuePath.length - 1];
  if (typeof field !== 'string') return '';
  const parentPath = issuePath.slice(0, -1);
  const holder = valueAt(value, parentPath);
  if (holder === null || typeof holder !== 'object' || Array.isArray(holder)) return '';
  const sent = holder as Record<string, unknown>;
  const absent = (key: PropertyKey) => typeof key === 'string' && (!Object.hasOwn(sent, key) || sent[key] === undefined);
  if (!absent(field)) return '';
  const samePlace = (path: ReadonlyArray<PropertyKey>) => path.length === parentPath.length && parentPath.every((p, i) => p === path[i]);
  const known = fieldsAt(schema, parentPath);
  const reported = issues.find((i) => i.code === 'unrecognized_keys' && samePlace(i.path));
  const unknownKeys = reported ? (reported as { keys: string[] }).keys : known ? Object.keys(sent).filter((k) => !known.has(k)) : [];
  const missing = issues.flatMap((i) => {
    const last = i.path[i.path.length - 1];
    return i.path.length === issuePath.length && samePlace(i.path.slice(0, -1)) && absent(last) ? [last as string] : [];
  });
  const topLevel = parentPath.length === 0 && !prefix;
  const query = topLevel && options.unknownKey === 'query parameter';
  const candidates = [...new Set([field, ...missing, ...(known ?? [])])];
  const hint = unknownFieldHint({
    holder: topLevel ? (query ? 'the query' : 'the body') : jsonPath(prefix, parentPath),
    unknownKeys,
    candidates,
    noun: query ? 'parameter' : 'field',
  });
  const foreign = topLevel ? foreignFieldAdvice(unknownKeys, candidates, options.foreign) : undefined;
  return foreign === undefined ? hint : `${hint}; ${quoteInput(foreign.key)}: ${foreign.advice}`;
}

/** The part of `value` at `path` (undefined when there is none). */
function valueAt(value: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let at: unknown = value;
  for (const key of path) at = at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

/** Wrappers whose inner schema holds the fields: `optional`, `nullable`, `default`… (`innerType`), `pipe` (its input). */
const INNER_TYPES = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch', 'success']);

/**
 * The field names `schema` takes for the object at `path` (the union of every variant's, for a
 * union such as an event's), or undefined when the schema does not say (an object of any keys).
 */
function fieldsAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>, depth = 0): Set<string> | undefined {
  if (depth > 64) return undefined;
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  const next = (inner: unknown, at = path) => fieldsAt(inner as z.ZodType, at, depth + 1);
  if (INNER_TYPES.has(def.type)) return next(def.innerType);
  if (def.type === 'pipe') return next(def.in);
  if (def.type === 'lazy') return next((def.getter as () => unknown)());
  if (def.type === 'union') {
    const sets = (def.options as z.ZodType[]).map((option) => next(option)).filter((s): s is Set<string> => s !== undefined);
    return sets.length === 0 ? undefined : new Set(sets.flatMap((s) => [...s]));
  }
  if (path.length === 0) return def.type === 'object' ? new Set(Object.keys(def.shape as object)) : undefined;
  const [head, ...rest] = path;
  if (def.type === 'array' && typeof head === 'number') return next(def.element, rest);
  if (def.type === 'object' && typeof head === 'string' && Object.hasOwn(def.shape as object, head)) {
    return next((def.shape as Record<string, unknown>)[head], rest);
  }
  return undefined;
}

/** What an identity filter sent empty is told ({@link identityFilter}). */
export interface EmptyFilterAdvice {
  /** The id to give, with its article: `a session id`. */
  readonly give: string;
  /** What the request does without the parameter: `search every session of the tenant`. */
  readonly without: string;
}

/** The zod definitions of {@link identityFilter} schemas (shared by the copies `.describe()` makes), with their advice. */
const IDENTITY_FILTERS = new WeakMap<object, EmptyFilterAdvice>();

/**
 * Marks `schema`, an optional query parameter as it stands in its query schema's shape (after
 * `.optional()` and `.describe()`), as an identity filter: one that narrows a read to one session,
 * user or compaction (recall's `sessionId`, `userId` and `compactionId`, the session list's
 * `userId`). Sent empty it is refused, not taken as absent ({@link emptyOptionalsAsAbsent}): absent
 * it widens the read to the whole tenant, so `?sessionId=${sid}` with an empty `sid` would read
 * every session. The OpenAPI document gives it `minLength` 1 and says so
 * (`queryParametersJsonSchema`). Returns `schema` itself.
 */
export function identityFilter<T extends z.ZodType>(schema: T, advice: EmptyFilterAdvice): T {
  IDENTITY_FILTERS.set(schema._zod.def, advice);
  return schema;
}

/** The advice of an {@link identityFilter} schema (or of a copy `.describe()` made of it); undefined for any other. */
export function identityFilterAdvice(schema: unknown): EmptyFilterAdvice | undefined {
  const def = (schema as { _zod?: { def?: object } } | null)?._zod?.def;
  return def === undefined ? undefined : IDENTITY_FILTERS.get(def);
}

/**
 * The 400 message for the identity filter `name` sent empty, e.g. `sessionId: is empty: give a
 * session id, or leave the parameter out to search every session of the tenant`.
 */
export function emptyFilterMessage(name: string, advice: EmptyFilterAdvice): string {
  return `${name}: is empty: give ${advice.give}, or leave the parameter out to ${advice.without}`;
}

/**
 * The one rule of query parameters sent empty (`cursor=`, or `cursor` with no `=`), on every route:
 * `query` without the optional parameters of `shape` sent empty, which count as absent, the
 * query-string form of the rule that a null optional body field counts as absent (a client building
 * `?cursor=${next ?? ''}` gets the first page, as with no cursor). A repeated optional parameter
 * loses its empty occurrences (what is left, if anything, counts as sent that many times). A
 * required parameter sent empty (recall's `q=`) keeps its error; an unknown one stays unknown.
 * Returns `query` itself when nothing is dropped.
 * @throws InvalidRequestError for an {@link identityFilter} sent empty, alone or as one occurrence
 *   among several (`sessionId=&sessionId=s1`): it would widen the read, not narrow it
 *   ({@link emptyFilterMessage}; `parameter` the filter, the code `codes` gives it, as for a
 *   malformed value of it: recall's `sessionId` → `invalid_session_id`, else `validation_failed`).
 */
export function emptyOptionalsAsAbsent(shape: Record<string, unknown>, query: unknown, codes?: ValidateOptions['codes']): unknown {
  if (query === null || typeof query !== 'object') return query;
  const optional = (name: string) => Object.hasOwn(shape, name) && (shape[name] as z.ZodType).safeParse(undefined).success;
  let dropped = false;
  const kept: Array<[string, unknown]> = [];
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    const advice = optional(name) ? identityFilterAdvice(shape[name]) : undefined;
    if (advice && (value === '' || (Array.isArray(value) && value.includes('')))) {
      throw new InvalidRequestError(name, emptyFilterMessage(name, advice), codeOfField(codes, name));
    }
    // A repeated optional parameter loses its empty occurrences (`archived=&archived=true` is `archived=true`).
    const given = !optional(name) ? value : Array.isArray(value) ? value.filter((v) => v !== '') : value === '' ? [] : value;
    if (given === value) kept.push([name, value]);
    else {
      dropped = true;
      const left = given as unknown[];
      if (left.length > 0) kept.push([name, left.length === 1 ? left[0] : left]);
    }
  }
  return dropped ? Object.fromEntries(kept) : query;
}

/**
 * Validates the query parameters of a request (`query` as the router parsed it: a repeated
 * parameter is an array) with `schema`, a strict object of string parameters. An optional
 * parameter sent empty counts as absent, but an identity filter sent empty is refused
 * ({@link emptyOptionalsAsAbsent}).
 * @throws InvalidRequestError for a parameter of `schema` given more than once (`limit: is given 2
 *   times: send it once`; the code `codes` gives that parameter, e.g. recall's `q` → `invalid_query`,
 *   else `validation_failed`), an identity filter sent empty (same code), an unknown parameter (400 `validation_failed`, `unknown query
 *   parameter`), else as {@link validate}.
 */
export function validateQuery<T extends z.ZodType>(schema: T, query: unknown, codes?: ValidateOptions['codes']): z.infer<T> {
  const known = (schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  const given = emptyOptionalsAsAbsent(known, query, codes);
  if (given !== null && typeof given === 'object') {
    for (const [name, value] of Object.entries(given as Record<string, unknown>)) {
      if (Array.isArray(value) && Object.hasOwn(known, name)) {
        throw new InvalidRequestError(name, `${name}: is given ${value.length} times: send it once`, codeOfField(codes, name));
      }
    }
  }
  return validate(schema, given, '', { codes, unknownKey: 'query parameter' });
}

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', integer: 'an integer', int: 'an integer' };

/**
 * Wording of an issue whose schema set no message, saying what to fix (a zod error map: the
 * schemas' own messages win over it). Lengths are in {@link LENGTH_UNIT}, as zod counts strings.
 * Unknown keys get a fixed placeholder that {@link validate} replaces: zod's default message lists
 * every key, a string as long as the body for a body of unknown keys.
 */
export function plainWording(issue: z.core.$ZodRawIssue): string | undefined {
  const plural = (n: number | bigint, one: string) => `${n} ${one}${Number(n) === 1 ? '' : 's'}`;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${ARTICLE[issue.expected] ?? `a ${issue.expected}`}`;
    case 'too_small':
      if (issue.origin === 'array' || issue.origin === 'set') return `must hold at least ${plural(issue.minimum, 'item')}`;
      if (issue.origin === 'string') return `must be at least ${issue.minimum} ${LENGTH_UNIT}`;
      return `must be at least ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'array' || issue.origin === 'set') return `must hold at most ${plural(issue.maximum, 'item')}`;
      if (issue.origin === 'string') return `must be at most ${issue.maximum} ${LENGTH_UNIT}`;
      return `must be at most ${issue.maximum}`;
    case 'invalid_value':
      return `must be ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`}`;
    case 'invalid_format':
      return `must be a valid ${issue.format}`;
    case 'unrecognized_keys':
      // {@link validate} words it from the keys ({@link unknownKeysMessage}); zod's own would join every key into one string
      return 'has unknown fields';
    default:
      return undefined;
  }
}

/**
 * When an issue says an event has no text (`…text` missing or empty, or an assistant event with
 * nothing to say) and the caller sent the text as parts that are all empty, the issue is in the
 * parts: the path of the first part (`events[0].textParts[0]`) and what to do; else null.
 */
function emptyTextPartsAt(value: unknown, issuePath: ReadonlyArray<PropertyKey>): { path: PropertyKey[]; message: string } | null {
  const eventPath = issuePath[issuePath.length - 1] === 'text' ? issuePath.slice(0, -1) : issuePath;
  let event: unknown = value;
  for (const key of eventPath) event = event !== null && typeof event === 'object' ? (event as Record<PropertyKey, unknown>)[key] : undefined;
  if (event === null || typeof event !== 'object') return null;
  const { type, text, textParts, toolCalls, refusal } = event as Record<string, unknown>;
  if (!Array.isArray(textParts) || textParts.length === 0 || !textParts.every((p) => p === '') || (text !== undefined && text !== '')) return null;
  const path = [...eventPath, 'textParts', 0];
  if (type === 'user' || type === 'system') {
    return {
      path,
      message: 'the text parts are all empty: send some text in them (text, when sent, is their concatenation; user and system events need text)',
    };
  }
  if (type === 'assistant' && (!Array.isArray(toolCalls) || toolCalls.length === 0) && refusal === undefined) {
    return { path, message: 'the text parts are all empty: send some text in them, or a tool call or a refusal (then leave the text parts out)' };
  }
  return null;
}

/**
 * When an issue says an event's `text` is missing and the event sent `textParts`, what to do: the
 * parts only record how the text was sent (docs/http-api.md "What goes in comes out"), `text` is still
 * required and must be their concatenation; else null.
 */
function textPartsWithoutTextAt(value: unknown, issuePath: ReadonlyArray<PropertyKey>, message: string): { path: PropertyKey[]; message: string } | null {
  if (issuePath[issuePath.length - 1] !== 'text' || message !== 'is required') return null;
  const eventPath = issuePath.slice(0, -1);
  let event: unknown = value;
  for (const key of eventPath) event = event !== null && typeof event === 'object' ? (event as Record<PropertyKey, unknown>)[key] : undefined;
  if (event === null || typeof event !== 'object' || !Array.isArray((event as Record<string, unknown>).textParts)) return null;
  return {
    path: [...issuePath],
    message:
      'is required, also with textParts: send the whole text in text (textParts only records how it was split; their concatenation, without separator, must equal text)',
  };
}
