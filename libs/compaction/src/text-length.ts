/**
 * The unit of every length limit of the API (ids, texts, recall's `q`, metadata, strategy
 * prompts): characters, i.e. Unicode code points. An emoji such as 😀 is one character though it
 * is two UTF-16 code units; JSON Schema's `maxLength` (the OpenAPI document) and zod count the same.
 */

/** The unit of every length limit, as error messages name it. */
export const LENGTH_UNIT = 'characters (Unicode code points)';

/** Length of `s` in Unicode code points: a surrogate pair counts one, a lone surrogate one. */
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
