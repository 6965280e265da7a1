/**
 * The one rule for client-chosen ids, on every route (native events and OpenAI messages, their
 * tool-call ids, `userId`): 1 to 256 characters (Unicode code points: an emoji such as 😀 counts
 * one), no control characters (Cc), no format
 * characters (Cf: bidi overrides and isolates such as U+202E, zero-width U+200B–U+200D, U+FEFF,
 * soft hyphen), no line or paragraph separators, no lone surrogates, no noncharacters (U+FFFF, …), and
 * not only characters that show nothing (`showsNothing`: spaces, U+00A0, fillers). Such characters are invisible
 * or reorder text: two ids that look the same could differ, and an id could display as another.
 * One exception: U+200D (zero-width joiner) inside an emoji ZWJ sequence (UTS #51 §2.3: between
 * two Extended_Pictographic characters, the first one possibly followed by U+FE0F or a skin-tone
 * modifier, e.g. 👨‍👩‍👧 or 👩🏽‍💻), where it is part of one visible emoji; anywhere else (`a‍b`,
 * at either end, two in a row) it stays refused.
 */
import { codePointLength, LENGTH_UNIT, showsNothing, SHOWS_NOTHING_DESCRIPTION } from '@lib/compaction';

/** Longest client id, in characters (Unicode code points). */
export const MAX_CLIENT_ID_LENGTH = 256;

export { codePointLength, LENGTH_UNIT } from '@lib/compaction';

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
/** Unicode's noncharacters (U+FDD0–U+FDEF and the last two code points of every plane, U+FFFE, U+FFFF, …). */
const NONCHARACTER = /\p{Noncharacter_Code_Point}/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A zero-width joiner inside an emoji ZWJ sequence (see the module doc), tested at the joiner's index (sticky). */
const EMOJI_ZWJ = /(?<=\p{Extended_Pictographic}[\u{FE0F}\p{Emoji_Modifier}]?)\u200D(?=\p{Extended_Pictographic})/uy;

/** The first character of `id` the rule refuses as invisible (an emoji sequence's joiners allowed): its code point and 1-based position in characters, or undefined. */
function firstInvisible(id: string): { codePoint: number; at: number } | undefined {
  INVISIBLE.lastIndex = 0;
  for (let match = INVISIBLE.exec(id); match; match = INVISIBLE.exec(id)) {
    EMOJI_ZWJ.lastIndex = match.index;
    if (match[0] === '\u200D' && EMOJI_ZWJ.test(id)) continue;
    return { codePoint: match[0].codePointAt(0)!, at: codePointLength(id.slice(0, match.index)) + 1 };
  }
  return undefined;
}

/** A code point's Unicode name form, e.g. `U+200D` for 0x200D (at least 4 upper-case hex digits). */
export const unicodeName = (codePoint: number): string => `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;

/** What is wrong with `id` as a client id (a message to follow the field name), or undefined when it is valid. */
export function clientIdProblem(id: string): string | undefined {
  const rule = `must be 1 to ${MAX_CLIENT_ID_LENGTH} ${LENGTH_UNIT} without control characters or invisible format characters (bidi controls, zero-width characters; a zero-width joiner only inside an emoji sequence such as 👨‍👩‍👧)`;
  if (id.length === 0 || (id.length > MAX_CLIENT_ID_LENGTH && codePointLength(id) > MAX_CLIENT_ID_LENGTH)) return rule;
  const invisible = firstInvisible(id);
  if (invisible) return `${rule}: ${unicodeName(invisible.codePoint)} at character ${invisible.at}`;
  if (LONE_SURROGATE.test(id)) return 'contains a lone UTF-16 surrogate; send valid Unicode';
  // an id no one can see or tell apart in a list (newcomer ncapi71 F8: spaces only, U+3164, U+00A0)
  if (showsNothing(id)) return `${rule}: it shows nothing (${SHOWS_NOTHING_DESCRIPTION}); send an id that shows`;
  const nonCharacter = NONCHARACTER.exec(id);
  if (nonCharacter)
    return `${rule}: ${unicodeName(nonCharacter[0].codePointAt(0)!)} at character ${codePointLength(id.slice(0, nonCharacter.index)) + 1} is a noncharacter (Unicode keeps it for a program's internal use, never for text)`;
  return undefined;
}
