/**
 * Recall's script rules are the extractive summarizer's (`scriptChanges`, `SPACELESS_LETTER`,
 * `HANGUL_LETTER` of `@lib/compaction`): `wordIndexText` (where the word index splits words at a
 * change of script) and `hasUnspacedScript` (which texts the trigram index holds), pinned against
 * frozen copies of recall's own tables before they were shared (the oracles, below): equal on every
 * generated text but those holding a character whose treatment was decided anew, each decision
 * with an example that failed on the old rule (read models 16).
 */
import fc from 'fast-check';
import { HANGUL_LETTER, SPACELESS_LETTER } from '@lib/compaction';
import { scriptText } from '../../../compaction/test/script-text';
import { searchRecall } from './queries/recall-query';
import { RECALL_EMOJI_CLASS } from './recall-searchable';
import { RECALL_SCRIPT_BOUNDARY, glueBoundaries, wordIndexText } from './script-boundary';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';
import { hasUnspacedScript } from './unspaced-script';

// ---- frozen copies of script-boundary.ts and unspaced-script.ts before the rules were shared (the oracles) ----
const OLD_UNSPACED = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
const OLD_SCRIPTS = `Arabic Cyrillic Greek Hebrew Devanagari Bengali Tamil Telugu Kannada Malayalam Gujarati Gurmukhi
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
const OLD_SCRIPT_OF = new RegExp(OLD_SCRIPTS.map((name) => `(\\p{sc=${name}})`).join('|'), 'u');
function oldKindOf(c: string): number {
  if (/\p{M}/u.test(c)) return 1;
  if (!/[\p{L}\p{N}]/u.test(c)) return 0;
  if (/[\p{sc=Latin}\p{scx=Common}\p{Nd}]/u.test(c)) return 7;
  if (OLD_UNSPACED.test(c)) return 5;
  if (/\p{scx=Hangul}/u.test(c)) return 6;
  if (/\p{sc=Common}/u.test(c)) return /\p{scx=Latin}/u.test(c) ? 1 : 3;
  const groups = OLD_SCRIPT_OF.exec(c);
  const index = groups === null ? -1 : groups.findIndex((group, i) => i > 0 && group !== undefined);
  return index > 0 ? 9 + index - 1 : 8;
}
function oldWordIndexText(text: string): string {
  if (!/(?=[\p{L}\p{N}])[^\p{sc=Latin}\p{scx=Common}]/u.test(text)) return text;
  let out = '';
  let copied = 0;
  let previous = 0;
  for (let i = 0; i < text.length;) {
    const point = text.codePointAt(i)!;
    const size = point > 0xffff ? 2 : 1;
    const kind = point >= 0xd800 && point <= 0xdfff ? 0 : oldKindOf(String.fromCodePoint(point));
    if (kind === 1) {
      if (previous === 0) previous = 2;
    } else if (kind === 3) {
      if (previous === 7) {
        out += text.slice(copied, i) + RECALL_SCRIPT_BOUNDARY;
        copied = i;
      }
      if (previous === 0 || previous === 7) previous = 4;
    } else {
      const boundary = previous === 4 ? kind === 7 : previous >= 5 && kind !== 0 && kind !== previous;
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
const OLD_UNSPACED_SCRIPT = new RegExp(
  `[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Thai}\\p{Script=Lao}\\p{Script=Khmer}\\p{Script=Myanmar}\\p{Script=Hangul}${RECALL_EMOJI_CLASS}]`,
  'u',
);
const oldHasUnspacedScript = (text: string) => OLD_UNSPACED_SCRIPT.test(text);
// ---- end of the oracles ----

/** A control character that is not the marker: a generated text's U+0003 is compared as this one. */
const OTHER_CONTROL = '\u0004';
/** C0 control characters other than the marker and those JavaScript or Unicode count as white space (tab, line feed, VT, FF, CR, U+001C–U+001F): stand-ins for the marker in a text that holds none of them. */
const STAND_IN_CONTROLS = [...'\u0001\u0002\u0004\u0005\u0006\u0007\u0008\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b'];

/** Where `marked` (a text with RECALL_SCRIPT_BOUNDARY inserted) holds its boundaries, as UTF-16 positions of the text without them. */
function boundaryPositions(marked: string): number[] {
  const positions: number[] = [];
  let removed = 0;
  for (let i = 0; i < marked.length; i++) if (marked[i] === RECALL_SCRIPT_BOUNDARY) positions.push(i - removed++);
  return positions;
}

/** The letters of no script in particular used in Latin words and in a script without spaces or Korean (the modifier letter apostrophe `ʼ`): the old word index put them in the scripts without spaces. */
const SHARED_WITH_LATIN =
  /(?=\p{L})(?=\p{sc=Zyyy})(?=\p{scx=Latin})[\p{scx=Han}\p{scx=Hira}\p{scx=Kana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmr}\p{scx=Mymr}\p{scx=Hang}]/u;
/**
 * A character the trigram routing now answers otherwise for: the decimal digits, punctuation and
 * symbols of those scripts (no longer), their numbers other than decimal digits and the letters
 * and marks of no script in particular used only in them (`ー`, `〱`, the voicing marks: now).
 */
const ROUTING_DECIDED_ANEW = /[\p{Nd}\p{P}\p{S}\p{Nl}\p{No}]|(?=[\p{L}\p{M}])[\p{sc=Zyyy}\p{sc=Zinh}]/u;

describe('recall script rules against the tables they replaced (property)', () => {
  it('wordIndexText splits every generated text as before, but texts holding `ʼ`-like letters (and beside a symbol, glueBoundaries: read models 24)', () => {
    let compared = 0;
    fc.assert(
      fc.property(scriptText(40), (generated) => {
        // a control character like any other here: the marker itself in a text is the property below
        const text = generated.replaceAll(RECALL_SCRIPT_BOUNDARY, OTHER_CONTROL);
        if (SHARED_WITH_LATIN.test(text)) return;
        compared++;
        const expected = [...new Set([...boundaryPositions(oldWordIndexText(text)), ...glueBoundaries(text)])].sort((a, b) => a - b);
        expect(boundaryPositions(wordIndexText(text))).toEqual(expected);
      }),
      { numRuns: 4000, seed: 21 },
    );
    expect(compared).toBeGreaterThan(3000);
  });

  it('a text holding the marker character itself (U+0003) is split as if it held another control character there', () => {
    fc.assert(
      fc.property(scriptText(40), fc.array(fc.nat(), { maxLength: 3 }), (generated, at) => {
        let text = generated;
        for (const n of at) {
          const i = n % (text.length + 1);
          text = text.slice(0, i) + RECALL_SCRIPT_BOUNDARY + text.slice(i);
        }
        // The stand-in must be a control character the text does not hold already (CI's seed 339067389 generated U+0004 itself).
        const standIn = STAND_IN_CONTROLS.find((c) => !text.includes(c));
        fc.pre(standIn !== undefined);
        const asOther = wordIndexText(text.replaceAll(RECALL_SCRIPT_BOUNDARY, standIn));
        expect(wordIndexText(text)).toBe(asOther.replaceAll(standIn, RECALL_SCRIPT_BOUNDARY));
      }),
      { numRuns: 2000 },
    );
    // the text that showed it: a mark after the control character, then a Latin letter
    expect(wordIndexText('\u0003\u0900A')).toBe('\u0003\u0900' + RECALL_SCRIPT_BOUNDARY + 'A');
  });

  it('hasUnspacedScript answers as before but for texts holding a character decided anew', () => {
    fc.assert(
      fc.property(scriptText(), (text) => {
        if (hasUnspacedScript(text) !== oldHasUnspacedScript(text)) expect(text).toMatch(ROUTING_DECIDED_ANEW);
      }),
      { numRuns: 5000, seed: 22 },
    );
  });
});

describe('the cases the shared rules decided (each failed on the old tables)', () => {
  it('the modifier letter apostrophe `ʼ` is part of its word: `donʼt` is one word, `don` does not find it (old: `don` `ʼ` `t`)', () => {
    expect(wordIndexText('donʼt')).toBe('donʼt');
    expect(wordIndexText('пʼять')).toBe('пʼять');
    const log = new RecordedSessionLog();
    log.append('a', user('apostrophe', 'I donʼt know the code'));
    log.append('a', user('plain', 'don is a name'));
    const store = projectedReadModels(log);
    const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);
    expect(find('don')).toEqual(['plain']);
    expect(find('donʼt')).toEqual(['apostrophe']);
  });

  it('digits, punctuation and symbols of Thai, Lao, Khmer, Myanmar are not text without spaces (a number is a word of the word index); `ー` and `〱` are', () => {
    expect(hasUnspacedScript('๑๒๓')).toBe(false);
    expect(hasUnspacedScript('฿100')).toBe(false);
    expect(hasUnspacedScript('end๚')).toBe(false);
    expect(hasUnspacedScript('ー')).toBe(true);
    expect(hasUnspacedScript('〱')).toBe(true);
    // unchanged: letters of those scripts, Korean, emoji
    for (const text of ['ราคา', '東京', 'タワー', 'ສະບາຍ', 'ខ្មែរ', 'မြန်မာ', '서울', '😀', '🇯🇵']) expect(hasUnspacedScript(text)).toBe(true);
    expect(hasUnspacedScript('plain English 123')).toBe(false);
  });

  it('a number of Thai digits is a word: recall finds it whole, not a part of it', () => {
    const log = new RecordedSessionLog();
    log.append('t', user('thai', 'เลขที่ ๑๒๓๔ ครับ'));
    const store = projectedReadModels(log);
    const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);
    expect(find('๑๒๓๔')).toEqual(['thai']);
    expect(find('๒๓')).toEqual([]); // old: a substring of the trigram index
  });
});

// hasUnspacedScript first looks for a code unit from U+00A9 up and asks its whole expression only then:
// the expression, built again from the same shared parts, must match no code point below U+00A9 and
// answer as hasUnspacedScript for every code point and on mixed texts.
describe('hasUnspacedScript against its whole expression', () => {
  const whole = new RegExp(`${SPACELESS_LETTER}|${HANGUL_LETTER}|[${RECALL_EMOJI_CLASS}]`, 'u');

  it('answers as the expression for every code point, and the expression matches none below U+00A9', () => {
    for (let code = 0; code <= 0x10ffff; code++) {
      const c = String.fromCodePoint(code);
      const matched = whole.test(c);
      if (matched && code < 0xa9) throw new Error(`U+${code.toString(16)} matches below U+00A9`);
      if (hasUnspacedScript(c) !== matched) throw new Error(`U+${code.toString(16)}`);
    }
    expect(whole.test('\u00a9')).toBe(true);
  });

  it('answers as the expression on texts mixing ASCII, Latin-1 and other scripts (property)', () => {
    const unit = fc.oneof(
      fc.string({ unit: 'binary-ascii', maxLength: 20 }),
      fc.constantFrom('é', '©', '®', '\u00a8', '\u00a0', '日本', 'テキスト', '서울', 'ไทย', '😀', '1️⃣', '\ud83d'),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(hasUnspacedScript(text)).toBe(whole.test(text));
      }),
      { numRuns: 2000 },
    );
  });
});
