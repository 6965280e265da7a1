/**
 * Script boundaries as word boundaries in the word index (`recall_fts_<id>`, unicode61).
 *
 * unicode61 splits words at spaces and punctuation only, so a Latin code written directly against
 * text of another script (`我的预订号码是XK42Q9`, `予約番号はJP5512です`, `หมายเลขคือTH9931`,
 * `번호는KR7781입니다`, `رقم الحجزAB1234من`, `заказаRU5566пожалуйста`, `बुकिंगIN9090कृपया`) was one
 * token, and neither `XK42Q9` nor the word it was written against was found (until read models 9
 * for every script, until 15 for spaced scripts: newcomer report ncintl F9). {@link wordIndexText} puts {@link RECALL_SCRIPT_BOUNDARY} between such runs, in documents
 * (the text the word index holds) and in the words of queries searched there, so both sides split
 * alike.
 */

/**
 * The separator put at script boundaries: U+0003, a control character, not a word character for
 * unicode61. Recall documents never hold it (`recallDocument` turns it into a space), so snippets
 * drop every one to show the text as sent.
 */
export const RECALL_SCRIPT_BOUNDARY = '\u0003';

/**
 * Scripts written without spaces between words (as `unspaced-script`, by script extension, so the
 * prolonged sound mark `ー` and the iteration mark `々` count as Japanese and Han): one class, no
 * boundary between them (`東京タワー`, `ภาษาไทย`).
 */
const UNSPACED = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
/** Korean: spaced, but particles and endings are written against the word before (`KR7781입니다`). */
const HANGUL = /\p{scx=Hangul}/u;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;
const MARK = /\p{M}/u;
/**
 * A letter or digit of the class Latin: Latin letters, decimal digits of every script (0–9, and the
 * Arabic-Indic `٤٨`, Persian `۴۸`, Devanagari `४८`, … digits: a number is a word of its own against
 * the letters of any other script, `شماره۱۲۳۴رزرو` is `شماره` `۱۲۳۴` `رزرو`, as `AB1234` stays one
 * code), and the letters and numbers of no script in particular whose script extensions name none
 * either (after NFKC, full-width and other compatibility digits are 0–9).
 */
const LATIN = /[\p{sc=Latin}\p{scx=Common}\p{Nd}]/u;
/**
 * A letter of no script in particular used within a few scripts' words (its script extensions name
 * them): the Arabic tatweel `ـ` (`كـتاب`), Vedic signs, … It joins the word it is in, whatever its
 * script but Latin: first in a word or after a Latin letter, it is apart from Latin letters
 * (`ـAB12` is `ـ` `AB12`, `AB12ـ` is `AB12` `ـ`) unless Latin is one of its scripts (the modifier
 * letter apostrophe `ʼ`, tone letters: as marks).
 */
const SHARED = /\p{sc=Common}/u;
const SHARED_WITH_LATIN = /\p{scx=Latin}/u;
/** Letters and digits of a script other than Latin (and not of the classes above) in any text: the fast path of {@link wordIndexText} is for texts without. */
const ANY_OTHER_SCRIPT = /(?=[\p{L}\p{N}])[^\p{sc=Latin}\p{scx=Common}]/u;

/**
 * Unicode's scripts (`Script` property values, as ECMAScript regular expressions name them) whose
 * letters and digits {@link wordIndexText} tells apart; a letter of a script missing here (a newer
 * one) is of one class of its own, still apart from Latin.
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

/**
 * What a character is to {@link wordIndexText}: a number, a boundary lies between two letters or
 * digits of different classes ({@link Kind.Unspaced} and up).
 */
const Kind = {
  /** Neither a letter, a digit nor a mark: separates words already. */
  Separator: 0,
  /** A combining mark, or a {@link SHARED} letter: belongs to the letter before it (or, first in a word, to the one after it). */
  Mark: 1,
  /** After a {@link Kind.Mark} that starts a word: no boundary before the next letter, whatever its class. */
  WordStart: 2,
  /** A {@link SHARED} letter not used in Latin: as a mark, but apart from Latin letters before and after it. */
  SharedNotLatin: 3,
  /** After a {@link Kind.SharedNotLatin} that starts a word: a boundary before a Latin letter or digit only. */
  SharedStart: 4,
  Unspaced: 5,
  Hangul: 6,
  /** Latin letters and digits (see {@link LATIN}). */
  Latin: 7,
  /** A letter or digit of a script not in {@link SCRIPTS}. */
  OtherScript: 8,
  /** The first of {@link SCRIPTS}; the others follow in its order. */
  FirstScript: 9,
} as const;

function kindOf(character: string): number {
  if (MARK.test(character)) return Kind.Mark;
  if (!WORD_CHARACTER.test(character)) return Kind.Separator;
  if (LATIN.test(character)) return Kind.Latin;
  if (UNSPACED.test(character)) return Kind.Unspaced;
  if (HANGUL.test(character)) return Kind.Hangul;
  if (SHARED.test(character)) return SHARED_WITH_LATIN.test(character) ? Kind.Mark : Kind.SharedNotLatin;
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
 * `text` with {@link RECALL_SCRIPT_BOUNDARY} between every two adjacent letters or digits of
 * different scripts: Latin (with the decimal digits of every script), each other script (Arabic, Hebrew, Cyrillic,
 * Greek, Devanagari, …; see {@link SCRIPTS}), Korean, and the scripts written without spaces (Han,
 * Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, one class: `東京タワー` stays whole). Combining
 * marks go with the letter before them. `是XK42Q9，` → `是\u0003XK42Q9，`, `JP5512です` →
 * `JP5512\u0003です`, `заказаRU5566пожалуйста` → `заказа\u0003RU5566\u0003пожалуйста`,
 * `ЁЖИК42` → `ЁЖИК\u000342`; nothing else changes (`read_file`, `Zürich2024`, `बुकिंग`, `كـتاب` stay
 * as they are); the length grows by one UTF-16 unit per boundary. The one rule of script
 * boundaries: applied to what the word index holds and to each word of a query searched there
 * (README, "Recall `q`": "a change of script separates words").
 */
export function wordIndexText(text: string): string {
  if (!ANY_OTHER_SCRIPT.test(text)) return text;
  let out = '';
  let copied = 0;
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
    if (kind === Kind.Mark) {
      if (previous === Kind.Separator) previous = Kind.WordStart;
    } else if (kind === Kind.SharedNotLatin) {
      if (previous === Kind.Latin) {
        out += text.slice(copied, i) + RECALL_SCRIPT_BOUNDARY;
        copied = i;
      }
      if (previous === Kind.Separator || previous === Kind.Latin) previous = Kind.SharedStart;
    } else {
      const boundary = previous === Kind.SharedStart ? kind === Kind.Latin : previous >= Kind.Unspaced && kind !== Kind.Separator && kind !== previous;
      if (boundary) {
        out += text.slice(copied, i) + RECALL_SCRIPT_BOUNDARY;
        copied = i;
      }
      previous = kind;
    }
    i += size;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
