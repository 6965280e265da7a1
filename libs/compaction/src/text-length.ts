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

/**
 * Default longest text of one event field, in characters (Unicode code points): the service's
 * `MAX_TEXT_LENGTH` when it is not set.
 */
export const DEFAULT_MAX_TEXT_LENGTH = 1_000_000;

/**
 * The rule that bounds a summary (DESIGN §3.7): a summarizer reply longer than the longest text an
 * event may hold (`maxTextLength`, the service's `MAX_TEXT_LENGTH`, in characters = Unicode code
 * points) is unusable, like a blank one: the pass fails and the reply is never stored. The
 * write side applies it to every summarizer's final text (commanded, NATS and automatic passes
 * alike); the model summarizer also to each intermediate reply, so an overlong running summary
 * fails the pass before it is carried into the next call.
 *
 * @param text the reply as it would be stored (trimmed).
 * @param maxTextLength integer ≥ 1, characters.
 * @returns undefined when `text` has at most `maxTextLength` characters; else the reason, e.g.
 *   `reply longer than the longest text an event may hold (2200000 characters, MAX_TEXT_LENGTH 1000000)`:
 *   the two lengths only, never any of the text.
 */
export function replyLengthRefusal(text: string, maxTextLength: number): string | undefined {
  // a string of at most maxTextLength UTF-16 code units has at most as many code points: no count needed
  if (text.length <= maxTextLength) return undefined;
  const length = codePointLength(text);
  if (length <= maxTextLength) return undefined;
  return `reply longer than the longest text an event may hold (${length} characters, MAX_TEXT_LENGTH ${maxTextLength})`;
}
