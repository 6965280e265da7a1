/**
 * Default-ignorable code points in recall's fold (newcomer report ncintl A1): invisible characters
 * written inside words — a zero-width space, a soft hyphen (text pasted from web pages and PDFs), a
 * word joiner, U+FEFF, the zero-width non-joiner Persian spelling requires (`می‌خواهم`), a joiner
 * in Indic text, bidi controls, variation selectors of letters, the combining grapheme joiner,
 * Hangul fillers, … — are not word characters for FTS5's unicode61 and split the word, so
 * `zero\u200Bwidth` was not found by `zerowidth`. Unicode's NFKC_Casefold, the folding meant for
 * matching, removes them; recall does too, on the index and the query side alike, except where
 * they make an emoji what it is (the selectors, joiners and tags the trigram index searches).
 */

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
const DEFAULT_IGNORABLES = /\p{Default_Ignorable_Code_Point}/gu;
/** A code point a variation selector U+FE0E/U+FE0F may follow in an emoji (❤️, ℹ️, keycap bases). */
const EMOJI = /^\p{Emoji}$/u;
/** What a zero-width joiner joins in an emoji ZWJ sequence (👩‍💻, 👩🏽‍💻). */
const PICTOGRAPH = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}]$/u;
const KEYCAP_BASE = /^[0-9#*]$/;
const KEYCAP = 0x20e3;
const ZWJ = '\u200d';
const BLACK_FLAG = 0x1f3f4;
/** Most tag characters a subdivision flag has after 🏴 (`gbsct` and the cancel tag: 6). */
const MAX_TAG_RUN = 32;

/**
 * `text` without its default-ignorable code points (Unicode's Default_Ignorable_Code_Point), but
 * those of emoji, which stay: a variation selector U+FE0E/U+FE0F right after an emoji character
 * (❤️; after a digit, `#` or `*` only in a keycap, 1️⃣), a zero-width joiner between two
 * pictographs (👩‍💻, ❤️‍🔥), and the tag characters U+E0020–U+E007F of a subdivision flag
 * (🏴 and its tags). The same rule the `/ui` applies to show hidden characters. Part of
 * `recallFold` (after NFKC), so documents and queries alike. Returns `text` itself when it holds
 * no default-ignorable code point; the length may only shrink (UTF-16 code units).
 */
export function withoutDefaultIgnorables(text: string): string {
  if (!DEFAULT_IGNORABLE.test(text)) return text;
  return text.replace(DEFAULT_IGNORABLES, (c: string, at: number) => (isEmojiPart(text, at, c) ? c : ''));
}

/** Whether the default-ignorable `c` at UTF-16 index `at` of `text` is part of an emoji (see {@link withoutDefaultIgnorables}). */
function isEmojiPart(text: string, at: number, c: string): boolean {
  const before = codePointBefore(text, at);
  if (c === '\ufe0e' || c === '\ufe0f') {
    if (!EMOJI.test(before)) return false;
    return !KEYCAP_BASE.test(before) || text.codePointAt(at + c.length) === KEYCAP;
  }
  if (c === ZWJ) {
    const base = before === '\ufe0f' ? codePointBefore(text, at - 1) : before;
    const next = text.codePointAt(at + 1);
    return PICTOGRAPH.test(base) && next !== undefined && PICTOGRAPH.test(String.fromCodePoint(next));
  }
  if (isTag(c.codePointAt(0)!)) {
    let i = at;
    for (let run = 0; run < MAX_TAG_RUN; run++) {
      const point = codePointBefore(text, i).codePointAt(0);
      if (point === BLACK_FLAG) return true;
      if (point === undefined || !isTag(point)) return false;
      i -= 2;
    }
  }
  return false;
}

/** Tag characters U+E0020–U+E007F (the ASCII tags and the cancel tag; each two UTF-16 code units). */
function isTag(point: number): boolean {
  return point >= 0xe0020 && point <= 0xe007f;
}

/** The code point of `text` ending just before UTF-16 index `i`, as a string ('' at the start). */
function codePointBefore(text: string, i: number): string {
  if (i <= 0) return '';
  const low = text.charCodeAt(i - 1);
  const high = i >= 2 ? text.charCodeAt(i - 2) : 0;
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? text.slice(i - 2, i) : text.slice(i - 1, i);
}
