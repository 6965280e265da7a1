/**
 * The rule of a text that shows nothing, which the service refuses wherever a text must say
 * something: a summarizer's reply (DESIGN §3.7: "a blank, whitespace or error reply is a
 * failure"), a strategy's prompts, and the text of a user, system or summary event and a
 * summary's shadow prompt (newcomer ncfresh70 F1: a system message of U+200B was stored, pinned
 * as the latest system message, and the real instructions archived for it).
 */

/**
 * Text that shows nothing (the empty text included): white space (Unicode White_Space),
 * default-ignorable code points (Default_Ignorable_Code_Point: zero-width space and joiners, word
 * joiner, soft hyphen, variation selectors, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0,
 * U+180E), control and format characters (Cc, Cf), the blank Braille pattern U+2800, the object
 * replacement character U+FFFC (where an attachment was: browsers draw nothing; newcomer ncverify70 L1), and
 * combining marks (M: an accent, a vowel sign), which show only on a base character, and none is
 * there (newcomer ncrecheck65 F1: a reply of U+0301 alone was stored as the summary).
 */
const SHOWS_NOTHING = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\u2800\uFFFC\p{M}]*$/u;

/** What a text that shows nothing holds, in words (after "is blank: " or "blank reply: "). */
export const SHOWS_NOTHING_DESCRIPTION = 'only characters that render as nothing (white space, zero-width or filler characters, marks on no letter, U+FFFC)';

/**
 * True when `text` (any length, UTF-16) shows nothing ({@link SHOWS_NOTHING}): `""`, `"   "`,
 * `"\u200b"`, `"\u0301"`, `"\u2800\n"`; false as soon as one character shows (`"."`, `"😀"`).
 */
export function showsNothing(text: string): boolean {
  return SHOWS_NOTHING.test(text);
}

/**
 * The refusal of a text that shows nothing ({@link showsNothing}), after its field's name; `why`
 * says what needs the text: `is blank (only characters that render as nothing (…)): <why>; send the text`.
 */
export function blankTextRefusal(why: string): string {
  return `is blank (${SHOWS_NOTHING_DESCRIPTION}): ${why}; send the text`;
}
