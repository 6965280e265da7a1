/**
 * The recall indexes hold every character of each event, in chunks (`recall-chunks`; until read
 * models 21 the first 16,384 (trigram) and 262,144 (word) code points; newcomer report ncintl, F4:
 * the trigram index kept 16,384 UTF-16 code units, so text of emoji or CJK Extension B ideographs
 * lost recall after ~8,192 characters; ncagentloop F1: words past 262,144 were not found).
 */
import { RECALL_WORD_CHUNK_LENGTH } from './recall-document';
import { RECALL_TRIGRAM_CHUNK_LENGTH } from './unspaced-script';
import { searchRecall } from './queries/recall-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

describe('recall indexes every character of astral text (ncintl F4, ncagentloop F1)', () => {
  const log = new RecordedSessionLog();
  // 16,008 code points, 32,008 UTF-16 units: the last word is within the trigram bound.
  log.append('b', user('astral', `${'𠮷'.repeat(RECALL_TRIGRAM_CHUNK_LENGTH - 384)} 大阪城公園です`));
  // 9,008 code points, 18,008 units.
  log.append('b', user('emoji', `${'😀'.repeat(9_000)} 名古屋駅前です`));
  // 8,196 code points, the pair boundary at unit 16,384.
  log.append('b', user('split', `東京${'😀'.repeat(8_192)}大阪`));
  // Past the first chunk: in the next one.
  log.append('b', user('past', `${'😀'.repeat(RECALL_TRIGRAM_CHUNK_LENGTH)}札幌駅前`));
  // Gothic letters (astral, not changed by NFKC): 200,010 code points, 300,010 units, within the word index's bound.
  log.append('b', user('gothic', `${'𐌰 '.repeat(100_000)} zebracorn`));
  const store = projectedReadModels(log);
  const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);

  it('given a word within the first 16,384 characters of astral text, when recall searches it, then it finds the event', () => {
    expect(find('大阪城公園')).toEqual(['astral']);
    expect(find('名古屋駅前')).toEqual(['emoji']);
    expect(find('大阪')).toEqual(['astral', 'split']);
  });

  it('given a word past the first 16,384 characters, when recall searches it, then it finds it (read models 21: every chunk is indexed)', () => {
    expect(find('札幌駅前')).toEqual(['past']);
  });

  it(`given a word past the first ${RECALL_WORD_CHUNK_LENGTH.toLocaleString('en-US')} code units of astral letters, when recall searches it, then the word index finds it`, () => {
    expect(find('zebracorn')).toEqual(['gothic']);
  });
});
