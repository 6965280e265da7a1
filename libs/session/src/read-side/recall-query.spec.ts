import { documentPrefix, MAX_WORD_DOCUMENT_LENGTH } from './recall-document';
import { InvalidQueryError } from './invalid-query-error';
import { searchRecall, type RecallHit } from './queries/recall-query';
import { encodeRecallCursor } from './recall-cursor';
import { recallMatchExpression, recallQueryPlan } from './recall-match-expression';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { assistant, RecordedSessionLog, system, tool, user } from './testing/recorded-session-log';

function project(log: RecordedSessionLog): ReadModelStore {
  const store = ReadModelStore.open(':memory:');
  new SessionProjector(store).applyBatch(log.events);
  return store;
}

const ids = (items: RecallHit[]) => items.map((h) => `${h.sessionId}/${h.eventId}`).sort();

/** Two sessions of tenant `default` (owners alice and bob), one of tenant `acme`; s1 compacted by c1. */
function corpus(): ReadModelStore {
  const log = new RecordedSessionLog();
  log.append('s1', system('sys', 'You are a helpful assistant'), { userId: 'alice', createdAt: '2024-01-01T00:00:00Z' });
  log.append('s1', user('u1', 'Please find the flamingo report'), { createdAt: '2024-01-02T00:00:00Z' });
  log.append('s1', assistant('a1', 'Looking', [['search_files', '{"pattern":"quokka-*.md","dir":"/srv/reports"}']]), { createdAt: '2024-01-03T00:00:00Z' });
  log.append('s1', tool('t1', 'call-a1-0', 'search_files', '["/srv/reports/quokka-2023.md"] checksum=zebra42'), { createdAt: '2024-01-04T00:00:00Z' });
  log.append('s1', user('u2', 'now summarise the flamingo numbers'), { createdAt: '2024-01-05T00:00:00+02:00' });
  log.archive('s1', 'c1', ['u1', 'a1', 't1']);
  log.summary('s1', 'c1', 'u2', 'User asked for the flamingo report; found quokka-2023.md');
  log.completed('s1', 'c1');
  log.append('s2', user('v1', 'flamingo facts please'), { userId: 'bob', createdAt: '2024-02-01T00:00:00Z' });
  log.record(
    's3',
    'ConversationEventAppended',
    { event: user('w1', 'flamingo from another tenant'), costs: { chars: 1, cl100k_base: 1, o200k_base: 1 }, createdAt: '2024-01-01T00:00:00Z' },
    'acme',
  );
  return project(log);
}

describe('searchRecall', () => {
  const store = corpus();

  it('finds archived events and says which compaction archived them', () => {
    const { items } = searchRecall(store, { tenantId: 'default', q: 'flamingo report', sessionId: 's1' });
    const u1 = items.find((h) => h.eventId === 'u1')!;
    expect(u1).toMatchObject({ sessionId: 's1', type: 'user', archived: true, compactionId: 'c1', createdAt: '2024-01-02T00:00:00.000Z' });
    expect(u1.snippet).toContain('<mark>flamingo</mark>');
    const summary = items.find((h) => h.eventId === 'summary-c1')!;
    expect(summary).toMatchObject({ type: 'summary', archived: false });
    expect(summary.compactionId).toBeUndefined();
    expect(ids(items)).toEqual(['s1/summary-c1', 's1/u1']);
  });

  it('escapes stored text in snippets: only the match marks are markup', () => {
    const log = new RecordedSessionLog();
    log.append('x1', user('h1', 'ok <script>alert(1)</script> & "pelican" \u0001 done'), { createdAt: '2024-01-01T00:00:00Z' });
    const [hit] = searchRecall(project(log), { tenantId: 'default', q: 'pelican' }).items;
    expect(hit.snippet).toBe('ok &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;<mark>pelican</mark>&quot;   done');
  });

  it('treats control characters in q as spaces (a NUL would end an FTS5 string)', () => {
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'zebra42\u0000' }).items)).toEqual(['s1/t1']);
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'flamingo\u0000report', sessionId: 's1' }).items)).toEqual(['s1/summary-c1', 's1/u1']);
  });

  it('searches tool call arguments and tool results', () => {
    expect(ids(searchRecall(store, { tenantId: 'default', q: '/srv/reports' }).items)).toEqual(['s1/a1', 's1/t1']);
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'zebra42' }).items)).toEqual(['s1/t1']);
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'search_files', type: 'assistant' }).items)).toEqual(['s1/a1']);
  });

  it('filters by tenant, session, user, type, archived, compaction and time', () => {
    const q = 'flamingo';
    const search = (filters: object) => ids(searchRecall(store, { tenantId: 'default', q, ...filters }).items);
    expect(search({})).toEqual(['s1/summary-c1', 's1/u1', 's1/u2', 's2/v1']);
    expect(ids(searchRecall(store, { tenantId: 'acme', q }).items)).toEqual(['s3/w1']);
    expect(search({ sessionId: 's2' })).toEqual(['s2/v1']);
    expect(search({ userId: 'alice' })).toEqual(['s1/summary-c1', 's1/u1', 's1/u2']);
    expect(search({ userId: 'bob' })).toEqual(['s2/v1']);
    expect(search({ type: 'summary' })).toEqual(['s1/summary-c1']);
    expect(search({ archived: true })).toEqual(['s1/u1']);
    expect(search({ archived: false })).toEqual(['s1/summary-c1', 's1/u2', 's2/v1']);
    expect(search({ compactionId: 'c1' })).toEqual(['s1/u1']);
    expect(search({ compactionId: 'c9' })).toEqual([]);
    // u2 was created at 2024-01-04T22:00Z (+02:00 normalised); `to` is exclusive.
    expect(search({ from: '2024-01-02T00:00:00Z', to: '2024-01-05T00:00:00Z' })).toEqual(['s1/u1', 's1/u2']);
    expect(search({ from: new Date('2024-02-01T00:00:00Z') })).toEqual(['s1/summary-c1', 's2/v1']);
  });

  it('ranks best first with a score that is higher for better matches', () => {
    const { items } = searchRecall(store, { tenantId: 'default', q: 'flamingo' });
    const scores = items.map((h) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const both = searchRecall(store, { tenantId: 'default', q: 'flamingo report' }).items;
    expect(both.length).toBeGreaterThan(0);
  });

  it('pages with a cursor and returns every hit exactly once', () => {
    const log = new RecordedSessionLog();
    for (let i = 0; i < 47; i++) log.append(`p${i % 3}`, user(`m${i}`, `needle ${'hay '.repeat(i % 5)} number ${i}`));
    log.append('p0', user('other', 'nothing here'));
    const paged = project(log);
    const all = searchRecall(paged, { tenantId: 'default', q: 'needle', limit: 100 });
    expect(all.items).toHaveLength(47);
    expect(all.nextCursor).toBeUndefined();

    const seen: RecallHit[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = searchRecall(paged, { tenantId: 'default', q: 'needle', limit: 7, cursor });
      expect(page.items.length).toBeLessThanOrEqual(7);
      seen.push(...page.items);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor && pages < 20);
    expect(pages).toBe(7);
    expect(seen.map((h) => h.eventId)).toEqual(all.items.map((h) => h.eventId));
    expect(new Set(seen.map((h) => h.eventId)).size).toBe(47);
  });

  it('never lets FTS5 syntax reach SQLite', () => {
    const nasty = [
      '"flamingo',
      'flamingo"',
      'flam*',
      'flamingo *',
      'body:flamingo',
      'NEAR(flamingo report)',
      'flamingo NEAR report',
      '(flamingo',
      'flamingo)',
      '-flamingo',
      'flamingo -report',
      'AND',
      'flamingo OR',
      'NOT flamingo',
      '^flamingo',
      "fla'mingo",
      '{body}: x',
      'a"b"c',
    ];
    for (const q of nasty) expect(() => searchRecall(store, { tenantId: 'default', q })).not.toThrow();
    // Nothing searchable at all is the caller's mistake (400), never an SQLite error.
    for (const q of ['"', '*', ':', '()', '-', '""']) expect(() => searchRecall(store, { tenantId: 'default', q })).toThrow(InvalidQueryError);
    expect(ids(searchRecall(store, { tenantId: 'default', q: '"flamingo"' }).items)).toContain('s1/u1');
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'body:flamingo' }).items)).toEqual([]);
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'quokka-2023.md' }).items)).toEqual(['s1/summary-c1', 's1/t1']);
  });

  it('rejects blank or unusable input with InvalidQueryError naming the parameter', () => {
    const bad: Array<[object, string]> = [
      [{ q: '' }, 'q'],
      [{ q: '   \n' }, 'q'],
      [{ q: '*** --- ()' }, 'q'],
      [{ q: 'x'.repeat(1001) }, 'q'],
      [{ q: 'flamingo', limit: 0 }, 'limit'],
      [{ q: 'flamingo', limit: 101 }, 'limit'],
      [{ q: 'flamingo', limit: 2.5 }, 'limit'],
      [{ q: 'flamingo', type: 'robot' }, 'type'],
      [{ q: 'flamingo', from: 'yesterday' }, 'from'],
      [{ q: 'flamingo', to: 'soon' }, 'to'],
      [{ q: 'flamingo', cursor: 'not a cursor!' }, 'cursor'],
      [{ q: 'flamingo', cursor: Buffer.from('{"v":1}').toString('base64url') }, 'cursor'],
      [{ q: 'flamingo', cursor: encodeRecallCursor({ rank: -1, position: 3n, fingerprint: 'other-query' }) }, 'cursor'],
      [{ q: 'flamingo', sessionId: '' }, 'sessionId'],
    ];
    for (const [input, parameter] of bad) {
      let thrown: unknown;
      try {
        searchRecall(store, { tenantId: 'default', ...input } as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidQueryError);
      expect(thrown).toMatchObject({ parameter, code: 'invalid_query' });
    }
  });

  it('rejects a cursor of another query', () => {
    const first = searchRecall(store, { tenantId: 'default', q: 'flamingo', limit: 1 });
    expect(first.nextCursor).toBeDefined();
    expect(() => searchRecall(store, { tenantId: 'default', q: 'flamingo', limit: 1, archived: true, cursor: first.nextCursor })).toThrow(InvalidQueryError);
    expect(searchRecall(store, { tenantId: 'default', q: 'flamingo', limit: 1, cursor: first.nextCursor }).items).toHaveLength(1);
  });
});

describe('recallMatchExpression', () => {
  it('quotes every word and doubles inner quotes', () => {
    expect(recallMatchExpression('read_file "src/a.ts" -x')).toBe('"read_file" """src/a.ts""" "-x"');
    expect(recallMatchExpression('NEAR(a b) * :')).toBe('"NEAR(a" "b)"');
  });
});

describe('recall in scripts written without spaces (issue 17)', () => {
  const log = new RecordedSessionLog();
  log.append('j', user('ja', '日本語のテキストを検索'));
  log.append('j', user('pct', '割引は50%_です'));
  log.append('j', user('en', 'plain words only'));
  const store = project(log);
  const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);

  it('plans word search for other scripts and substring search for unspaced ones', () => {
    expect(recallQueryPlan('plain words')).toEqual({ table: 'recall_fts', match: '"plain" "words"', substrings: [] });
    expect(recallQueryPlan('テキスト 検索 😀')).toEqual({ table: 'recall_trigram', match: '"テキスト"', substrings: ['検索', '😀'] });
  });

  it('finds words inside a run, short words by substring, and treats LIKE wildcards as text', () => {
    expect(find('テキスト')).toEqual(['ja']);
    expect(find('検索')).toEqual(['ja']);
    expect(find('割引 5_')).toEqual([]); // `_` is text here: as a LIKE wildcard it would match "50"
  });

  it('does not index documents without such characters twice', () => {
    expect((store.db.prepare('SELECT count(*) AS n FROM recall_trigram').get() as { n: number }).n).toBe(2);
    expect(find('割引 50%_')).toEqual(['pct']);
    expect(find('割引 5%0')).toEqual([]);
  });
});

describe('recall index bounds (issue 17, item 1)', () => {
  it(`finds words in the first ${MAX_WORD_DOCUMENT_LENGTH.toLocaleString('en-US')} code units of a huge event, not beyond (the word index holds that prefix)`, () => {
    const filler = 'lorem ipsum '.repeat(Math.ceil(MAX_WORD_DOCUMENT_LENGTH / 12));
    const log = new RecordedSessionLog();
    log.append('big', user('b1', `heron ${filler} egret`), { createdAt: '2024-01-01T00:00:00Z' });
    const store = project(log);
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'heron' }).items)).toEqual(['big/b1']);
    expect(searchRecall(store, { tenantId: 'default', q: 'egret' }).items).toEqual([]);
  });

  it('cuts a document before a surrogate pair rather than through it', () => {
    const body = 'a'.repeat(9) + '😀';
    expect(documentPrefix(body, 10)).toBe('a'.repeat(9));
    expect(documentPrefix(body, 11)).toBe(body);
  });
});
