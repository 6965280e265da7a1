/**
 * Recall over large events (newcomer report ncagentloop F1; read models 21): every character of
 * an event's recall document is searchable, however long. A long document is indexed as
 * overlapping chunks (`recall-chunks`), one index row each; recall answers each event once, with
 * the snippet of its matching chunk, on every page, and an erasure removes every chunk.
 */
import fc from 'fast-check';
import { hasLoneSurrogate } from '../domain/openai-chat-format';
import { searchRecall } from './queries/recall-query';
import type { ReadModelStore } from './read-model-store';
import { RECALL_CHUNK_OVERLAP, recallChunks } from './recall-chunks';
import { RECALL_WORD_CHUNK_LENGTH } from './recall-document';
import { tenantRecallIndexTables } from './recall-index-tables';
import { SessionProjector } from './session-projector';
import { projectedReadModels } from './testing/projected-read-models';
import { allRecallPages } from './testing/recall-pages';
import { assistant, RecordedSessionLog, tool, user } from './testing/recorded-session-log';

const RUNS = Number(process.env.FC_RUNS ?? 12);

/** A JSON tool result of about `kb` KB without any space (minified rows), every row's values distinct. */
function bigJson(kb: number, tag: string): string {
  const rows: string[] = [];
  for (let i = 0, size = 0; size < kb * 1000; i++) {
    const row = `{"id":${i},"name":"${tag}row${i}","path":"/srv/data/${tag}/file${i}.json","ok":true}`;
    rows.push(row);
    size += row.length + 1;
  }
  return `[${rows.join(',')}]`;
}

function rowCount(store: ReadModelStore, tenantId: string): { words: number; trigrams: number } {
  const tables = tenantRecallIndexTables(store.db, tenantId)!;
  const count = (table: string) => Number((store.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
  return { words: count(tables.words), trigrams: count(tables.trigrams) };
}

const allPages = allRecallPages;

describe('recall finds every word of a 400 KB tool result (ncagentloop F1)', () => {
  const log = new RecordedSessionLog();
  const sizes = [20, 200, 400];
  log.append('agent', user('u0', 'go'));
  log.append(
    'agent',
    assistant(
      'a0',
      null,
      sizes.map((k) => ['dump', JSON.stringify({ tail: `ARGEND${k}QZ` })]),
    ),
  );
  sizes.forEach((k, i) => {
    const b = bigJson(k, `B${k}`);
    log.append('agent', tool(`t${i}`, `call-a0-${i}`, 'dump', `HEADTOK${k}QZ ${b} MIDTOK${k}QZ ${b.slice(0, 10)} TAILTOK${k}QZ`));
  });
  log.archive('agent', 'c1', ['u0', 'a0', 't0', 't1', 't2']);
  log.completed('agent', 'c1');
  const store = projectedReadModels(log);

  it.each(sizes.flatMap((k) => ['HEADTOK', 'MIDTOK', 'TAILTOK'].map((t) => [`${t}${k}QZ`, `t${sizes.indexOf(k)}`])))(
    'given the archived tool result, when recall searches %s, then it answers that event once, marked in its snippet',
    (q, eventId) => {
      const { items } = searchRecall(store, { tenantId: 'default', q, sessionId: 'agent' });
      expect(items.map((h) => [h.eventId, h.archived, h.compactionId])).toEqual([[eventId, true, 'c1']]);
      expect(items[0].snippet).toContain(`<mark>${q}</mark>`);
    },
  );

  it('given a row id of the middle of the 400 KB result, when recall searches it with other words of that row, then it finds the event', () => {
    const { items } = searchRecall(store, { tenantId: 'default', q: 'b400row4000 file4000' });
    expect(items.map((h) => h.eventId)).toEqual(['t2']);
  });

  it('given the 400 KB result, when its chunks are counted, then it is held in a few rows (a bounded cost)', () => {
    // 20 + 200 + 400 KB and three small documents: each result in ceil(size / ~261k) rows.
    expect(rowCount(store, 'default').words).toBe(2 + 1 + 1 + 2);
  });
});

describe('recall answers an event of several matching chunks once, on every page and in every order', () => {
  const log = new RecordedSessionLog();
  // Three events of 2 or 3 chunks each, every word chunk holding `osprey` and `plover`; small events around them.
  const filler = (n: number) => Array.from({ length: 14_000 }, (_, i) => `word${i % 997}x${n}${i % 500 === 0 ? ' osprey' : ''}`).join(' ');
  for (let n = 0; n < 30; n++) {
    log.append('s', user(`small${n}`, `osprey ${n % 2 === 0 ? 'plover' : ''} 鶴の話`));
    if (n % 10 === 5) log.append('s', tool(`big${n}`, `call${n}`, 'dump', `${filler(n)} plover ${'鶴と亀の話 '.repeat(9000)} ${filler(n + 1)} plover`));
  }
  const store = projectedReadModels(log);
  const bigIds = ['big5', 'big15', 'big25'];

  it('given the fixture, then each big event is several rows of each index', () => {
    const rows = rowCount(store, 'default');
    expect(rows.words).toBeGreaterThanOrEqual(30 + 2 * bigIds.length);
    expect(rows.trigrams).toBeGreaterThanOrEqual(30 + 2 * bigIds.length);
  });

  it.each([
    ['osprey', 'relevance', 2],
    ['osprey plover', 'relevance', 2],
    ['osprey', 'relevance', 7],
    ['鶴', 'oldest', 1],
    ['鶴', 'oldest', 4],
  ])('given q=%s (%s), when every page of %i hits is read, then each event comes once', (q, order, limit) => {
    const { hits, orders } = allPages(store, { q, limit });
    const ids = hits.map((h) => h.eventId);
    expect(new Set(orders)).toEqual(new Set([order]));
    expect(ids.length).toBe(new Set(ids).size);
    expect(ids).toEqual(expect.arrayContaining(bigIds));
    const expected = q === 'osprey plover' ? 15 + bigIds.length : 30 + bigIds.length;
    expect(ids.length).toBe(expected);
  });

  it('given a session filter, when every page is read, then the first mention comes first and each event once', () => {
    const { hits } = allPages(store, { q: 'plover', limit: 2, sessionId: 's' });
    const ids = hits.map((h) => h.eventId);
    expect(hits[0].firstMention).toBe(true);
    expect(ids.length).toBe(new Set(ids).size);
    expect(ids.length).toBe(15 + bigIds.length);
  });

  it('given a word too common to rank (newest order), when every page is read, then each event comes once', () => {
    const common = new RecordedSessionLog();
    for (let n = 0; n < 2_050; n++) common.append('c', user(`u${n}`, `tern number ${n}`));
    for (const id of bigIds) common.append('c', tool(id, `call-${id}`, 'dump', `tern ${'gull '.repeat(30_000)} tern ${'gull '.repeat(30_000)} tern`));
    const commonStore = projectedReadModels(common);
    const { hits, orders } = allPages(commonStore, { q: 'tern', limit: 100 });
    expect(new Set(orders)).toEqual(new Set(['newest']));
    const ids = hits.map((h) => h.eventId);
    expect(ids.length).toBe(new Set(ids).size);
    expect(ids.slice(0, 3)).toEqual([...bigIds].reverse());
    expect(ids.length).toBe(2_050 + bigIds.length);
    // Pages of one hit: the big events (the newest), each once.
    const first: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 4; page++) {
      const answer = searchRecall(commonStore, { tenantId: 'default', q: 'tern', limit: 1, cursor });
      first.push(...answer.items.map((h) => h.eventId));
      cursor = answer.nextCursor;
    }
    expect(first).toEqual([...[...bigIds].reverse(), 'u2049']);
  });
});

describe('erasure of a session with large events', () => {
  it('given a session whose events span many chunks, when it is erased, then no row of it is left in either index and the other session keeps its own', () => {
    const log = new RecordedSessionLog();
    log.append('doomed', tool('big', 'c1', 'dump', `${bigJson(700, 'D')} 秘密の鍵です ${'東京 '.repeat(20_000)} LASTSECRETQZ`));
    log.append('kept', user('k', 'keeper 大阪'));
    log.append('doomed', user('small', 'LASTSECRETQZ again'));
    const store = projectedReadModels(log);
    const before = rowCount(store, 'default');
    expect(before.words).toBeGreaterThan(3);
    expect(before.trigrams).toBeGreaterThan(2);
    expect(
      searchRecall(store, { tenantId: 'default', q: 'LASTSECRETQZ' })
        .items.map((h) => h.eventId)
        .sort(),
    ).toEqual(['big', 'small']);

    expect(new SessionProjector(store).eraseSession('default', 'doomed')).toBe(true);
    expect(rowCount(store, 'default')).toEqual({ words: 1, trigrams: 1 });
    expect(searchRecall(store, { tenantId: 'default', q: 'LASTSECRETQZ' }).items).toEqual([]);
    expect(searchRecall(store, { tenantId: 'default', q: '秘密' }).items).toEqual([]);
    expect(searchRecall(store, { tenantId: 'default', q: 'keeper' }).items.map((h) => h.eventId)).toEqual(['k']);
  });
});

describe('property: a token placed anywhere in a large text is found', () => {
  it('given a large text (with or without spaces) and a token at any offset, when recall searches the token, then it finds the event once with the token marked', () => {
    const filler = fc.constantFrom(
      (n: number) => 'lorem ipsum dolor '.repeat(Math.ceil(n / 18)),
      (n: number) => bigJson(Math.ceil(n / 1000), 'F'),
      (n: number) => 'abcdefghij'.repeat(Math.ceil(n / 10)),
      (n: number) => '東京大阪名古屋'.repeat(Math.ceil(n / 7)),
    );
    // A word (between separators: the word index) or a run of ideographs none of the fillers holds (the trigram index, glued to anything).
    const token = fc.oneof(
      fc.tuple(fc.stringMatching(/^[a-z]{3,8}[0-9]{1,4}zq$/), fc.constantFrom(' ', '"', ',', ':', '\n')),
      fc.tuple(fc.stringMatching(/^[鶴亀鷺鴨鷹]{3,6}$/), fc.constantFrom('', ' ', '"')),
    );
    fc.assert(
      fc.property(
        filler,
        fc.integer({ min: 270_000, max: 700_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        token,
        (make, length, where, [word, glue]) => {
          const text = make(length);
          const at = Math.floor(where * text.length);
          const log = new RecordedSessionLog();
          log.append('p', tool('t', 'c', 'dump', `${text.slice(0, at)}${glue}${word}${glue}${text.slice(at)}`));
          log.append('p', user('other', 'nothing to see'));
          const store = projectedReadModels(log);
          const { items } = searchRecall(store, { tenantId: 'default', q: word });
          expect(items.map((h) => h.eventId)).toEqual(['t']);
          expect(items[0].snippet).toContain(`<mark>${word}</mark>`);
          store.close();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('property: chunks cover the text, overlap enough for any query, stay within the size, and never split a surrogate pair', () => {
    const piece = fc.constantFrom('a', 'word ', '東', '😀', '🇯🇵', 'e\u0301', ',', '"k":1', '\u200d', ' ');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 0, maxLength: 6_000 }), fc.integer({ min: 4_096, max: 9_000 }), (parts, size) => {
        const text = parts.join('');
        const chunks = recallChunks(text, size);
        expect(chunks.join('').length).toBeGreaterThanOrEqual(text.length);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(size + 1);
          expect(hasLoneSurrogate(chunk)).toBe(false);
        }
        // Every window of RECALL_CHUNK_OVERLAP code units lies whole in some chunk: chunk i starts at
        // `starts[i]` of the text (each chunk is a slice found at or after the previous start).
        const starts: number[] = [];
        let from = 0;
        for (const chunk of chunks) {
          const start = text.indexOf(chunk, from);
          expect(start).toBeGreaterThanOrEqual(from);
          starts.push(start);
          from = start + 1;
        }
        expect(starts[0]).toBe(0);
        expect(starts[starts.length - 1] + chunks[chunks.length - 1].length).toBe(text.length);
        for (let i = 1; i < chunks.length; i++) expect(starts[i - 1] + chunks[i - 1].length - starts[i]).toBeGreaterThanOrEqual(RECALL_CHUNK_OVERLAP);
      }),
      { numRuns: RUNS * 10 },
    );
  });

  it(`keeps a document of up to ${RECALL_WORD_CHUNK_LENGTH.toLocaleString('en-US')} code units in one row`, () => {
    expect(recallChunks('x'.repeat(RECALL_WORD_CHUNK_LENGTH), RECALL_WORD_CHUNK_LENGTH)).toHaveLength(1);
    expect(recallChunks('x'.repeat(RECALL_WORD_CHUNK_LENGTH + 1), RECALL_WORD_CHUNK_LENGTH)).toHaveLength(2);
  });
});
