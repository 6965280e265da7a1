/**
 * Combining marks are part of words in the word index (newcomer report ncintl F8): in Hindi,
 * Bengali, Tamil and the other Indic scripts the dependent vowel signs (matras, Mc/Mn) and the
 * virama are letters of the word, not separators, so `बिल` (bill) does not find `बाल` (hair), and a
 * match is marked whole (`<mark>பணம்</mark>`, not `<mark>பணம</mark>்`). Latin accents are still
 * folded (`cafe` finds `café` and a decomposed `cafe\u0301`).
 */
import fc from 'fast-check';
import { searchRecall } from './queries/recall-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

describe('recall keeps combining marks in their words (Indic scripts)', () => {
  const log = new RecordedSessionLog();
  log.append('m', user('bill', 'मेरा बिल गलत है'));
  log.append('m', user('hair', 'मेरे बाल झड़ रहे हैं'));
  log.append('m', user('speak', 'कृपया ज़ोर से बोलो'));
  log.append('m', user('day', 'आज का दिन अच्छा था'));
  log.append('m', user('work', 'काम हो गया'));
  log.append('m', user('bn-ticket', 'আমার টিকিট বাতিল করুন'));
  log.append('m', user('ta-money', 'பணம் வேண்டும்'));
  log.append('m', user('latin', 'un café crème chez Müller, cafe\u0301 noir'));
  log.append('m', user('keycap', 'step 7️⃣ then ❤️done'));
  const store = projectedReadModels(log);
  const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);
  const snippet = (q: string) => searchRecall(store, { tenantId: 'default', q }).items[0]?.snippet;

  it('given Hindi words that differ only in their vowel signs, when recall searches one, then it finds that word only', () => {
    expect(find('बिल')).toEqual(['bill']);
    expect(find('बाल')).toEqual(['hair']);
    expect(find('बोलो')).toEqual(['speak']);
    expect(find('बोल')).toEqual([]);
    expect(find('बेल')).toEqual([]);
    expect(find('दान')).toEqual([]);
    expect(find('दिन')).toEqual(['day']);
    expect(find('कीम')).toEqual([]);
    expect(find('काम')).toEqual(['work']);
  });

  it('given Bengali and Tamil words, when recall searches, then vowel signs and the virama belong to the word', () => {
    expect(find('টাকাট')).toEqual([]);
    expect(find('টিকিট')).toEqual(['bn-ticket']);
    expect(find('பணம்')).toEqual(['ta-money']);
    expect(snippet('பணம்')).toBe('<mark>பணம்</mark> வேண்டும்');
    expect(snippet('बोलो')).toBe('कृपया ज़ोर से <mark>बोलो</mark>');
  });

  it('given Latin text, when recall searches without accents, then accents are still folded (docs/http-api.md)', () => {
    expect(find('cafe')).toEqual(['latin']);
    expect(find('creme muller')).toEqual(['latin']);
    expect(find('café')).toEqual(['latin']);
  });

  it('given a keycap or an emoji with its variation selector, when recall searches the digit or the word after it, then the selector and the keycap mark separate words as before', () => {
    expect(find('7')).toEqual(['keycap']);
    expect(find('done')).toEqual(['keycap']);
  });
});

/** Devanagari consonants and dependent vowel signs (matras), with the virama and anusvara. */
const CONSONANTS = [...'कखगघचछजझटठडढतथदधनपफबभमयरलवशसह'];
const SIGNS = ['', 'ा', 'ि', 'ी', 'ु', 'ू', 'े', 'ै', 'ो', 'ौ', '्', 'ं'];
/** A random Devanagari word: syllables of a consonant and an optional sign (never changed by NFKC). */
const devanagariWord = fc
  .array(fc.tuple(fc.constantFrom(...CONSONANTS), fc.constantFrom(...SIGNS)), { minLength: 1, maxLength: 4 })
  .map((syllables) => syllables.map(([c, s]) => c + s).join(''))
  .filter((word) => word === word.normalize('NFKC'));

describe('recall of Indic words (property)', () => {
  it('finds exactly the events holding the searched word, for random Devanagari words with vowel signs', () => {
    fc.assert(
      fc.property(fc.uniqueArray(devanagariWord, { minLength: 2, maxLength: 5 }), (words) => {
        const log = new RecordedSessionLog();
        words.forEach((word, i) => log.append('p', user(`e${i}`, `note ${word} end`)));
        const store = projectedReadModels(log);
        words.forEach((word, i) => {
          const found = searchRecall(store, { tenantId: 'default', q: word }).items.map((h) => h.eventId);
          expect({ word, found }).toEqual({ word, found: [`e${i}`] });
        });
      }),
      { numRuns: 100 },
    );
  });
});
