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

/**
 * The first value in `value` that `JSON.stringify` would not send as given, with its path from
 * `at`, or undefined when there is none:
 * - a number that is not finite (`NaN`, `Infinity`, `-Infinity`, also boxed: `new Number(NaN)`)
 *   or an invalid `Date`: sent as `null`;
 * - an array item that is `undefined`, a function or a symbol (also a hole): sent as `null`
 *   (newcomer ncapi73 F3); as an object's member, such a value is left out, which is how an
 *   optional field is sent absent, so that is not refused;
 * - an object that contains itself: `JSON.stringify` throws, after a deep walk.
 * Reads only what `JSON.stringify` would write: own enumerable members of plain objects and
 * arrays, through `toJSON` (a valid `Date` is text).
 */
export function unsendableValueAt(value: unknown, at: string, within: Set<object> = new Set()): UnsendableValue | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { at, problem: NON_FINITE };
  if (typeof value !== 'object' || value === null) return undefined;
  if (value instanceof Number) return unsendableValueAt(value.valueOf(), at, within);
  if (value instanceof Date && Number.isNaN(value.getTime())) return { at, problem: INVALID_DATE };
  if (within.has(value)) return { at, problem: CONTAINS_ITSELF };
  within.add(value);
  try {
    const json = (value as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function') return unsendableValueAt((json as () => unknown).call(value), at, within);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') return { at: `${at}[${i}]`, problem: HOLE_IN_ARRAY };
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
 *   `JSON.stringify` would send `null`; an object that contains itself), before anything is sent.
 */
export function serializeBody(body: unknown): string {
  const found = unsendableValueAt(body, 'body');
  if (found !== undefined) throw new TypeError(`${found.at}: ${found.problem}`);
  return JSON.stringify(body);
}
