/**
 * How the typed client writes a JSON request body. openapi-fetch's default, `JSON.stringify`,
 * writes `NaN`, `Infinity` and `-Infinity` as `null`, so `metadata: { score: NaN }` was answered
 * 201 and stored as `null` (newcomer ncapi71 F3), where the service refuses a number that is not
 * finite (docs/http-api.md, `metadata`): the client refuses it before anything is sent instead.
 */

/**
 * Where in `value` the first number that is not finite is (`NaN`, `Infinity`, `-Infinity`), as a
 * path from `at` (`events[0].metadata.score`), or undefined when there is none. Reads only what
 * `JSON.stringify` would write: own enumerable members of plain objects and arrays, through
 * `toJSON` (a `Date` is text).
 */
export function nonFiniteNumberAt(value: unknown, at: string): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : at;
  if (typeof value !== 'object' || value === null) return undefined;
  const json = (value as { toJSON?: unknown }).toJSON;
  if (typeof json === 'function') return nonFiniteNumberAt((json as () => unknown).call(value), at);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFiniteNumberAt(value[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, member] of Object.entries(value)) {
    const found = nonFiniteNumberAt(member, /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`);
    if (found) return found;
  }
  return undefined;
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
