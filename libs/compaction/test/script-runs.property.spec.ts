/**
 * The one rule of scripts (`script-runs`): which script a character is of, which scripts are
 * written without spaces, where a word changes script. Pinned against a frozen copy of the
 * extractive summarizer's rule before it was shared with recall (the oracle, below): equal on
 * every generated text but those holding a character whose treatment was decided anew, and each
 * such decision has its own example (failing on the old rule).
 */
import fc from 'fast-check';
import { HANGUL_LETTER, hasSpacelessLetter, scriptChanges, scriptRuns, SPACELESS_LETTER } from '../src';
import { scriptText } from './script-text';

// ---- frozen copy of libs/compaction/src/script-runs.ts before the rule was shared (the oracle) ----
const OLD_CLASS = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\u3099-\\u309c\\u30fc\\uff70\\uff9e\\uff9f\\p{sc=Thai}\\p{sc=Lao}\\p{sc=Khmer}\\p{sc=Myanmar}';
const OLD_LETTER = new RegExp(`[[${OLD_CLASS}]--\\p{N}]`, 'v');
const OLD_RUN = new RegExp(`[[${OLD_CLASS}]--\\p{N}]+`, 'gv');
const OLD_SCRIPTS =
  'Latin Greek Cyrillic Armenian Georgian Hebrew Arabic Syriac Thaana Nko Devanagari Bengali Gurmukhi Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Tibetan Hangul Ethiopic Cherokee Canadian_Aboriginal Mongolian Bopomofo Yi Tifinagh Coptic'.split(
    ' ',
  );
const OLD_SCRIPT_OF = new RegExp(OLD_SCRIPTS.map((s) => `(\\p{sc=${s}})`).join('|'), 'u');
function oldScriptNumber(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (!/[\p{L}\p{M}]/u.test(ch) || /[\p{sc=Zyyy}\p{sc=Zinh}]/u.test(ch)) return 0;
  const m = OLD_SCRIPT_OF.exec(ch);
  return m === null ? OLD_SCRIPTS.length + 1 : m.slice(1).findIndex((g) => g !== undefined) + 1;
}
type Run = { index: number; text: string; spaceless: boolean };
function oldSplit(piece: string, at: number, runs: Run[]): void {
  let start = 0;
  let script = 0;
  for (let i = 0; i < piece.length;) {
    const cp = piece.codePointAt(i)!;
    const s = oldScriptNumber(cp);
    if (s !== 0 && script !== 0 && s !== script) {
      runs.push({ index: at + start, text: piece.slice(start, i), spaceless: false });
      start = i;
    }
    if (s !== 0) script = s;
    i += cp > 0xffff ? 2 : 1;
  }
  runs.push({ index: at + start, text: piece.slice(start), spaceless: false });
}
function oldScriptRuns(word: string): Run[] {
  const runs: Run[] = [];
  let last = 0;
  for (const m of word.matchAll(OLD_RUN)) {
    const at = m.index;
    if (at > last) oldSplit(word.slice(last, at), last, runs);
    runs.push({ index: at, text: m[0], spaceless: true });
    last = at + m[0].length;
  }
  if (last < word.length) oldSplit(word.slice(last), last, runs);
  return runs;
}
const oldHasSpacelessLetter = (text: string) => OLD_LETTER.test(text);
// ---- end of the oracle ----

/** The characters of an identifier's word (the extractive summarizer's `IDENTIFIER_RUN`). */
const WORD = /^[\p{L}\p{N}\p{M}_＿－-]+$/u;
const runsOf = (word: string, mode?: 'word' | 'text') => scriptRuns(word, mode).map((r) => (r.spaceless ? `[${r.text}]` : r.text));
const oldRunsOf = (word: string) => oldScriptRuns(word).map((r) => (r.spaceless ? `[${r.text}]` : r.text));

/**
 * A word holding a character whose treatment by `scriptRuns` was decided anew: a combining mark
 * (it goes with the letter before it, whatever its script), a letter of no script in particular
 * (`ʼ`, `ー`, `ـ`, `𝐀`), a number other than a decimal digit (`〇`, `Ⅻ`, `፩`), or letters of two
 * scripts the old table did not tell apart (it knew 30 scripts, the shared one all of Unicode's).
 */
function decidedAnew(word: string): boolean {
  if (/[\p{M}\p{Nl}\p{No}]|(?=\p{L})[\p{sc=Zyyy}\p{sc=Zinh}]/u.test(word)) return true;
  const others = new Set<string>();
  for (const ch of word) if (/\p{L}/u.test(ch) && oldScriptNumber(ch.codePointAt(0)!) === OLD_SCRIPTS.length + 1) others.add(ch);
  return others.size > 1;
}

/** A character `hasSpacelessLetter` now answers otherwise for: their punctuation and symbols (no longer), numbers other than decimal digits and characters of no script in particular used only in those scripts (now). */
const SPACELESS_DECIDED_ANEW = /[\p{P}\p{S}\p{Nl}\p{No}]|(?=[\p{L}\p{M}])[\p{sc=Zyyy}\p{sc=Zinh}]/u;

describe('scriptRuns against the rule it replaced (property)', () => {
  it('cuts every generated word as before, but words holding a character decided anew', () => {
    let compared = 0;
    fc.assert(
      fc.property(scriptText(), (text) => {
        for (const word of text.match(/[\p{L}\p{N}\p{M}_＿－-]+/gu) ?? []) {
          if (decidedAnew(word)) continue;
          compared++;
          expect(runsOf(word)).toEqual(oldRunsOf(word));
        }
      }),
      { numRuns: 3000, seed: 11 },
    );
    expect(compared).toBeGreaterThan(2000);
  });

  it('hasSpacelessLetter answers as before but for texts holding a character decided anew', () => {
    fc.assert(
      fc.property(scriptText(), (text) => {
        if (hasSpacelessLetter(text) !== oldHasSpacelessLetter(text)) expect(text).toMatch(SPACELESS_DECIDED_ANEW);
      }),
      { numRuns: 5000, seed: 12 },
    );
  });

  it('on any text: the runs cover it in order, every code unit once, and a spaceless run holds no Latin letter or digit', () => {
    fc.assert(
      fc.property(scriptText(40), fc.constantFrom('word' as const, 'text' as const), (text, mode) => {
        const runs = scriptRuns(text, mode);
        expect(runs.map((r) => r.text).join('')).toBe(text);
        let at = 0;
        for (const r of runs) {
          expect(r.index).toBe(at);
          expect(r.text.length).toBeGreaterThan(0);
          expect(r.spaceless).toBe(new RegExp(`(?!\\p{M})${SPACELESS_LETTER}`, 'u').test(r.text));
          if (mode === 'word' && r.spaceless && WORD.test(text)) expect(r.text).not.toMatch(/[\p{sc=Latin}\p{Nd}_-]/u);
          at += r.text.length;
        }
        expect(scriptChanges(text, mode)).toEqual(runs.slice(1).map((r) => r.index));
      }),
      { numRuns: 2000, seed: 13 },
    );
  });
});

describe('the cases the shared rule decided (each failed on the old one)', () => {
  it('a combining mark goes with the letter before it, whatever its script: a Devanagari or Thai sign after a Latin letter starts no run', () => {
    expect(runsOf('AB12\u093f')).toEqual(['AB12\u093f']); // old: `AB12`, `ि`
    expect(runsOf('XK42\u0e34')).toEqual(['XK42\u0e34']); // old: `XK42`, `[ิ]`
    expect(runsOf('日本\u0301')).toEqual(['[日本\u0301]']); // old: `[日本]`, `́`
  });

  it('the modifier letter apostrophe `ʼ` is part of the Latin word it is in; `ー` and `々` are letters of Japanese (as recall reads them)', () => {
    expect(hasSpacelessLetter('donʼt')).toBe(false);
    expect(runsOf('ʼAB12')).toEqual(['ʼAB12']);
    expect(hasSpacelessLetter('〱')).toBe(true); // old: false (a kana repeat mark, script Common)
    expect(runsOf('ゲー〱XK42')).toEqual(['[ゲー〱]', 'XK42']); // old: `[ゲー]`, `〱XK42`
  });

  it('the punctuation and symbols of those scripts are no letters: `฿` and `๚` alone do not make text spaceless', () => {
    expect(hasSpacelessLetter('฿100')).toBe(false); // old: true
    expect(hasSpacelessLetter('end๚')).toBe(false); // old: true
    expect(hasSpacelessLetter('ราคา')).toBe(true);
  });

  it('a Han numeral `〇` is a letter of Chinese, a decimal digit of Thai a digit', () => {
    expect(runsOf('二〇二四年AB12')).toEqual(['[二〇二四年]', 'AB12']); // old: `[二]`, `〇`, `[二四年]`, `AB12`
    expect(hasSpacelessLetter('๑๒๓')).toBe(false);
  });

  it('letters of every script are told apart, not only 30 (Javanese against Balinese)', () => {
    expect(runsOf('ꦲꦏ12ᬓᬕ')).toEqual(['ꦲꦏ12', 'ᬓᬕ']); // old: one run
  });

  it('the tatweel `ـ` is apart from Latin letters and digits, as in recall', () => {
    expect(runsOf('AB12ـ')).toEqual(['AB12', 'ـ']); // old: one run
  });
});

describe('the rule both users share: mode `text` (recall) and `word` (identifiers) differ only in digits and joiners', () => {
  it('Latin against another script changes script in both; a digit is Latin in text, of no script in a word', () => {
    for (const mode of ['text', 'word'] as const) {
      expect(runsOf('予約番号XK42Q9を', mode)).toEqual(['[予約番号]', 'XK42Q9', '[を]']);
      expect(runsOf('заказаRU5566пожалуйста', mode)).toEqual(['заказа', 'RU5566', 'пожалуйста']);
      expect(runsOf('依頼0', mode)).toEqual(['[依頼]', '0']);
      expect(runsOf('東京タワー', mode)).toEqual(['[東京タワー]']);
      expect(runsOf('번호는KR7781입니다', mode)).toEqual(['번호는', 'KR7781', '입니다']);
    }
    expect(runsOf('ЁЖИК42', 'text')).toEqual(['ЁЖИК', '42']);
    expect(runsOf('ЁЖИК42', 'word')).toEqual(['ЁЖИК42']);
    expect(runsOf('AB-12-ЖЖ', 'word')).toEqual(['AB-12-', 'ЖЖ']);
    expect(runsOf('AB-12-ЖЖ', 'text')).toEqual(['AB-12-ЖЖ']); // `-` separates the words already
  });

  it('a Korean letter is no letter of a script without spaces', () => {
    expect(hasSpacelessLetter('한국어')).toBe(false);
    expect('한국어').toMatch(new RegExp(HANGUL_LETTER, 'u'));
    expect('ʼ').not.toMatch(new RegExp(HANGUL_LETTER, 'u'));
  });
});
