/**
 * How an error message repeats a value the client sent (an id, a field or parameter name, a
 * header): whole when short, else its start and its length, so a 10,000-character id does not
 * come back 10,000 characters long in a 404. Lengths in characters (Unicode code points), as every
 * limit of the API counts them.
 */
import { codePointLength } from './text-length';

/** Most characters (Unicode code points) of a client value that an error message repeats. */
export const MAX_ECHOED_LENGTH = 64;

/**
 * `value` as an error message quotes it: JSON-quoted (`"call_1"`); over {@link MAX_ECHOED_LENGTH}
 * characters, its first {@link MAX_ECHOED_LENGTH} (never half a surrogate pair) and its length:
 * `"cccc…" (10000 characters)`. With `quoted: false` (a name inside a path such as
 * `metadata.<key>`) the same without quotes: `cccc… (10000 characters)`.
 */
export function quoteInput(value: string, options: { quoted?: boolean } = {}): string {
  const quote = options.quoted === false ? (s: string) => s : (s: string) => JSON.stringify(s);
  // A string of at most MAX_ECHOED_LENGTH UTF-16 code units has at most that many code points.
  if (value.length <= MAX_ECHOED_LENGTH) return quote(value);
  const length = codePointLength(value);
  if (length <= MAX_ECHOED_LENGTH) return quote(value);
  let end = 0;
  for (let points = 0; points < MAX_ECHOED_LENGTH; points++) {
    const c = value.charCodeAt(end);
    end += c >= 0xd800 && c <= 0xdbff && end + 1 < value.length && value.charCodeAt(end + 1) >= 0xdc00 && value.charCodeAt(end + 1) <= 0xdfff ? 2 : 1;
  }
  return `${quote(`${value.slice(0, end)}…`)} (${length} characters)`;
}
