/**
 * Korean is written with spaces, but particles and endings are written against the word before them
 * (`서울에서`: "in Seoul", `예약번호를`: "the booking number" as an object). The word index holds
 * such a run as one word, so `서울` did not find `서울에서 만나요` (newcomer report ncrecall). Korean
 * text is therefore searched as the scripts without spaces are: in the trigram index, a word found
 * as a substring (docs/http-api.md "Recall").
 */
import fc from 'fast-check';
import { searchRecall } from './queries/recall-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

describe('recall finds a Korean word written with a particle or an ending', () => {
  const log = new RecordedSessionLog();
  log.append('k', user('seoul', '내일 서울에서 만나요'));
  log.append('k', user('busan', '다음 주에 부산으로 출장을 가요'));
  log.append('k', user('booking', '예약번호를 알려주세요: KR7781'));
  log.append('k', user('english', 'meet in Seoul tomorrow'));
  const store = projectedReadModels(log);
  const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);

  it('given a word of two syllables, when recall searches it alone, then it finds the event holding it with a particle', () => {
    expect(find('서울')).toEqual(['seoul']);
    expect(find('부산')).toEqual(['busan']);
  });

  it('given a longer word, when recall searches it, then it finds the event holding it with a particle, ranked', () => {
    expect(find('예약번호')).toEqual(['booking']);
    expect(find('출장')).toEqual(['busan']);
  });

  it('given the word as written, with its particle, or with a code beside it, when recall searches, then it still finds it', () => {
    expect(find('서울에서')).toEqual(['seoul']);
    expect(find('예약번호 KR7781')).toEqual(['booking']);
    expect(find('서울 만나요')).toEqual(['seoul']);
  });

  it('given a word that is not there, when recall searches, then nothing is found', () => {
    expect(find('대구')).toEqual([]);
    expect(find('서울 부산')).toEqual([]);
  });

  it('marks the word in the snippet', () => {
    expect(searchRecall(store, { tenantId: 'default', q: '서울' }).items[0].snippet).toContain('<mark>서울</mark>');
  });
});

const PARTICLES = ['은', '는', '이', '가', '을', '를', '에서', '으로', '에게', '의', '와', '도', '입니다'];
/** A Hangul word of 2–5 syllables (a syllable is one code point, never changed by NFKC). */
const hangulWord = fc.array(fc.integer({ min: 0xac00, max: 0xd7a3 }), { minLength: 2, maxLength: 5 }).map((points) => String.fromCodePoint(...points));

describe('recall of Korean (property)', () => {
  it('finds a random Hangul word written against a particle, among sentences without it', () => {
    fc.assert(
      fc.property(hangulWord, fc.constantFrom(...PARTICLES), fc.array(hangulWord, { minLength: 1, maxLength: 4 }), (word, particle, others) => {
        fc.pre(others.every((other) => !other.includes(word)));
        const log = new RecordedSessionLog();
        log.append('p', user('hit', `오늘 ${word}${particle} 봤어요`));
        log.append('p', user('miss', others.join(' ')));
        expect(searchRecall(projectedReadModels(log), { tenantId: 'default', q: word }).items.map((h) => h.eventId)).toEqual(['hit']);
      }),
      { numRuns: 100 },
    );
  });
});
