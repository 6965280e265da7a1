/**
 * The recall indexes hold the first 16,384 (trigram) and 262,144 (word) characters of each event,
 * characters being Unicode code points as everywhere in the API (newcomer report ncintl, F4: the
 * trigram index kept 16,384 UTF-16 code units, so text of emoji or CJK Extension B ideographs lost
 * recall after ~8,192 characters).
 */
import fc from 'fast-check';
import { hasLoneSurrogate } from '../domain/openai-chat-format';
import { documentPrefix, MAX_WORD_DOCUMENT_LENGTH } from './recall-document';
import { MAX_TRIGRAM_DOCUMENT_LENGTH } from './unspaced-script';
import { searchRecall } from './queries/recall-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

describe('recall index bounds count characters (code points), not UTF-16 code units (ncintl F4)', () => {
  const log = new RecordedSessionLog();
  // 16,008 code points, 32,008 UTF-16 units: the last word is within the trigram bound.
  log.append('b', user('astral', `${'𠮷'.repeat(MAX_TRIGRAM_DOCUMENT_LENGTH - 384)} 大阪城公園です`));
  // 9,008 code points, 18,008 units.
  log.append('b', user('emoji', `${'😀'.repeat(9_000)} 名古屋駅前です`));
  // 8,196 code points, the pair boundary at unit 16,384.
  log.append('b', user('split', `東京${'😀'.repeat(8_192)}大阪`));
  // Past the bound in code points: not indexed.
  log.append('b', user('past', `${'😀'.repeat(MAX_TRIGRAM_DOCUMENT_LENGTH)}札幌駅前`));
  // Gothic letters (astral, not changed by NFKC): 200,010 code points, 300,010 units, within the word index's bound.
  log.append('b', user('gothic', `${'𐌰 '.repeat(100_000)} zebracorn`));
  const store = projectedReadModels(log);
  const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);

  it('given a word within the first 16,384 characters of astral text, when recall searches it, then it finds the event', () => {
    expect(find('大阪城公園')).toEqual(['astral']);
    expect(find('名古屋駅前')).toEqual(['emoji']);
    expect(find('大阪')).toEqual(['astral', 'split']);
  });

  it('given a word past the first 16,384 characters, when recall searches it, then it does not find it', () => {
    expect(find('札幌駅前')).toEqual([]);
  });

  it(`given a word within the first ${MAX_WORD_DOCUMENT_LENGTH.toLocaleString('en-US')} characters of astral letters, when recall searches it, then the word index finds it`, () => {
    expect(find('zebracorn')).toEqual(['gothic']);
  });

  it('property: a prefix holds min(length, bound) code points of the text, never ends inside a surrogate pair', () => {
    const text = fc.array(fc.constantFrom('a', '東', '😀', '𠮷', '\u0301', ' ', '🇯🇵'), { maxLength: 60 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 80 }), (body, bound) => {
        const prefix = documentPrefix(body, bound);
        const points = [...body];
        expect(prefix).toBe(points.slice(0, bound).join(''));
        expect(hasLoneSurrogate(prefix)).toBe(false);
      }),
    );
  });
});
