/**
 * The one rule for client-chosen ids, on every route (native events and OpenAI messages, their
 * tool-call ids, `userId`): 1 to 256 characters (Unicode code points: an emoji such as 😀 counts
 * one), no control characters (Cc), no format
 * characters (Cf: bidi overrides and isolates such as U+202E, zero-width U+200B–U+200D, U+FEFF,
 * soft hyphen), no line or paragraph separators, no lone surrogates. Such characters are invisible
 * or reorder text: two ids that look the same could differ, and an id could display as another.
 */

/** Longest client id, in characters (Unicode code points). */
export const MAX_CLIENT_ID_LENGTH = 256;

/** The unit of every length limit of the API, as messages name it. */
export const LENGTH_UNIT = 'characters (Unicode code points)';

/**
 * Length of `s` in Unicode code points (a surrogate pair counts one; a lone surrogate counts one),
 * the unit of every length limit of the API (JSON Schema's `maxLength` counts the same).
 */
export function codePointLength(s: string): number {
  let pairs = 0;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return s.length - pairs;
}

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `id` as a client id (a message to follow the field name), or undefined when it is valid. */
export function clientIdProblem(id: string): string | undefined {
  if (id.length === 0 || (id.length > MAX_CLIENT_ID_LENGTH && codePointLength(id) > MAX_CLIENT_ID_LENGTH) || INVISIBLE.test(id))
    return `must be 1 to ${MAX_CLIENT_ID_LENGTH} ${LENGTH_UNIT} without control characters or invisible format characters (bidi controls, zero-width characters)`;
  if (LONE_SURROGATE.test(id)) return 'contains a lone UTF-16 surrogate; send valid Unicode';
  return undefined;
}
