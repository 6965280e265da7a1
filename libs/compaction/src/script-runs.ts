/**
 * Scripts of text, as the extractive summarizer's identifier rule and its cuts see them: which
 * letters belong to a script written without spaces between words, and where a word of letters,
 * digits and joiners changes script.
 */

/**
 * The letters (and their marks) of the scripts written without spaces between words: Chinese
 * (Han), Japanese (Han, hiragana, katakana, the prolonged sound mark `ー` and the voicing marks),
 * Thai, Lao, Khmer and Myanmar; as the inside of a regular-expression character class (flag `u`).
 * Their digits are left out (by the users of this class: `\p{N}` is tested first), so a number
 * written against such text stays a number. Korean is written with spaces: Hangul is not here.
 */
export const SPACELESS_LETTER_CLASS =
  '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\u3099-\\u309c\\u30fc\\uff70\\uff9e\\uff9f\\p{sc=Thai}\\p{sc=Lao}\\p{sc=Khmer}\\p{sc=Myanmar}';

/** One letter of {@link SPACELESS_LETTER_CLASS}, its digits left out (a set difference: flag `v`). */
const SPACELESS_LETTER = new RegExp(`[[${SPACELESS_LETTER_CLASS}]--\\p{N}]`, 'v');

/** Whether `text` holds a letter of a script written without spaces (see {@link SPACELESS_LETTER_CLASS}). Linear in `text`. */
export function hasSpacelessLetter(text: string): boolean {
  return SPACELESS_LETTER.test(text);
}

/** A run of {@link SPACELESS_LETTER}s. */
const SPACELESS_RUN = new RegExp(`[[${SPACELESS_LETTER_CLASS}]--\\p{N}]+`, 'gv');

/** Scripts told apart where they meet inside a word (letters of any other script count as one more, "other"). */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Nko',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Tibetan',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Canadian_Aboriginal',
  'Mongolian',
  'Bopomofo',
  'Yi',
  'Tifinagh',
  'Coptic',
];
const SCRIPT_OF = new RegExp(SCRIPTS.map((s) => `(\\p{sc=${s}})`).join('|'), 'u');
const LETTER = /[\p{L}\p{M}]/u;
/** Code points with a script (≥ 1: index in {@link SCRIPTS} + 1; {@link SCRIPTS}.length + 1: another script) or none (0: digits, joiners, Common and Inherited letters and marks), filled on first sight. */
const SCRIPT_CACHE = new Map<number, number>();

/** The script of code point `cp` as {@link SCRIPT_CACHE} numbers it: 0 for a code point that belongs to no script's words of its own (digits, `_`, `-`, combining marks of any script). */
function scriptNumber(cp: number): number {
  let n = SCRIPT_CACHE.get(cp);
  if (n === undefined) {
    const ch = String.fromCodePoint(cp);
    if (!LETTER.test(ch) || /[\p{sc=Zyyy}\p{sc=Zinh}]/u.test(ch)) n = 0;
    else {
      const m = SCRIPT_OF.exec(ch);
      n = m === null ? SCRIPTS.length + 1 : m.slice(1).findIndex((g) => g !== undefined) + 1;
    }
    SCRIPT_CACHE.set(cp, n);
  }
  return n;
}

/** A piece of a word: where it starts in the word (UTF-16 code units) and its text. */
export interface ScriptRun {
  index: number;
  text: string;
  /** True for a run of letters of a script written without spaces (see {@link SPACELESS_LETTER_CLASS}). */
  spaceless: boolean;
}

/**
 * `word` (a run of letters, digits, marks and joiners such as `_` and `-`) cut where its script
 * changes: a run of letters of a script written without spaces (Chinese, Japanese, Thai, …) is a
 * run of its own, and elsewhere a letter of another script than the letters before it starts a
 * new run (`заказаRU5566пожалуйста` → `заказа`, `RU5566`, `пожалуйста`). Digits, marks and
 * joiners belong to no script: they stay in the run they follow (`予約番号XK42Q9を` → `予約番号`,
 * `XK42Q9`, `を`; `依頼0` → `依頼`, `0`). The runs cover `word` in order, every code unit once.
 * Linear in `word` (an ASCII piece is taken whole without looking at each character).
 */
export function scriptRuns(word: string): ScriptRun[] {
  const runs: ScriptRun[] = [];
  let last = 0;
  for (const m of word.matchAll(SPACELESS_RUN)) {
    const at = m.index ?? 0;
    if (at > last) splitAtScriptChanges(word.slice(last, at), last, runs);
    runs.push({ index: at, text: m[0], spaceless: true });
    last = at + m[0].length;
  }
  if (last < word.length) splitAtScriptChanges(last === 0 ? word : word.slice(last), last, runs);
  return runs;
}

/** Appends the runs of `piece` (no letter of a script without spaces in it; at `at` in its word), cut where a letter's script changes. */
function splitAtScriptChanges(piece: string, at: number, runs: ScriptRun[]): void {
  if (/^[\u0000-\u007f]*$/.test(piece)) {
    runs.push({ index: at, text: piece, spaceless: false });
    return;
  }
  let start = 0;
  let script = 0;
  for (let i = 0; i < piece.length;) {
    const cp = piece.codePointAt(i)!;
    const s = scriptNumber(cp);
    if (s !== 0 && script !== 0 && s !== script) {
      runs.push({ index: at + start, text: piece.slice(start, i), spaceless: false });
      start = i;
    }
    if (s !== 0) script = s;
    i += cp > 0xffff ? 2 : 1;
  }
  runs.push({ index: at + start, text: piece.slice(start), spaceless: false });
}
