/**
 * How the typed client writes a JSON request body. openapi-fetch's default, `JSON.stringify`,
 * writes `NaN`, `Infinity` and `-Infinity` as `null`, so `metadata: { score: NaN }` was answered
 * 201 and stored as `null` (newcomer ncapi71 F3), where the service refuses a number that is not
 * finite (docs/http-api.md, `metadata`): the client refuses it before anything is sent instead,
 * and every other value `JSON.stringify` would change or cannot write ({@link unsendableValueAt}).
 */

/**
 * A value `JSON.stringify` would not send as given, found by {@link unsendableValueAt}: where it
 * is (`body.events[0].metadata.score`) and the sentence that says what it is and what to send.
 */
export interface UnsendableValue {
  /** The member's path from the body, e.g. `body.events[0].metadata.v[1]`. */
  at: string;
  /** What is wrong and what to do, e.g. `a number that is not finite … cannot be sent in JSON (it would arrive as null); send a finite number, or leave the member out`. */
  problem: string;
}

const NON_FINITE =
  'a number that is not finite (NaN, Infinity or -Infinity) cannot be sent in JSON (it would arrive as null); send a finite number, or leave the member out';
const INVALID_DATE = 'an invalid Date cannot be sent in JSON (it would arrive as null); send a valid Date, or leave the member out';
const CONTAINS_ITSELF = 'an object that contains itself cannot be sent in JSON; send a copy without the cycle';
const HOLE_IN_ARRAY =
  'an array item that is undefined, a function or a symbol cannot be sent in JSON (it would arrive as null); send null or a value, or remove the item';
const BIGINT = 'a BigInt cannot be sent in JSON (JSON.stringify throws); send it as a number or as text';
const COLLECTION = (kind: string, send: string) => `a ${kind} cannot be sent in JSON (it would arrive as {}, its contents lost); send ${send}`;
const TYPED_ARRAY = (kind: string) => `a ${kind} cannot be sent in JSON as an array (it would arrive as an object keyed "0", "1", …); send Array.from(it)`;

/** Where `value` is a Map or Set, or a typed array or DataView without `toJSON`, the problem of sending it; else undefined. */
function collectionProblem(value: object): string | undefined {
  if (value instanceof Map) return COLLECTION('Map', 'Object.fromEntries(map), or an array of its entries');
  if (value instanceof Set) return COLLECTION('Set', 'Array.from(set)');
  if (ArrayBuffer.isView(value)) return TYPED_ARRAY(value.constructor.name);
  return undefined;
}

/** What `JSON.stringify` writes for `value` as the member or item `key`: the answer of its `toJSON(key)` when it has one, else `value`. */
function jsonView(value: unknown, key: string): unknown {
  const toJson = typeof value === 'object' && value !== null ? (value as { toJSON?: unknown }).toJSON : undefined;
  return typeof toJson === 'function' ? (toJson as (key: string) => unknown).call(value, key) : value;
}

/**
 * The first value in `value` that `JSON.stringify` would not send as given, with its path from
 * `at`, or undefined when there is none:
 * - a number that is not finite (`NaN`, `Infinity`, `-Infinity`, also boxed: `new Number(NaN)`)
 *   or an invalid `Date`: sent as `null`;
 * - an array item that is `undefined`, a function or a symbol (also a hole, or an item whose
 *   `toJSON()` answers `undefined`): sent as `null` (newcomer ncapi73 F3, ncrecheck73 F4); as an
 *   object's member, such a value is left out, which is how an optional field is sent absent, so
 *   that is not refused;
 * - a `Map` or a `Set` (sent as `{}`, its contents lost), a typed array or `DataView` without
 *   `toJSON` (sent as an object keyed by index; a Node `Buffer` has `toJSON`), a `BigInt`
 *   (`JSON.stringify` throws without naming it; ncrecheck73 F4);
 * - an object that contains itself: `JSON.stringify` throws, after a deep walk.
 * Reads only what `JSON.stringify` would write: own enumerable members of plain objects and
 * arrays, through `toJSON` (a valid `Date` is text).
 */
export function unsendableValueAt(value: unknown, at: string, within: Set<object> = new Set()): UnsendableValue | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { at, problem: NON_FINITE };
  if (typeof value === 'bigint') return { at, problem: BIGINT };
  if (typeof value !== 'object' || value === null) return undefined;
  if (value instanceof Number) return unsendableValueAt(value.valueOf(), at, within);
  if (value instanceof Date && Number.isNaN(value.getTime())) return { at, problem: INVALID_DATE };
  if (within.has(value)) return { at, problem: CONTAINS_ITSELF };
  within.add(value);
  try {
    const json = (value as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function') return unsendableValueAt((json as () => unknown).call(value), at, within);
    const collection = collectionProblem(value);
    if (collection !== undefined) return { at, problem: collection };
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const sent = jsonView(item, String(i));
        if (sent === undefined || typeof sent === 'function' || typeof sent === 'symbol') return { at: `${at}[${i}]`, problem: HOLE_IN_ARRAY };
        const found = unsendableValueAt(item, `${at}[${i}]`, within);
        if (found) return found;
      }
      return undefined;
    }
    for (const [key, member] of Object.entries(value)) {
      const found = unsendableValueAt(member, /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`, within);
      if (found) return found;
    }
    return undefined;
  } finally {
    within.delete(value);
  }
}

/**
 * The JSON text of a request body, as `JSON.stringify` writes it.
 * @throws TypeError `<path>: <problem>` ({@link unsendableValueAt}) for a value JSON would not carry
 *   as given (a number that is not finite, an invalid `Date`, an array item that is `undefined`:
 *   `JSON.stringify` would send `null`; a `Map`, `Set` or typed array; a `BigInt`; an object that
 *   contains itself), before anything is sent.
 */
export function serializeBody(body: unknown): string {
  const found = unsendableValueAt(body, 'body');
  if (found !== undefined) throw new TypeError(`${found.at}: ${found.problem}`);
  return JSON.stringify(body);
}
