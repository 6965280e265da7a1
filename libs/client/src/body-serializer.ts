/**
 * How the typed client writes a JSON request body. openapi-fetch's default, `JSON.stringify`,
 * writes `NaN`, `Infinity` and `-Infinity` as `null`, so `metadata: { score: NaN }` was answered
 * 201 and stored as `null` (newcomer ncapi71 F3), where the service refuses a number that is not
 * finite (docs/http-api.md, `metadata`): the client refuses it before anything is sent instead.
 */

/**
 * Where in `value` the first value JSON cannot carry is, as a path from `at`
 * (`events[0].metadata.score`), with what it is, or undefined when there is none: a number that is
 * not finite (`NaN`, `Infinity`, `-Infinity`, also boxed: `new Number(NaN)`), an invalid `Date`
 * (`JSON.stringify` sends `null` for each), or an object that contains itself (it throws, after a
 * deep walk). Reads only what `JSON.stringify` would write: own enumerable members of plain objects
 * and arrays, through `toJSON` (a valid `Date` is text).
 */
export function nonFiniteNumberAt(value: unknown, at: string, within: Set<object> = new Set()): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : at;
  if (typeof value !== 'object' || value === null) return undefined;
  if (value instanceof Number) return nonFiniteNumberAt(value.valueOf(), at, within);
  if (value instanceof Date && Number.isNaN(value.getTime())) return `${at} (an invalid Date)`;
  if (within.has(value)) return `${at} (it contains itself)`;
  within.add(value);
  try {
    const json = (value as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function') return nonFiniteNumberAt((json as () => unknown).call(value), at, within);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const found = nonFiniteNumberAt(value[i], `${at}[${i}]`, within);
        if (found) return found;
      }
      return undefined;
    }
    for (const [key, member] of Object.entries(value)) {
      const found = nonFiniteNumberAt(member, /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`, within);
      if (found) return found;
    }
    return undefined;
  } finally {
    within.delete(value);
  }
}

/**
 * The JSON text of a request body, as `JSON.stringify` writes it. @throws TypeError naming the
 * member ({@link nonFiniteNumberAt}) for a number that is not finite, which JSON cannot carry
 * (`JSON.stringify` would send `null` in its place).
 */
export function serializeBody(body: unknown): string {
  const at = nonFiniteNumberAt(body, 'body');
  if (at !== undefined)
    throw new TypeError(
      `${at}: a number that is not finite (NaN, Infinity or -Infinity) cannot be sent in JSON (it would arrive as null); send a finite number, or leave the member out`,
    );
  return JSON.stringify(body);
}
