/**
 * How the typed client writes a request's query parameters. openapi-fetch's default writes a
 * `Date` (an object with no own keys) as nothing, so `from: new Date(…)` went out without the
 * filter and the answer was unfiltered (newcomer nctime, F4); an empty array or object vanished
 * the same way. Here every value is written or refused, never dropped.
 */

/**
 * The query parameters that are times (recall's `from`/`to`, the session list's
 * `updatedSince` and `updatedBefore`, the window's `atTime`): the client's types accept a `Date` for them besides
 * ISO-8601 text.
 */
export const TIME_QUERY_PARAMETERS = ['from', 'to', 'updatedSince', 'updatedBefore', 'atTime'] as const;

/** A name of {@link TIME_QUERY_PARAMETERS}. */
export type TimeQueryParameter = (typeof TIME_QUERY_PARAMETERS)[number];

/** Whether `text` holds a lone UTF-16 surrogate: not Unicode text, so no URL can carry it (`encodeURIComponent` throws `URIError`). */
export function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/** What the TypeError for a URL parameter holding a lone surrogate says after the parameter's name. */
export const LONE_SURROGATE_REFUSAL = 'contains a lone UTF-16 surrogate, which a URL cannot carry (it is not Unicode text); pass valid Unicode';

/**
 * The text sent for one query parameter's value, or undefined to leave the parameter out:
 * `undefined` and `null` are left out (absent); a string as it is; a number, bigint or boolean as
 * `String(value)` (`20`, `true`); a `Date` as its ISO-8601 UTC text (`toISOString()`, e.g.
 * `2026-01-31T12:00:00.000Z`). @throws TypeError naming the parameter for text with a lone surrogate
 * ({@link hasLoneSurrogate}; encoding it threw a bare `URIError`), an invalid `Date`, and for
 * any other value (an array, an object, a function, a symbol): every parameter of the API takes one
 * value, and such a value was silently dropped or mangled before.
 */
export function queryParameterText(name: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw new TypeError(`query parameter "${name}": ${LONE_SURROGATE_REFUSAL}`);
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError(`query parameter "${name}": the Date is invalid (new Date(…) could not read its input)`);
    return value.toISOString();
  }
  const kind = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  throw new TypeError(`query parameter "${name}": ${kind} cannot be sent; pass one string, number, boolean or Date (a time), or leave it out`);
}

/**
 * The query string (without `?`) of a request's query parameters, each written by
 * {@link queryParameterText} in the order given, names and values percent-encoded
 * (`encodeURIComponent`: an offset's `+` is sent as `%2B`). @throws TypeError as
 * {@link queryParameterText} does.
 */
export function serializeQuery(query: Record<string, unknown> | undefined): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query ?? {})) {
    const text = queryParameterText(name, value);
    if (text !== undefined) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`);
  }
  return parts.join('&');
}
