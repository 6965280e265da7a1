/**
 * fast-check arbitraries of text mixing scripts (property tests of the script rules, `script-runs`):
 * letters, digits and marks of Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Korean, the
 * scripts written without spaces (Han, hiragana, katakana, Thai, Lao, Khmer, Myanmar), other
 * scripts (Javanese, Balinese, Ethiopic), digits of many scripts, combining marks, modifier
 * letters, ZWJ, punctuation, emoji, mathematical letters, and any code point at all.
 */
import fc from 'fast-check';

/** Code point ranges drawn from, each as likely as the others. */
const RANGES: readonly [number, number][] = [
  [0x41, 0x7a], // ASCII letters (and a few signs)
  [0x30, 0x39], // ASCII digits
  [0x20, 0x2f], // space and ASCII punctuation (`-`)
  [0x5f, 0x5f], // `_`
  [0xc0, 0x24f], // Latin-1 and Latin Extended letters
  [0x2b0, 0x2ff], // modifier letters (`ʼ`, tone letters)
  [0x300, 0x36f], // combining diacritical marks
  [0x370, 0x3ff], // Greek
  [0x400, 0x4ff], // Cyrillic
  [0x531, 0x58f], // Armenian
  [0x590, 0x5ff], // Hebrew
  [0x600, 0x6ff], // Arabic (tatweel, Arabic-Indic and Persian digits, vowel marks)
  [0x900, 0x97f], // Devanagari (vowel signs, digits)
  [0xe00, 0xe7f], // Thai (marks, digits, punctuation)
  [0xe80, 0xeff], // Lao
  [0x1000, 0x109f], // Myanmar
  [0x1100, 0x11ff], // Hangul jamo
  [0x1200, 0x137f], // Ethiopic (numbers)
  [0x1780, 0x17ff], // Khmer
  [0x1b00, 0x1b7f], // Balinese
  [0xa980, 0xa9df], // Javanese
  [0x200b, 0x200d], // zero-width space, ZWNJ, ZWJ
  [0x2000, 0x206f], // general punctuation
  [0x2150, 0x218f], // number forms (Roman numerals)
  [0x3000, 0x303f], // CJK punctuation (`々`, `〇`, `〱`)
  [0x3040, 0x309f], // hiragana (voicing marks)
  [0x30a0, 0x30ff], // katakana (`ー`)
  [0x3190, 0x319f], // kanbun
  [0x4e00, 0x9fff], // Han
  [0xac00, 0xd7a3], // Hangul syllables
  [0xff00, 0xffef], // full-width and half-width forms
  [0x1d400, 0x1d7ff], // mathematical letters
  [0x1f300, 0x1faff], // emoji, skin tones
  [0x1f1e6, 0x1f1ff], // regional indicators
  [0x20000, 0x2a6df], // Han Extension B
  [0, 0x10ffff], // anything
];

/** One code point of {@link RANGES}, never a surrogate. */
export const scriptCodePoint: fc.Arbitrary<number> = fc
  .oneof(...RANGES.map(([min, max]) => fc.integer({ min, max })))
  .filter((cp) => cp < 0xd800 || cp > 0xdfff);

/** Text of 0–`maxLength` code points of {@link scriptCodePoint}, often runs of one range (so words of one script meet words of another). */
export function scriptText(maxLength = 24): fc.Arbitrary<string> {
  const run = fc.oneof(
    scriptCodePoint.map((cp) => [cp]),
    fc.integer({ min: 0, max: RANGES.length - 2 }).chain((r) => fc.array(fc.integer({ min: RANGES[r][0], max: RANGES[r][1] }), { minLength: 1, maxLength: 6 })),
  );
  return fc.array(run, { maxLength }).map((runs) =>
    String.fromCodePoint(
      ...runs
        .flat()
        .filter((cp) => cp < 0xd800 || cp > 0xdfff)
        .slice(0, maxLength),
    ),
  );
}
