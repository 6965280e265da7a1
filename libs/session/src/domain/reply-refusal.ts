import { replyLengthRefusal } from '@lib/compaction';
import { hasLoneSurrogate } from './openai-chat-format';

/**
 * The rule that says whether a summarizer's reply may be stored as a summary (DESIGN §3.7: an
 * unusable reply "is a failure: nothing is archived …, the old summary stays"). A reply is
 * unusable, like a blank one, when:
 * - it is not valid Unicode: it holds a lone UTF-16 surrogate (an endpoint that cut its reply
 *   between the two halves of an emoji sends `…\ud83d`). The service refuses such text on input
 *   (`validation_failed … contains a lone UTF-16 surrogate`), so it never stores nor serves it;
 *   the reply is refused, not repaired: a repaired reply (U+FFFD in place of the half) would be a
 *   summary that says something the model did not write, and the pass can be run again;
 * - it is longer than the longest text an event may hold ({@link replyLengthRefusal}).
 * The write side applies it to every summarizer's final text (commanded, NATS and automatic
 * passes alike); the model summarizer also to each intermediate reply, so a bad running summary
 * fails the pass before it is carried into the next call.
 *
 * @param text the reply as it would be stored (trimmed).
 * @param maxTextLength integer ≥ 1, characters (Unicode code points); undefined: no length bound.
 * @returns undefined when the reply is usable; else the reason, without any of the text, e.g.
 *   `reply is not valid Unicode: a lone UTF-16 surrogate at code unit 8` or
 *   `reply longer than the longest text an event may hold (2200000 characters, MAX_TEXT_LENGTH 1000000)`.
 */
export function replyRefusal(text: string, maxTextLength: number | undefined): string | undefined {
  if (hasLoneSurrogate(text)) return `reply is not valid Unicode: a lone UTF-16 surrogate at code unit ${loneSurrogateAt(text)}`;
  return maxTextLength === undefined ? undefined : replyLengthRefusal(text, maxTextLength);
}

/** Index (UTF-16 code units) of the first lone surrogate of `text`; -1 when none. */
function loneSurrogateAt(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const d = text.charCodeAt(i + 1);
    if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) i++;
    else return i;
  }
  return -1;
}
