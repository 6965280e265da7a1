/**
 * Invisible characters inside a word do not split it (newcomer report ncintl A1): the index and
 * queries are folded alike, and the fold removes default-ignorable code points (as Unicode's
 * NFKC_Casefold does) but those of emoji: a zero-width space, soft hyphen, word joiner, U+FEFF,
 * Persian's zero-width non-joiner, … inside a word are not there for recall. Emoji keep their
 * variation selectors, joiners and tags.
 */
import fc from 'fast-check';
import { searchRecall } from './queries/recall-query';
import { recallFold } from './recall-document';
import { withoutDefaultIgnorables } from './recall-ignorable';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

describe('recall ignores default-ignorable characters inside words', () => {
  const log = new RecordedSessionLog();
  log.append('z', user('zwsp', 'zero\u200Bwidth space'));
  log.append('z', user('shy', 'a soft\u00ADhyphen here'));
  log.append('z', user('wj', 'wj\u2060word'));
  log.append('z', user('bom', 'bom\uFEFFword'));
  log.append('z', user('fa', 'من می\u200Cخواهم'));
  log.append('z', user('plain', 'plainword'));
  const store = projectedReadModels(log);
  const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);

  it('given a word holding an invisible character, when recall searches it without, then it finds it', () => {
    expect(find('zerowidth')).toEqual(['zwsp']);
    expect(find('softhyphen')).toEqual(['shy']);
    expect(find('wjword')).toEqual(['wj']);
    expect(find('bomword')).toEqual(['bom']);
    expect(find('میخواهم')).toEqual(['fa']);
  });

  it('given a query word holding an invisible character, when recall searches, then it finds the word written without', () => {
    expect(find('plain\u200Bword')).toEqual(['plain']);
    expect(find('می\u200Cخواهم')).toEqual(['fa']);
  });

  it('given emoji, when folded, then their selectors, joiners and tags stay', () => {
    for (const emoji of ['❤️', '👩‍💻', '❤️‍🔥', '1️⃣', '#️⃣', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '🏳️‍🌈']) expect(recallFold(`a ${emoji} b`)).toBe(`a ${emoji} b`);
  });
});

const IGNORABLE = ['\u200B', '\u00AD', '\u2060', '\uFEFF', '\u200C', '\u200D', '\u034F', '\u180E', '\u2061', '\uFE00'];
const word = fc.stringMatching(/^[a-z]{2,8}$/).filter((w) => !/^(and|or|not|near)$/.test(w));
/** The text of the event beside the hit, which the word should not find. */
const OTHER_TEXT = 'unrelated words only';
/**
 * The events a word finds, in order of id: the hit, and the other event too when the word is one
 * of its words (`only`, `words`: a random word is one about once in ten million runs, and recall
 * rightly finds both; the oracle expected the hit alone).
 */
const eventsHolding = (w: string) => (OTHER_TEXT.split(' ').includes(w) ? ['hit', 'other'] : ['hit']);

describe('recall and default-ignorable characters (property)', () => {
  it('given the word `only` with a zero-width space inside it in the hit, when recall searches `only`, then it finds the hit and the other event (which holds it plainly)', () => {
    const log = new RecordedSessionLog();
    log.append('p', user('hit', 'before on\u200Bly after'));
    log.append('p', user('other', OTHER_TEXT));
    const found = searchRecall(projectedReadModels(log), { tenantId: 'default', q: 'only' }).items.map((h) => h.eventId);
    expect(found.sort()).toEqual(['hit', 'other']);
    expect(eventsHolding('only')).toEqual(['hit', 'other']);
    expect(eventsHolding('onl')).toEqual(['hit']);
  });

  it('finds a word with invisible characters put anywhere inside it by the word without them, and back', () => {
    fc.assert(
      fc.property(word, fc.array(fc.tuple(fc.nat(), fc.constantFrom(...IGNORABLE)), { minLength: 1, maxLength: 3 }), fc.boolean(), (w, inserts, inQuery) => {
        let hidden = w;
        for (const [at, c] of inserts) {
          const i = 1 + (at % (hidden.length - 1));
          hidden = hidden.slice(0, i) + c + hidden.slice(i);
        }
        const log = new RecordedSessionLog();
        log.append('p', user('hit', `before ${inQuery ? w : hidden} after`));
        log.append('p', user('other', OTHER_TEXT));
        const found = searchRecall(projectedReadModels(log), { tenantId: 'default', q: inQuery ? hidden : w }).items.map((h) => h.eventId);
        expect(found.sort()).toEqual(eventsHolding(w));
      }),
      { numRuns: 150 },
    );
  });
});

// recallFold answers ASCII text as it is, without NFKC or the ignorable pass: every ASCII character must be
// its own fold, and a text of them fold as the full pass folds it.
describe('recallFold of ASCII text', () => {
  const fullFold = (text: string) => withoutDefaultIgnorables(text.normalize('NFKC'));

  it('every ASCII character is its own NFKC form, no pictograph and not default-ignorable', () => {
    for (let code = 0; code < 0x80; code++) {
      const c = String.fromCharCode(code);
      expect([c.normalize('NFKC'), withoutDefaultIgnorables(c), /\p{Extended_Pictographic}/u.test(c)]).toEqual([c, c, false]);
    }
  });

  it('folds ASCII texts, and texts with one character past ASCII, as the full pass does (property)', () => {
    const ascii = fc.string({ unit: 'binary-ascii', maxLength: 80 });
    fc.assert(
      fc.property(ascii, fc.constantFrom('', 'ｘ', '\u00a0', 'ﬁ', '\u200b', '\u00ad', 'é'), fc.nat(80), (text, extra, at) => {
        expect(recallFold(text)).toBe(fullFold(text));
        const mixed = text.slice(0, at) + extra + text.slice(at);
        expect(recallFold(mixed)).toBe(fullFold(mixed));
      }),
      { numRuns: 2000 },
    );
  });
});
