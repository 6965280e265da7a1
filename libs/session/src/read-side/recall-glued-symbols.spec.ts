/**
 * A word written against an emoji or symbol is found by itself (newcomer report ncverify49, F2):
 * SQLite's unicode61 takes characters its Unicode tables predate (emoji since Unicode 7 such as
 * the skin tones and `🏴`, currency signs such as `₽`) for letters, so `👍🏽kiwi0` was one word and
 * `kiwi0` found nothing. The word index now holds a boundary between a word and such a character
 * (`glueBoundaries`), in documents and queries alike; snippets show the text as sent.
 */
import fc from 'fast-check';
import { searchRecall } from './queries/recall-query';
import { glueBoundaries, wordIndexText } from './script-boundary';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

const ENGLAND = '🏴󠁧󠁢󠁥󠁮󠁧󠁿';

describe('recall finds a word written against a newer emoji or symbol (ncverify49 F2)', () => {
  const log = new RecordedSessionLog();
  log.append('g', user('tone', 'thumbs 👍🏽kiwi0 up'));
  log.append('g', user('lone', 'x 🏽kiwi1 y'));
  log.append('g', user('flag', `see kiwi2${ENGLAND} there`));
  log.append('g', user('melt', 'so kiwi3🫠 hot'));
  log.append('g', user('rub', 'price 100₽ today'));
  log.append('g', user('old', 'plain 👍kiwi4 and ❤️kiwi5'));
  log.append('g', user('accent', 'greek ᾽kiwi6 and kana ゛kiwi7 and ¨kiwi8'));
  log.append('g', user('keycap', 'press kiwi9#️⃣ or kiwiten1️⃣ now'));
  const store = projectedReadModels(log);
  const hits = (q: string) => searchRecall(store, { tenantId: 'default', q }).items;
  const find = (q: string) => hits(q).map((h) => h.eventId);

  it('given a word right after an emoji with a skin tone or a lone skin tone, when recall searches the word, then it finds that event', () => {
    expect(find('kiwi0')).toEqual(['tone']);
    expect(find('kiwi1')).toEqual(['lone']);
  });

  it('given a word right before a subdivision flag or a Unicode 14 emoji, when recall searches the word, then it finds that event', () => {
    expect(find('kiwi2')).toEqual(['flag']);
    expect(find('kiwi3')).toEqual(['melt']);
  });

  it('given a number written against a newer currency sign, when recall searches the number, then it finds it', () => {
    expect(find('100')).toEqual(['rub']);
  });

  it('given a word right after a spacing accent (NFKC: a space and a combining mark), when recall searches the word, then it finds that event (ncverify50 F1)', () => {
    expect(find('kiwi6')).toEqual(['accent']);
    expect(find('kiwi7')).toEqual(['accent']);
    expect(find('kiwi8')).toEqual(['accent']);
    // the mark is not marked with the word
    expect(hits('kiwi8')[0]?.snippet).toContain('<mark>kiwi8</mark>');
  });

  it('given a word right before a keycap, when recall searches the word, then it finds that event, not the digit of the keycap with it (ncverify50 F1)', () => {
    expect(find('kiwi9')).toEqual(['keycap']);
    expect(find('kiwiten')).toEqual(['keycap']);
    expect(find('kiwiten1')).toEqual([]);
  });

  it('given emoji SQLite always knew, when recall searches the word next to them, then it still finds it', () => {
    expect(find('kiwi4')).toEqual(['old']);
    expect(find('kiwi5')).toEqual(['old']);
  });

  it('given such a hit, when recall shows its snippet, then it is the text as sent with the word marked', () => {
    expect(hits('kiwi0')[0]?.snippet).toBe('thumbs 👍🏽<mark>kiwi0</mark> up');
    expect(hits('kiwi2')[0]?.snippet).toBe(`see <mark>kiwi2</mark>${ENGLAND} there`);
  });

  it('given the emoji and the word as one query word, when recall searches it, then it finds the event (documents and queries split alike)', () => {
    expect(find('👍🏽kiwi0')).toEqual(['tone']);
    expect(find('kiwi3🫠')).toEqual(['melt']);
  });
});

describe('glueBoundaries', () => {
  it('puts a boundary only between a word character and a symbol, never inside a word, an emoji sequence or ASCII punctuation', () => {
    expect(glueBoundaries('👍🏽kiwi')).toEqual(['👍🏽'.length]);
    expect(glueBoundaries('100₽')).toEqual([3]);
    expect(glueBoundaries('read_file(x) → y')).toEqual([]);
    expect(glueBoundaries('👨‍👩‍👧‍👦 1️⃣ café')).toEqual([]);
    expect(wordIndexText('a🫠b')).toBe('a\u0003🫠\u0003b');
  });

  it('property: any assigned character that is no letter, number, mark or space (nor folds into one: NFKC makes `㎖` `ml`; a spacing accent it makes a space and a mark), written against a word, leaves the word found', () => {
    const symbol = fc
      .integer({ min: 0xa1, max: 0x1faff })
      .filter((p) => p < 0xd800 || p > 0xdfff)
      .map((p) => String.fromCodePoint(p))
      .filter((c) => /^[^\p{L}\p{N}\p{M}\p{Co}\p{Cn}\p{Cc}\s]$/u.test(c) && !/[\p{L}\p{N}]/u.test(c.normalize('NFKC')));
    fc.assert(
      fc.property(fc.array(fc.tuple(symbol, fc.boolean()), { minLength: 1, maxLength: 12 }), (cases) => {
        const log = new RecordedSessionLog();
        cases.forEach(([s, before], i) => log.append('p', user(`e${i}`, before ? `x ${s}word${i}q y` : `x word${i}q${s} y`)));
        const store = projectedReadModels(log);
        cases.forEach((_, i) => {
          expect(searchRecall(store, { tenantId: 'default', q: `word${i}q` }).items.map((h) => h.eventId)).toEqual([`e${i}`]);
        });
      }),
      { numRuns: 25 },
    );
  });
});
