/**
 * How an error message repeats a value the client sent (an id, a field or parameter name, a
 * header): whole when short, else its start and its length, so a 10,000-character id does not
 * come back 10,000 characters long in a 404. Lengths in characters (Unicode code points), as every
 * limit of the API counts them.
 */
import { graphemeBoundary } from './grapheme-boundary';
import { codePointLength } from './text-length';

/** Most characters (Unicode code points) of a client value that an error message repeats. */
export const MAX_ECHOED_LENGTH = 64;

/**
 * `value` as an error message quotes it: JSON-quoted (`"call_1"`); over {@link MAX_ECHOED_LENGTH}
 * characters, its first {@link MAX_ECHOED_LENGTH} or fewer (cut on a grapheme cluster boundary, {@link graphemeBoundary}: never half a surrogate pair or a flag) and its length:
 * `"cccc…" (10000 characters)`. With `quoted: false` (a name inside a path such as
 * `metadata.<key>`) the same without quotes: `cccc… (10000 characters)`, unless the name is empty
 * or holds a control, format or line/paragraph separator character: then it is quoted anyway, so a
 * path never ends in nothing or carries an invisible character (`?=` is named `""`, not `(body)`).
 * Quoted values escape those characters as `\uXXXX`.
 */
export function quoteInput(value: string, options: { quoted?: boolean } = {}): string {
  const quote = options.quoted === false && isPlainName(value) ? (s: string) => s : jsonQuote;
  // A string of at most MAX_ECHOED_LENGTH UTF-16 code units has at most that many code points.
  if (value.length <= MAX_ECHOED_LENGTH) return quote(value);
  const length = codePointLength(value);
  if (length <= MAX_ECHOED_LENGTH) return quote(value);
  let end = 0;
  for (let points = 0; points < MAX_ECHOED_LENGTH; points++) {
    const c = value.charCodeAt(end);
    end += c >= 0xd800 && c <= 0xdbff && end + 1 < value.length && value.charCodeAt(end + 1) >= 0xdc00 && value.charCodeAt(end + 1) <= 0xdfff ? 2 : 1;
  }
  return `${quote(`${value.slice(0, graphemeBoundary(value, end, 'before'))}…`)} (${length} characters)`;
}

/** Control, format and line/paragraph separator characters: escaped in quotes, never bare in a path. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const INVISIBLE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

function isPlainName(value: string): boolean {
  return value !== '' && !INVISIBLE.test(value);
}

/** JSON string literal of `s`, with every invisible character escaped (JSON.stringify leaves U+007F–U+009F, U+2028 and format characters bare). */
function jsonQuote(s: string): string {
  return JSON.stringify(s).replace(INVISIBLE_ALL, (c) =>
    Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}
