/**
 * Emoji in recall queries are searched as what they are (newcomer report ncintl, F1): a flag (two
 * regional indicators), a keycap (`#️⃣`, `1️⃣`), `‼️`, a subdivision flag (🏴 and tag characters)
 * alone is an emoji, not "nothing searchable"; next to words it must occur in every hit (AND), not
 * be dropped; England, Scotland and Wales do not match each other.
 */
import { InvalidQueryError } from './invalid-query-error';
import { searchRecall } from './queries/recall-query';
import { recallQueryPlan } from './recall-match-expression';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

const ENGLAND = '🏴󠁧󠁢󠁥󠁮󠁧󠁿';
const SCOTLAND = '🏴󠁧󠁢󠁳󠁣󠁴󠁿';
const WALES = '🏴󠁧󠁢󠁷󠁬󠁳󠁿';

describe('recall searches flags, keycaps and other emoji as what they are (ncintl F1)', () => {
  const log = new RecordedSessionLog();
  log.append('f', user('jp', 'my trip 🇯🇵 was great'));
  log.append('f', user('ok', 'ok'));
  log.append('f', user('sco', `go team ${SCOTLAND} scotland`));
  log.append('f', user('keys', 'press 1️⃣ or #️⃣ now ‼️'));
  log.append('f', user('pair', 'flags 🇯🇵🇰🇷 side by side'));
  log.append('f', user('plain', 'trip 1 and trip !! again'));
  const store = projectedReadModels(log);
  const find = (q: string) =>
    searchRecall(store, { tenantId: 'default', q })
      .items.map((h) => h.eventId)
      .sort();

  it('given a flag alone, when recall searches it, then it finds the events holding that flag', () => {
    expect(find('🇯🇵')).toEqual(['jp', 'pair']);
    expect(find('🇰🇷')).toEqual(['pair']);
  });

  it('given a flag next to a word, when recall searches them, then every hit holds both (AND), none lacks the flag', () => {
    expect(find('trip 🇯🇵')).toEqual(['jp']);
    expect(find('trip 🇰🇷')).toEqual([]);
    expect(find('trip 🇺🇸 🇫🇷')).toEqual([]);
  });

  it('given two flags side by side, when recall searches the pair their letters make across them, then nothing is found (🇵🇰 is not in 🇯🇵🇰🇷)', () => {
    expect(find('🇵🇰')).toEqual([]);
  });

  it('given subdivision flags, when recall searches one, then only that one matches (not another nor the bare black flag)', () => {
    expect(find(SCOTLAND)).toEqual(['sco']);
    expect(find(ENGLAND)).toEqual([]);
    expect(find(WALES)).toEqual([]);
    expect(find(`team ${ENGLAND}`)).toEqual([]);
  });

  it('given keycaps and ‼️, when recall searches them, then they are emoji, not refused, and not a bare digit or "!!"', () => {
    expect(find('#️⃣')).toEqual(['keys']);
    expect(find('1️⃣')).toEqual(['keys']);
    expect(find('‼️')).toEqual(['keys']);
    expect(find('trip 1️⃣')).toEqual([]);
  });

  it('plans a query with a flag or keycap in the trigram index, the emoji whole', () => {
    expect(recallQueryPlan('trip 🇰🇷')).toMatchObject({ index: 'trigrams', substrings: ['🇰🇷'] });
    expect(recallQueryPlan(ENGLAND)).toMatchObject({ index: 'trigrams', phrases: [`"${ENGLAND}"`] });
    expect(recallQueryPlan('#️⃣')).toMatchObject({ index: 'trigrams', phrases: ['"#️⃣"'] });
  });

  it('still refuses a query with no letter, digit or emoji', () => {
    for (const q of ['---', '\u0301', '# * !'])
      expect(() => searchRecall(store, { tenantId: 'default', q })).toThrow(new InvalidQueryError('q', 'must contain at least one letter, digit or emoji'));
  });
});
