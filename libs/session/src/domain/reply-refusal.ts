import { replyLengthRefusal, showsNothing, SHOWS_NOTHING_DESCRIPTION } from '@lib/compaction';
import { hasLoneSurrogate } from './openai-chat-format';

/**
 * The rule that says whether a summarizer's reply may be stored as a summary (DESIGN §3.7: an
 * unusable reply "is a failure: nothing is archived …, the old summary stays"). A reply is
 * unusable when:
 * - it shows nothing: every character is white space or one that renders as nothing
 *   ({@link showsNothing}: zero-width spaces and joiners, U+2060, U+180E, fillers such as
 *   U+3164 and U+2800, combining marks with no base character; newcomer ncdesign65 F1: a reply of U+200B was stored as the summary and
 *   the events it covered left the window for it). DESIGN §3.7: "a blank, whitespace or error reply is a failure";
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
 *   `blank reply: only characters that render as nothing (white space, zero-width or filler characters, marks on no letter, U+FFFC)`,
 *   `reply is not valid Unicode: a lone UTF-16 surrogate at code unit 8` or
 *   `reply longer than the longest text an event may hold (2200000 characters, MAX_TEXT_LENGTH 1000000)`.
 */
export function replyRefusal(text: string, maxTextLength: number | undefined): string | undefined {
  if (showsNothing(text)) return `blank reply: ${SHOWS_NOTHING_DESCRIPTION}`;
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
