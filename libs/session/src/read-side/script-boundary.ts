/**
 * Script boundaries as word boundaries in the word index (`recall_fts_<id>`, unicode61).
 *
 * unicode61 splits words at spaces and punctuation only, so a Latin code written directly against
 * text of another script (`我的预订号码是XK42Q9`, `予約番号はJP5512です`, `หมายเลขคือTH9931`,
 * `번호는KR7781입니다`, `رقم الحجزAB1234من`, `заказаRU5566пожалуйста`, `बुकिंगIN9090कृपया`) was one
 * token, and neither `XK42Q9` nor the word it was written against was found (until read models 9
 * for every script, until 15 for spaced scripts: newcomer report ncintl F9). {@link wordIndexText}
 * puts {@link RECALL_SCRIPT_BOUNDARY} between such runs, and between a word and a symbol SQLite's
 * Unicode tables do not know (since read models 24), in documents (the text the word index holds)
 * and in the words of queries searched there, so both sides split alike.
 */
import { scriptChanges } from '@lib/compaction';

/**
 * The separator put at script boundaries: U+0003, a control character, not a word character for
 * unicode61. Recall documents never hold it (`recallDocument` turns it into a space), so snippets
 * drop every one to show the text as sent.
 */
export const RECALL_SCRIPT_BOUNDARY = '\u0003';

/**
 * A character unicode61 of SQLite may hold as part of a word though Unicode makes it neither a
 * letter, a number, a combining mark nor a private-use character: any assigned character outside
 * ASCII but those, white space and the variation selectors U+FE0E/U+FE0F (separators of
 * `WORD_TOKENIZER`). SQLite's tables predate many of them: 3,353 such characters of Node 20's
 * Unicode were word characters to the SQLite of better-sqlite3 12 (emoji since Unicode 7 — `🏴`,
 * `🫠`, the skin tones `🏽` — currency signs `₽` `₿`, …), so `👍🏽kiwi` was one word and `kiwi` not
 * found (newcomer report ncverify49, F2). Those of them SQLite does know are separators already:
 * a boundary beside them changes nothing.
 */
const GLUED_SYMBOLS = /(?![\ufe0e\ufe0f])[^\p{L}\p{N}\p{Mn}\p{Mc}\p{Co}\p{Cn}\s\u0000-\u007f]/gu;
/** A word character of `WORD_TOKENIZER` (its categories but its separators U+FE0E/U+FE0F), the whole of a string of one code point. */
const WORD_CHARACTER = /^(?![\ufe0e\ufe0f])[\p{L}\p{N}\p{Mn}\p{Mc}\p{Co}]$/u;

/**
 * Combining marks with no letter, digit or mark before them (after a space, a symbol, or first):
 * NFKC writes spacing accents so (`᾽` is a space and U+0313, `゛` a space and U+3099), and
 * unicode61 takes such a mark for the start of the word after it (`᾽kiwi` was the word `̓kiwi`).
 * The variation selectors U+FE0E/U+FE0F are separators, not such marks.
 */
const BASELESS_MARKS = /(?<![\p{L}\p{N}\p{M}\p{Co}])(?:(?![\ufe0e\ufe0f])[\p{Mn}\p{Mc}])+/gu;
/** A keycap (`1️⃣`, `#️⃣`): its digit is no digit of a word written against it (`kiwi1️⃣` is `kiwi` `1️⃣`). */
const KEYCAPS = /[0-9#*]\ufe0f?\u20e3/g;

/**
 * The positions (UTF-16 code units, ascending, each > 0 and < `text.length`) where a word of
 * `WORD_TOKENIZER` meets what is no part of it though unicode61 would take it so: between a word
 * character and a {@link GLUED_SYMBOLS} character next to it, before or after (`👍🏽kiwi` at `k`,
 * `kiwi🏴` at `🏴`, `100₽` at `₽`), after {@link BASELESS_MARKS} followed by a word character
 * (`᾽kiwi` at `k`), and before a keycap written against a word character (`kiwi1️⃣` at `1`).
 * Newcomer reports ncverify49 F2, ncverify50 F1. Linear in `text` (three regular-expression
 * scans, then the neighbours of each match).
 */
export function glueBoundaries(text: string): number[] {
  const out: number[] = [];
  for (const match of text.matchAll(GLUED_SYMBOLS)) {
    const at = match.index;
    const after = at + match[0].length;
    if (at > 0 && wordCharacterBefore(text, at)) out.push(at);
    if (after < text.length && isWordCharacter(text, after)) out.push(after);
  }
  const symbols = out.length;
  for (const match of text.matchAll(BASELESS_MARKS)) {
    const after = match.index + match[0].length;
    if (after < text.length && isWordCharacter(text, after)) out.push(after);
  }
  for (const match of text.matchAll(KEYCAPS)) if (match.index > 0 && wordCharacterBefore(text, match.index)) out.push(match.index);
  return out.length === symbols ? out : [...new Set(out)].sort((a, b) => a - b);
}

/** Whether the code point of `text` ending just before UTF-16 index `at` (> 0) is a {@link WORD_CHARACTER}. */
function wordCharacterBefore(text: string, at: number): boolean {
  return isWordCharacter(text, at - (isLowSurrogate(text.charCodeAt(at - 1)) && at >= 2 ? 2 : 1));
}

/** Whether the code point of `text` starting at UTF-16 index `i` is a {@link WORD_CHARACTER} (ASCII without a regular expression). */
function isWordCharacter(text: string, i: number): boolean {
  const unit = text.charCodeAt(i);
  if (unit < 0x80) return (unit >= 0x30 && unit <= 0x39) || (unit >= 0x41 && unit <= 0x5a) || (unit >= 0x61 && unit <= 0x7a);
  return WORD_CHARACTER.test(String.fromCodePoint(text.codePointAt(i)!));
}

/** Whether the UTF-16 code unit `unit` is a low (trailing) surrogate. */
function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * The positions where {@link wordIndexText} puts {@link RECALL_SCRIPT_BOUNDARY}: the changes of
 * script (`scriptChanges`, mode `text`) and the {@link glueBoundaries}, ascending, each once.
 */
export function wordIndexBoundaries(text: string): number[] {
  const glued = glueBoundaries(text);
  const changes = scriptChanges(text, 'text');
  if (glued.length === 0) return changes;
  if (changes.length === 0) return glued;
  return [...new Set([...changes, ...glued])].sort((a, b) => a - b);
}

/**
 * `text` with {@link RECALL_SCRIPT_BOUNDARY} at every change of script (`scriptChanges` of
 * `@lib/compaction`, mode `text`: the one rule of script changes, the extractive summarizer's too):
 * between two adjacent letters or digits of different scripts, Latin (with the decimal digits of
 * every script), each other script (Arabic, Hebrew, Cyrillic, Greek, Devanagari, …), Korean, and
 * the scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, one
 * class: `東京タワー` stays whole). Combining marks go with the letter before them. `是XK42Q9，` →
 * `是\u0003XK42Q9，`, `JP5512です` → `JP5512\u0003です`, `заказаRU5566пожалуйста` →
 * `заказа\u0003RU5566\u0003пожалуйста`, `ЁЖИК42` → `ЁЖИК\u000342`; nothing else changes (`read_file`,
 * `Zürich2024`, `बुकिंग`, `كـتاب`, `donʼt` stay as they are) but the {@link glueBoundaries} between a
 * word and a symbol (`👍🏽kiwi` → `👍🏽\u0003kiwi`, `100₽` → `100\u0003₽`); the length grows by one
 * UTF-16 unit per boundary. A boundary may fall inside a grapheme cluster (`a🏽`, a letter and a
 * newer enclosing mark): the index holds the word without it, as a query does. Applied to what the word index holds and to each word of a query searched there
 * (docs/http-api.md, "Recall `q`": "a change of script separates words").
 */
export function wordIndexText(text: string): string {
  const changes = wordIndexBoundaries(text);
  if (changes.length === 0) return text;
  let out = '';
  let copied = 0;
  for (const at of changes) {
    out += text.slice(copied, at) + RECALL_SCRIPT_BOUNDARY;
    copied = at;
  }
  return out + text.slice(copied);
}
