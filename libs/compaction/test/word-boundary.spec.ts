/**
 * Where a cut may go in text written without spaces (spacelessWordBoundary), and how words split
 * where their script changes (scriptRuns): the two rules behind the extractive summarizer's cuts
 * and identifiers in Chinese, Japanese and Thai text.
 */
import fc from 'fast-check';
import { truncateMiddle } from '../src';
import { scriptRuns } from '../src/script-runs';
import { spacelessWordBoundary, WORD_BOUNDARY_WINDOW } from '../src/word-boundary';

const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });
const boundaries = (segmenter: Intl.Segmenter, text: string) => new Set([...segmenter.segment(text)].map((s) => s.index).concat(text.length));

describe('spacelessWordBoundary', () => {
  const ja = '予約番号XK42Q9を土曜日に変更してください';

  it('gives the ICU word boundary nearest the index on the side asked for', () => {
    // 予約|番号|XK42Q9|を|土曜日|に|変更|して|ください
    const inCode = ja.indexOf('42');
    expect(spacelessWordBoundary(ja, inCode, 'before')).toBe(ja.indexOf('XK42Q9'));
    expect(spacelessWordBoundary(ja, inCode, 'after')).toBe(ja.indexOf('を'));
    expect(spacelessWordBoundary(ja, ja.indexOf('曜'), 'before')).toBe(ja.indexOf('土'));
    expect(spacelessWordBoundary(ja, ja.indexOf('曜'), 'after')).toBe(ja.indexOf('に'));
    expect(spacelessWordBoundary(ja, ja.indexOf('を'), 'before')).toBe(ja.indexOf('を'));
    const th = 'การจองเป็นวันเสาร์';
    expect(spacelessWordBoundary(th, 2, 'before')).toBe(0);
    expect(spacelessWordBoundary(th, 2, 'after')).toBe('การ'.length);
  });

  it('is undefined for text without a letter of a script written without spaces near the index (English is left to whitespace and punctuation)', () => {
    expect(spacelessWordBoundary('please change reservation XK42Q9 to Saturday', 20, 'before')).toBeUndefined();
    expect(spacelessWordBoundary('Бронирование ЁЖИК42 und Büro Zürich2024 한국어 텍스트', 10, 'after')).toBeUndefined();
    // Japanese farther than the window from the index does not count
    const far = `${'x'.repeat(3 * WORD_BOUNDARY_WINDOW)}予約`;
    expect(spacelessWordBoundary(far, WORD_BOUNDARY_WINDOW, 'before')).toBeUndefined();
  });

  it('falls back to a grapheme boundary in a run ICU has no word boundary in (Myanmar), never splitting a cluster', () => {
    const my = 'မြန်မာဘာသာ'.repeat(20);
    for (let i = 1; i < my.length; i += 7) {
      const b = spacelessWordBoundary(my, i, 'before')!;
      expect(b).toBeLessThanOrEqual(i);
      expect(boundaries(GRAPHEMES, my).has(b)).toBe(true);
    }
  });

  it('property: the answer is a word boundary of the whole text on the asked side, within the window, never inside a grapheme cluster', () => {
    const piece = fc.constantFrom('予約', '番号', 'を', '土曜日', 'ください', 'การจอง', 'เป็น', '预订', 'XK42Q9', ' ', '、', '😀', '👩‍👩‍👧‍👦', '🇯🇵', 'abc');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 60 }), fc.nat(), fc.boolean(), (pieces, at, before) => {
        const text = pieces.join('');
        const index = at % (text.length + 1);
        const b = spacelessWordBoundary(text, index, before ? 'before' : 'after');
        if (b === undefined) return;
        expect(before ? b <= index : b >= index).toBe(true);
        expect(Math.abs(b - index)).toBeLessThanOrEqual(WORD_BOUNDARY_WINDOW + 1);
        expect(boundaries(GRAPHEMES, text).has(b)).toBe(true);
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it('given a text of a megabyte, when it is cut between words, then only windows near the cuts are segmented', () => {
    const text = '大阪での会議が移動になったので予約番号を土曜日に変更してください'.repeat(32_000); // 1,024,000 code units
    const segment = jest.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const out = truncateMiddle(text, 2000, { atWords: true });
      expect(out.length).toBeLessThanOrEqual(2000);
      expect(out.length).toBeGreaterThan(1900);
      expect(segment.mock.calls.length).toBeGreaterThan(0);
      expect(Math.max(...segment.mock.calls.map(([s]) => s.length))).toBeLessThanOrEqual(2 * WORD_BOUNDARY_WINDOW + 2);
    } finally {
      segment.mockRestore();
    }
  });
});

describe('scriptRuns', () => {
  const runs = (word: string) => scriptRuns(word).map((r) => (r.spaceless ? `[${r.text}]` : r.text));

  it('cuts a word where its script changes; letters of scripts without spaces are runs of their own; digits stay with what they follow', () => {
    expect(runs('予約番号XK42Q9を')).toEqual(['[予約番号]', 'XK42Q9', '[を]']);
    expect(runs('依頼0')).toEqual(['[依頼]', '0']);
    expect(runs('การจองXK42Q9เป็น')).toEqual(['[การจอง]', 'XK42Q9', '[เป็น]']);
    expect(runs('заказаRU5566пожалуйста')).toEqual(['заказа', 'RU5566', 'пожалуйста']);
    expect(runs('ＡＢ－１２３４５６です')).toEqual(['ＡＢ－１２３４５６', '[です]']);
  });

  it('keeps a word of one script whole (marks, digits, _ and - included)', () => {
    for (const w of ['DE77ÖÄ', 'ЁЖИК42', 'Zürich2024', 'größe_x1', 'AB-12_cd', 'cafe\u0301-9', '12345', '한국어123']) expect(runs(w)).toEqual([w]);
  });

  it('property: the runs cover the word in order, every code unit once', () => {
    const piece = fc.constantFrom('予約', 'を', 'การ', 'XK', '42', 'Ж', 'é', 'e\u0301', '_', '-', 'Ω', 'ー', '😀');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 30 }), (pieces) => {
        const word = pieces.join('');
        const rs = scriptRuns(word);
        expect(rs.map((r) => r.text).join('')).toBe(word);
        let at = 0;
        for (const r of rs) {
          expect(r.index).toBe(at);
          at += r.text.length;
        }
      }),
      { numRuns: 300, seed: 3 },
    );
  });
});
