/**
 * Scripts of text: the one rule of which script a character is of, which scripts are written
 * without spaces between words, and where text changes script. Used by the extractive
 * summarizer (its identifiers and its cuts between words, `word-boundary`) and by recall (its word
 * index splits words at a change of script, `wordIndexText`; its trigram index holds text of
 * scripts without spaces, `hasUnspacedScript`).
 */

/** The scripts written without spaces between words: Chinese (Han), Japanese (Han, hiragana, katakana), Thai, Lao, Khmer and Myanmar. */
const SPACELESS_SCRIPTS = ['Han', 'Hiragana', 'Katakana', 'Thai', 'Lao', 'Khmer', 'Myanmar'] as const;

/**
 * One character of a script of {@link SPACELESS_SCRIPTS}, as a regular-expression pattern (flag `u`
 * or `v`): a letter, a combining mark or a number other than a decimal digit (`〇`) whose script,
 * or whose script extensions, name one of them, so the prolonged sound mark `ー`, the iteration
 * marks `々` `〱` and the voicing marks count as Japanese. Left out: decimal digits (`๑๒`, a number
 * written against such text stays a number), punctuation and symbols (`。`, `๚`, `฿`), and the
 * characters shared with Latin (the modifier letter apostrophe `ʼ`, the combining tilde: they
 * belong to the Latin words they are in). Korean is written with spaces: Hangul is not here.
 */
export const SPACELESS_LETTER = `(?:(?=[\\p{L}\\p{M}\\p{Nl}\\p{No}])(?!\\p{scx=Latin})[${SPACELESS_SCRIPTS.map((s) => `\\p{scx=${s}}`).join('')}])`;

/** One letter, combining mark or number other than a decimal digit of Korean (Hangul, by script extension), as a pattern like {@link SPACELESS_LETTER}. */
export const HANGUL_LETTER = '(?:(?=[\\p{L}\\p{M}\\p{Nl}\\p{No}])(?!\\p{scx=Latin})\\p{scx=Hangul})';

const SPACELESS = new RegExp(SPACELESS_LETTER, 'u');
/** A {@link SPACELESS_LETTER} but a combining mark: what makes a run of {@link scriptRuns} spaceless. */
const SPACELESS_BASE = new RegExp(`(?!\\p{M})${SPACELESS_LETTER}`, 'u');
/** One character of Korean ({@link HANGUL_LETTER}). */
const HANGUL = new RegExp(HANGUL_LETTER, 'u');

/** Whether `text` holds a character of a script written without spaces ({@link SPACELESS_LETTER}). Linear in `text`. */
export function hasSpacelessLetter(text: string): boolean {
  return SPACELESS.test(text);
}

const WORD_CHARACTER = /[\p{L}\p{N}\p{M}]/u;
const MARK = /\p{M}/u;
/** Decimal digits of every script (`4`, `٤`, `۴`, `४`, `๔`, full-width `４`), and the numbers of no script in particular (`²`, `½`). */
const NUMBER = /\p{Nd}|(?=\p{N})\p{scx=Common}/u;
/** Latin letters, and the letters of no script in particular whose script extensions name none either (mathematical letters `𝐀`). */
const LATIN = /[\p{sc=Latin}\p{scx=Common}]/u;
/**
 * A letter of no script in particular used within a few scripts' words (its script extensions
 * name them): the Arabic tatweel `ـ` (`كـتاب`), Vedic signs, … It joins the word it is in, whatever
 * its script but Latin: first in a word or after a Latin letter, it is apart from Latin letters
 * (`ـAB12` is `ـ` `AB12`) unless Latin is one of its scripts (the modifier letter apostrophe `ʼ`,
 * tone letters: as marks).
 */
const SHARED = /\p{sc=Common}/u;
const SHARED_WITH_LATIN = /\p{scx=Latin}/u;
/** Letters and digits of a script other than Latin in any text: the fast path of {@link scriptChanges} is for texts without. */
const ANY_OTHER_SCRIPT = /(?=[\p{L}\p{N}])[^\p{sc=Latin}\p{scx=Common}]/u;

/**
 * Unicode's scripts (`Script` property values, as ECMAScript regular expressions name them) told
 * apart beside Latin, Korean and the scripts without spaces; a letter of a script missing here (a
 * newer one) is of one class of its own, still apart from Latin.
 */
const SCRIPTS = `Arabic Cyrillic Greek Hebrew Devanagari Bengali Tamil Telugu Kannada Malayalam Gujarati Gurmukhi
Oriya Sinhala Armenian Georgian Ethiopic Syriac Thaana Tibetan Mongolian Nko Tifinagh Cherokee Canadian_Aboriginal
Adlam Ahom Anatolian_Hieroglyphs Avestan Balinese Bamum Bassa_Vah Batak Bhaiksuki Bopomofo Brahmi Braille
Buginese Buhid Carian Caucasian_Albanian Chakma Cham Chorasmian Coptic Cuneiform Cypriot Cypro_Minoan Deseret
Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Garay Glagolitic Gothic Grantha Gunjala_Gondi
Gurung_Khema Hanifi_Rohingya Hanunoo Hatran Imperial_Aramaic Inscriptional_Pahlavi Inscriptional_Parthian Javanese
Kaithi Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khojki Khudawadi Kirat_Rai Lepcha Limbu Linear_A Linear_B Lisu
Lycian Lydian Mahajani Makasar Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui
Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mro Multani Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa
Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic
Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau
Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting
Sogdian Sora_Sompeng Soyombo Sundanese Sunuwar Syloti_Nagri Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri
Tangsa Tangut Tirhuta Todhri Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi
Zanabazar_Square`.split(/\s+/);
/** One capture group per entry of {@link SCRIPTS}: the group that matches a character names its script. */
const SCRIPT_OF = new RegExp(SCRIPTS.map((name) => `(\\p{sc=${name}})`).join('|'), 'u');

/** What a character is to {@link scriptRuns} (a number); a script change lies between two letters of different classes ({@link Kind.Spaceless} and up). */
const Kind = {
  /** Neither a letter, a digit nor a mark: separates words (mode `text`). */
  Separator: 0,
  /** A combining mark, or a {@link SHARED} letter used in Latin: belongs to the letter before it (or, first in a word, to the one after it). */
  Mark: 1,
  /** After a {@link Kind.Mark} that starts a word: no script change before the next letter, whatever its class. */
  WordStart: 2,
  /** A {@link SHARED} letter not used in Latin: as a mark, but apart from Latin letters before and after it. */
  SharedNotLatin: 3,
  /** After a {@link Kind.SharedNotLatin} that starts a word: a script change before a Latin letter or digit only. */
  SharedStart: 4,
  /** A {@link NUMBER}: Latin in mode `text`, of no script in mode `word`. */
  Number: 5,
  /** Mode `word`: after digits or joiners that start a run: a script change before a letter of a script without spaces only. */
  NumberStart: 6,
  /** A letter of a script without spaces ({@link SPACELESS_LETTER}): all of them one class (`東京タワー`, `ภาษาไทย` stay whole). */
  Spaceless: 7,
  /** Korean ({@link HANGUL_LETTER}). */
  Hangul: 8,
  /** Latin letters (see {@link LATIN}). */
  Latin: 9,
  /** A letter or number of a script not in {@link SCRIPTS}. */
  OtherScript: 10,
  /** The first of {@link SCRIPTS}; the others follow in its order. */
  FirstScript: 11,
} as const;

function kindOf(character: string): number {
  if (MARK.test(character)) return Kind.Mark;
  if (!WORD_CHARACTER.test(character)) return Kind.Separator;
  if (NUMBER.test(character)) return Kind.Number;
  if (LATIN.test(character)) return Kind.Latin;
  if (SHARED.test(character) && SHARED_WITH_LATIN.test(character)) return Kind.Mark;
  if (SPACELESS.test(character)) return Kind.Spaceless;
  if (HANGUL.test(character)) return Kind.Hangul;
  if (SHARED.test(character)) return Kind.SharedNotLatin;
  const groups = SCRIPT_OF.exec(character);
  const index = groups === null ? -1 : groups.findIndex((group, i) => i > 0 && group !== undefined);
  return index > 0 ? Kind.FirstScript + index - 1 : Kind.OtherScript;
}

/** Not computed yet, in {@link bmpKinds}. */
const UNKNOWN = 255;
/** {@link kindOf} of the BMP code units met so far (a regular-expression test per character of a long document costs ~0.3 µs each). */
const bmpKinds = new Uint8Array(0x10000).fill(UNKNOWN);
function bmpKind(unit: number): number {
  const known: number = bmpKinds[unit];
  if (known !== UNKNOWN) return known;
  const kind = unit >= 0xd800 && unit <= 0xdfff ? Kind.Separator : kindOf(String.fromCharCode(unit));
  bmpKinds[unit] = kind;
  return kind;
}
/** {@link kindOf} of the supplementary code points met so far (few scripts live there). */
const astralKinds = new Map<number, number>();
function astralKind(point: number): number {
  let kind = astralKinds.get(point);
  if (kind === undefined) {
    kind = kindOf(String.fromCodePoint(point));
    if (astralKinds.size < 65_536) astralKinds.set(point, kind);
  }
  return kind;
}

/**
 * How {@link scriptRuns} reads its input:
 * - `text`: running text (recall's word index). Characters other than letters, digits and marks
 *   separate words already; digits ({@link NUMBER}, of every script) count as Latin, so a number is
 *   a word of its own against letters of any other script (`ЁЖИК42` is `ЁЖИК` `42`, `شماره۱۲۳۴رزرو`
 *   is `شماره` `۱۲۳۴` `رزرو`) while `AB1234` stays one code.
 * - `word`: one word made of letters, digits, marks and joiners such as `_` and `-` (the extractive
 *   summarizer's identifiers). Digits and joiners belong to no script: they stay in the run they
 *   follow (`ЁЖИК42`, `DE77ÖÄ`, `AB-12_cd` stay whole), except after letters of a script written
 *   without spaces, where they start a run (`依頼0` is `依頼` `0`: a number written against such
 *   text is a number).
 */
export type ScriptRunMode = 'text' | 'word';

/** A piece of a text cut where its script changes: where it starts (UTF-16 code units) and its text. */
export interface ScriptRun {
  index: number;
  text: string;
  /** True for a run holding a letter of a script written without spaces ({@link SPACELESS_LETTER}, a combining mark not counted); in mode `word` such a run holds no letter of another script, digit or joiner. */
  spaceless: boolean;
}

/**
 * The positions (UTF-16 code units, ascending, each > 0 and < `text.length`) where `text` changes
 * script, by the one rule of script changes: between two adjacent letters of different scripts
 * (Latin, Korean, each other script of Unicode, and the scripts written without spaces — Han,
 * hiragana, katakana, Thai, Lao, Khmer, Myanmar — as one class, so `東京タワー` stays whole).
 * Combining marks, and the letters of no script in particular used in Latin (`ʼ`), go with the
 * letter before them (first in a word, with the one after); digits and other characters as `mode`
 * says ({@link ScriptRunMode}). `予約番号XK42Q9を` changes at `X` and at `を`; `заказаRU5566пожалуйста`
 * at `R` and at `п`. Linear in `text` (text of Latin and digits only is not looked at character by
 * character).
 */
export function scriptChanges(text: string, mode: ScriptRunMode): number[] {
  const changes: number[] = [];
  if (!ANY_OTHER_SCRIPT.test(text)) return changes;
  let previous: number = Kind.Separator;
  for (let i = 0; i < text.length;) {
    const unit = text.charCodeAt(i);
    let size = 1;
    let kind: number;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const point = text.codePointAt(i)!;
      size = point > 0xffff ? 2 : 1;
      kind = size === 2 ? astralKind(point) : Kind.Separator;
    } else {
      kind = bmpKind(unit);
    }
    if (kind === Kind.Number) kind = mode === 'text' ? Kind.Latin : Kind.NumberStart;
    else if (kind === Kind.Separator && mode === 'word') kind = Kind.NumberStart;
    if (kind === Kind.Mark) {
      if (previous === Kind.Separator) previous = Kind.WordStart;
    } else if (kind === Kind.NumberStart) {
      // mode `word` only: digits and joiners stay with the letters before them, but those of a script without spaces
      if (previous === Kind.Spaceless) changes.push(i);
      if (previous <= Kind.Spaceless) previous = Kind.NumberStart;
    } else if (kind === Kind.SharedNotLatin) {
      if (previous === Kind.Latin) changes.push(i);
      if (previous === Kind.Separator || previous === Kind.Latin) previous = Kind.SharedStart;
    } else {
      const change =
        previous === Kind.SharedStart
          ? kind === Kind.Latin
          : previous === Kind.NumberStart
            ? kind === Kind.Spaceless
            : previous >= Kind.Spaceless && kind !== Kind.Separator && kind !== previous;
      if (change) changes.push(i);
      previous = kind;
    }
    i += size;
  }
  return changes;
}

/**
 * `text` cut at its script changes ({@link scriptChanges}), by default read as one word (mode
 * `word`: `予約番号XK42Q9を` → `予約番号`, `XK42Q9`, `を`; `依頼0` → `依頼`, `0`; `ЁЖИК42` stays whole).
 * The runs cover `text` in order, every code unit once (none for `''`). Linear in `text`.
 */
export function scriptRuns(text: string, mode: ScriptRunMode = 'word'): ScriptRun[] {
  const runs: ScriptRun[] = [];
  let start = 0;
  for (const end of [...scriptChanges(text, mode), text.length]) {
    if (end === start) continue;
    const piece = text.slice(start, end);
    runs.push({ index: start, text: piece, spaceless: SPACELESS_BASE.test(piece) });
    start = end;
  }
  return runs;
}
