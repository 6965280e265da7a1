import { createHash } from 'node:crypto';
import { RECALL_WORD_CHUNK_LENGTH } from './recall-document';
import { InvalidQueryError } from './invalid-query-error';
import { RECALL_RANKED_MATCH_LIMIT, RECALL_SUBSTRING_SCAN_LIMIT, searchRecall, type RecallHit } from './queries/recall-query';
import { encodeRecallCursor } from './recall-cursor';
import { recallMatchExpression, recallQueryPlan } from './recall-match-expression';
import { tenantRecallIndexTables } from './recall-index-tables';
import type { SessionEvent } from '@lib/compaction';
import { ReadModelStore } from './read-model-store';
import { assistant, RecordedSessionLog, system, tool, user } from './testing/recorded-session-log';
import { projectedReadModels } from './testing/projected-read-models';

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
  return projectedReadModels(log);
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
    const [hit] = searchRecall(projectedReadModels(log), { tenantId: 'default', q: 'pelican' }).items;
    expect(hit.snippet).toBe('ok &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;<mark>pelican</mark>&quot;   done');
  });

  it('shows the text around a match past a NUL (FTS5 snippet() read the document as a C string): the NUL as ␀', () => {
    const log = new RecordedSessionLog();
    log.append('x1', user('n1', 'before nul\u0000after the null char, heron and more words'), { createdAt: '2024-01-01T00:00:00Z' });
    log.append('x1', user('n2', '鷺の話\u0000その後'), { createdAt: '2024-01-01T00:00:01Z' });
    const store = projectedReadModels(log);
    expect(searchRecall(store, { tenantId: 'default', q: 'nul' }).items[0].snippet).toBe('before <mark>nul</mark>␀after the null char, heron and more words');
    expect(searchRecall(store, { tenantId: 'default', q: 'heron' }).items[0].snippet).toBe('before nul␀after the null char, <mark>heron</mark> and more words');
    expect(searchRecall(store, { tenantId: 'default', q: '鷺' }).items[0].snippet).toBe('<mark>鷺</mark>の話␀その後');
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'after' }).items)).toEqual(['x1/n1']);
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
    const paged = projectedReadModels(log);
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
    // Another tenant's cursor, or another query's, is refused saying which it may be (newcomer ncrecall61 F2: it named only the query).
    const next = searchRecall(paged, { tenantId: 'default', q: 'needle', limit: 7 }).nextCursor;
    for (const other of [
      { tenantId: 'acme', q: 'needle' },
      { tenantId: 'default', q: 'hay' },
    ])
      expect(() => searchRecall(paged, { ...other, limit: 7, cursor: next })).toThrow(
        "cursor: belongs to another query or another tenant's search; pass the nextCursor of the previous page unchanged, with the same q and filters and the same tenant's API key",
      );
  });

  it('continues a paging with q in another ASCII letter case, and follows a cursor an earlier release made for q as sent (newcomer ncrecall69 F4)', () => {
    const log = new RecordedSessionLog();
    for (let i = 0; i < 12; i++) log.append('p0', user(`m${i}`, `Needle ${'hay '.repeat(i % 4)} 東京 item ${i}`));
    const paged = projectedReadModels(log);
    for (const [first, rest] of [
      ['Needle', ['needle', 'nEeDlE']],
      ['東京 ITEM', ['東京 item', '東京 Item']],
    ] as const) {
      const whole = searchRecall(paged, { tenantId: 'default', q: first, limit: 100 }).items.map((h) => h.eventId);
      expect(whole).toHaveLength(12);
      let cursor = searchRecall(paged, { tenantId: 'default', q: first, limit: 4 }).nextCursor;
      const seen = searchRecall(paged, { tenantId: 'default', q: first, limit: 4 }).items.map((h) => h.eventId);
      for (const q of rest) {
        const page = searchRecall(paged, { tenantId: 'default', q, limit: 4, cursor });
        seen.push(...page.items.map((h) => h.eventId));
        cursor = page.nextCursor;
      }
      expect(seen).toEqual(whole);
      expect(cursor).toBeUndefined();
    }
    // A cursor as a release before 2026-12-07 wrote it: its fingerprint hashed q's MATCH expression as sent.
    const next = searchRecall(paged, { tenantId: 'default', q: 'Needle', limit: 4 }).nextCursor!;
    const fields = JSON.parse(Buffer.from(next, 'base64url').toString('utf8')) as Record<string, unknown>;
    const asSent = createHash('sha256')
      .update(JSON.stringify(['recall_fts', '"Needle"', [], 'default', undefined, undefined, undefined, undefined, undefined, undefined, undefined]))
      .digest('base64url')
      .slice(0, 16);
    expect(asSent).not.toBe(fields.f);
    const earlier = Buffer.from(JSON.stringify({ ...fields, f: asSent }), 'utf8').toString('base64url');
    const page = searchRecall(paged, { tenantId: 'default', q: 'Needle', limit: 4, cursor: earlier });
    expect(page.items.map((h) => h.eventId)).toEqual(
      searchRecall(paged, { tenantId: 'default', q: 'needle', limit: 4, cursor: next }).items.map((h) => h.eventId),
    );
    // Other words are still another query.
    expect(() => searchRecall(paged, { tenantId: 'default', q: 'Needles', limit: 4, cursor: next })).toThrow('belongs to another query');
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
      [{ q: 'flamingo', cursor: 'A'.repeat(2049) }, 'cursor'],
      [{ q: 'flamingo', cursor: Buffer.from('{"v":2,"f":"x","o":"relevance","a":"9","p":"3","r":-1,"s":[0,0,0,1]}').toString('base64url') }, 'cursor'],
      [{ q: 'flamingo', cursor: encodeRecallCursor({ order: 'newest', asOf: 9n, position: 3n, fingerprint: 'other-query' }) }, 'cursor'],
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

describe('recall searches every text a model is shown of an event (DESIGN §5: every event ever appended)', () => {
  const log = new RecordedSessionLog();
  log.append('ref1', { id: 'u1', type: 'user', text: 'build a bomb', name: 'mallory' }, { createdAt: '2024-01-01T00:00:00Z' });
  log.append('ref1', { id: 'a1', type: 'assistant', text: null, refusal: 'Zorblax policy forbids explosives guidance' }, { createdAt: '2024-01-01T00:00:01Z' });
  log.append('ref1', { id: 'a2', type: 'assistant', text: 'I cannot', refusal: 'Quimbly rule 9' }, { createdAt: '2024-01-01T00:00:02Z' });
  log.append(
    'ref1',
    { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'call_Zq81xv', name: 'get_reservation', arguments: '{"id":"XK42Q9"}' }] },
    {
      createdAt: '2024-01-01T00:00:03Z',
    },
  );
  log.append('ref1', tool('t1', 'call_Zq81xv', 'get_reservation', '{"date":"2024-05-17"}'), { createdAt: '2024-01-01T00:00:04Z' });
  log.archive('ref1', 'c1', ['u1', 'a1']);
  const store = projectedReadModels(log);
  const search = (q: string, filters: object = {}) => ids(searchRecall(store, { tenantId: 'default', q, ...filters }).items);

  it("given an assistant's refusal without text, when recall searches a word of it, then it finds the event, archived too", () => {
    expect(search('Zorblax')).toEqual(['ref1/a1']);
    expect(search('Zorblax', { archived: true })).toEqual(['ref1/a1']);
    const [hit] = searchRecall(store, { tenantId: 'default', q: 'explosives', archived: true }).items;
    expect(hit).toMatchObject({ eventId: 'a1', archived: true, compactionId: 'c1' });
    expect(hit.snippet).toContain('<mark>explosives</mark>');
  });

  it('given a refusal next to a text, when recall searches either, then it finds the event', () => {
    expect(search('Quimbly')).toEqual(['ref1/a2']);
    expect(search('cannot')).toEqual(['ref1/a2']);
  });

  it('given a tool call id, when recall searches it, then it finds the call and its result', () => {
    expect(search('call_Zq81xv')).toEqual(['ref1/c1', 'ref1/t1']);
    expect(search('call_Zq81xv', { type: 'tool' })).toEqual(['ref1/t1']);
    expect(search('get_reservation', { type: 'tool' })).toEqual(['ref1/t1']);
  });

  it("given a participant name and the caller's event ids, when recall searches them, then nothing is found (labels, not content)", () => {
    expect(search('mallory')).toEqual([]);
    expect(search('u1')).toEqual([]);
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
  const store = projectedReadModels(log);
  const find = (q: string) => searchRecall(store, { tenantId: 'default', q }).items.map((h) => h.eventId);

  it('plans word search for other scripts and substring search for unspaced ones', () => {
    expect(recallQueryPlan('plain words')).toEqual({
      index: 'words',
      match: '"plain" "words"',
      phrases: ['"plain"', '"words"'],
      substrings: [],
      wholeClusters: [],
    });
    expect(recallQueryPlan('テキスト 検索 😀')).toEqual({
      index: 'trigrams',
      match: '"テキスト"',
      phrases: ['"テキスト"'],
      substrings: ['検索', '😀'],
      wholeClusters: [],
    });
  });

  it('finds words inside a run, short words by substring, and treats LIKE wildcards as text', () => {
    expect(find('テキスト')).toEqual(['ja']);
    expect(find('検索')).toEqual(['ja']);
    expect(find('割引 6_')).toEqual([]); // `_` separates words here; as a LIKE wildcard it would match "50"
  });

  it('searches quoted words and FTS operators in these scripts as plain words, as it does in others (punctuation separates)', () => {
    for (const q of ['"テキスト"', 'テキスト*', '(検索)', '-検索', '"検"', '検"', '検索^', 'テキスト:'])
      expect({ q, hits: find(q) }).toEqual({ q, hits: ['ja'] });
    expect(recallQueryPlan('"東京タワー"')).toEqual({ index: 'trigrams', match: '"東京タワー"', phrases: ['"東京タワー"'], substrings: [], wholeClusters: [] });
    expect(recallQueryPlan('👩‍👩‍👧')).toMatchObject({ substrings: [] }); // a ZWJ sequence stays one word (3+ code points: a trigram phrase)
  });

  it('marks short words found by substring in their snippets, cut around the first match (issue 14)', () => {
    const long = new RecordedSessionLog();
    long.append('k', user('far', `${'前置きの文章です。'.repeat(10)}ここで東京タワーと😀を見ました。${'後書き。'.repeat(10)}`));
    const [hit] = searchRecall(projectedReadModels(long), { tenantId: 'default', q: '東京 😀' }).items;
    expect(hit.snippet).toContain('<mark>東京</mark>タワーと<mark>😀</mark>');
    expect(hit.snippet.startsWith('…')).toBe(true);
    expect(hit.snippet.endsWith('…')).toBe(true);
    // a query mixing a trigram phrase and a short word marks both, never one inside the other
    const [mixed] = searchRecall(projectedReadModels(long), { tenantId: 'default', q: '東京タワー 😀' }).items;
    expect(mixed.snippet).toContain('<mark>東京タワー</mark>と<mark>😀</mark>');
    expect(searchRecall(store, { tenantId: 'default', q: '検索' }).items[0].snippet).toBe('日本語のテキストを<mark>検索</mark>');
  });

  it('does not index documents without such characters twice', () => {
    const { trigrams } = tenantRecallIndexTables(store.db, 'default')!;
    expect((store.db.prepare(`SELECT count(*) AS n FROM ${trigrams}`).get() as { n: number }).n).toBe(2);
    expect(find('割引 50%_')).toEqual(['pct']);
    expect(find('割引 51%')).toEqual([]);
  });
});

describe('recall folds compatibility forms (NFKC) in the index and the query, not in the stored text', () => {
  const log = new RecordedSessionLog();
  log.append('w', user('full', 'ticket ｘｋ４２ｑ９ is open'));
  log.append('w', user('ascii', 'ticket zq77mb is closed'));
  log.append('w', user('kana', 'ｶﾀｶﾅの検索テスト'));
  const store = projectedReadModels(log);
  const find = (q: string) =>
    searchRecall(store, { tenantId: 'default', q })
      .items.map((h) => h.eventId)
      .sort();

  it('finds full-width Latin and digits with an ASCII query, and ASCII with a full-width query', () => {
    expect(find('xk42q9')).toEqual(['full']);
    expect(find('ｘｋ４２ｑ９')).toEqual(['full']);
    expect(find('ＺＱ７７ＭＢ')).toEqual(['ascii']);
    expect(find('ticket　zq77mb')).toEqual(['ascii']); // an ideographic space separates words like a space
  });

  it('finds half-width katakana with full-width katakana (the substring index folds too)', () => {
    expect(find('カタカナ')).toEqual(['kana']);
    expect(find('ｶﾀｶﾅ')).toEqual(['kana']);
  });

  it('keeps the stored event verbatim', () => {
    const row = store.db.prepare("SELECT data_json FROM session_log WHERE event_id = 'full'").get() as { data_json: string };
    expect(JSON.parse(row.data_json).event.text).toBe('ticket ｘｋ４２ｑ９ is open');
  });
});

describe("recall's first mention: a notice is a real event in its place (DESIGN §3.1, §3.2; newcomer ncaudit66 F1)", () => {
  const notice = (id: string, text: string): SessionEvent => ({ id, type: 'system', text, notice: true });
  const log = new RecordedSessionLog();
  log.append('n', system('sys', 'You file documents. Names such as report_2024-05-12.pdf sort by date. 鶴'));
  log.append('n', user('hello', 'Hello there'));
  log.append('n', notice('arrived', 'File arrived: report_2024-05-12.pdf 鶴'));
  log.append('n', user('asked', 'Please file report_2024-05-12.pdf for me 鶴'));
  log.append('n', assistant('filed', 'Filed report_2024-05-12.pdf 鶴'));
  const store = projectedReadModels(log);
  const marked = (search: Partial<Parameters<typeof searchRecall>[1]>) => {
    const page = searchRecall(store, { tenantId: 'default', sessionId: 'n', ...search } as Parameters<typeof searchRecall>[1]);
    return { order: page.order, hits: page.items.map((h) => [h.eventId, h.firstMention ?? false]) };
  };

  it('marks the notice that brought a fact, not the stored system message nor the later user message, in relevance order', () => {
    const { order, hits } = marked({ q: 'report_2024-05-12.pdf' });
    expect(order).toBe('relevance');
    expect(hits[0]).toEqual(['arrived', true]);
    expect(hits.filter(([, first]) => first)).toHaveLength(1);
    expect(hits.map(([id]) => id).sort()).toEqual(['arrived', 'asked', 'filed', 'sys']);
  });

  it('marks a notice that alone holds the words', () => {
    expect(marked({ q: 'arrived' }).hits).toEqual([['arrived', true]]);
  });

  it('marks the notice in oldest order (a substring query), after the system message it follows', () => {
    expect(marked({ q: '鶴' })).toEqual({
      order: 'oldest',
      hits: [
        ['sys', false],
        ['arrived', true],
        ['asked', false],
        ['filed', false],
      ],
    });
  });

  it('keeps the session-wide rule under a type filter: the notice is marked among system hits, no user hit is', () => {
    expect(marked({ q: 'report_2024-05-12.pdf', type: 'system' }).hits).toEqual([
      ['arrived', true],
      ['sys', false],
    ]);
    expect(marked({ q: 'report_2024-05-12.pdf', type: 'user' }).hits).toEqual([['asked', false]]);
  });
});

describe('recall order: the first mention of a session, and newest first for words past the ranked match limit (issues 14, 16)', () => {
  it("answers a session's first mention first, ahead of shorter repeats, the system prompt and summaries, and pages every hit once", () => {
    const log = new RecordedSessionLog();
    log.append('f', system('sys', 'Policy: a booking code like QX7R2M is six characters.'));
    log.append('f', user('stated', 'Hello, I would like to change the flight of my booking with the code QX7R2M please.'));
    for (let i = 0; i < 6; i++) log.append('f', assistant(`echo${i}`, `QX7R2M ${i}`));
    log.append('f', user('later', 'Thanks.'));
    log.archive('f', 'c1', ['stated', 'echo0', 'echo1']);
    log.summary('f', 'c1', 'echo2', 'The user gave the code QX7R2M.');
    log.completed('f', 'c1');
    log.append('g', user('other', 'QX7R2M'));
    const store = projectedReadModels(log);
    const page = searchRecall(store, { tenantId: 'default', q: 'qx7r2m', sessionId: 'f', limit: 5 });
    expect(page.order).toBe('relevance');
    expect(page.items[0]).toMatchObject({ eventId: 'stated', firstMention: true, archived: true });
    expect(page.items.slice(1).filter((h) => h.firstMention)).toEqual([]);
    // without the rule BM25 puts the short echoes first
    const tenantWide = searchRecall(store, { tenantId: 'default', q: 'qx7r2m', limit: 5 });
    expect(tenantWide.items.map((h) => h.eventId)).not.toContain('stated');
    expect(tenantWide.items.some((h) => h.firstMention)).toBe(false);

    const all = searchRecall(store, { tenantId: 'default', q: 'qx7r2m', sessionId: 'f', limit: 100 }).items.map((h) => h.eventId);
    expect(all).toHaveLength(9); // system, stated, six echoes, the summary
    for (const limit of [1, 2, 4]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const next = searchRecall(store, { tenantId: 'default', q: 'qx7r2m', sessionId: 'f', limit, cursor });
        seen.push(...next.items.map((h) => h.eventId));
        cursor = next.nextCursor;
      } while (cursor && seen.length < 50);
      expect(seen).toEqual(all);
    }
    // the first mention is the session's whatever the filters: archived=false leaves it out, so no
    // hit is marked (the first active echo was marked before, though the session said it earlier)
    const active = searchRecall(store, { tenantId: 'default', q: 'qx7r2m', sessionId: 'f', archived: false }).items;
    expect(active.map((h) => h.eventId)).toContain('echo2');
    expect(active.filter((h) => h.firstMention)).toEqual([]);
    expect(searchRecall(store, { tenantId: 'default', q: 'qx7r2m', sessionId: 'f', archived: true }).items[0]).toMatchObject({
      eventId: 'stated',
      firstMention: true,
    });
  });

  it(`answers newest first, unranked, once a word of the query matches more than ${RECALL_RANKED_MATCH_LIMIT} events, and pages every hit once`, () => {
    const log = new RecordedSessionLog();
    const total = RECALL_RANKED_MATCH_LIMIT + 50;
    const all = total + 5;
    for (let i = 0; i < total; i++)
      log.append(`n${i % 7}`, user(`m${i}`, i % 100 === 0 ? `common word and a rare zebra ${i}` : `common word ${'filler '.repeat(i % 9)}${i}`));
    // a session written apart: its span of positions holds few matches of the common word
    for (let i = 0; i < 5; i++) log.append('solo', user(`s${i}`, `common ${i}`));
    const store = projectedReadModels(log);
    const page = searchRecall(store, { tenantId: 'default', q: 'common', limit: 100 });
    expect(page.order).toBe('newest');
    expect(page.items.map((h) => h.eventId).slice(0, 3)).toEqual(['s4', 's3', 's2']);
    expect(page.items.every((h) => h.score === 0 && h.snippet.includes('<mark>common</mark>'))).toBe(true);
    const seen = new Set<string>();
    let cursor: string | undefined = page.nextCursor;
    page.items.forEach((h) => seen.add(h.eventId));
    while (cursor) {
      const next = searchRecall(store, { tenantId: 'default', q: 'common', limit: 100, cursor });
      expect(next.order).toBe('newest');
      next.items.forEach((h) => seen.add(h.eventId));
      cursor = next.nextCursor;
    }
    expect(seen.size).toBe(all);
    // a selective word in the same index is still ranked by BM25, also beside the common word, which
    // then only filters (BM25 would count every row of the common word first)
    const rare = searchRecall(store, { tenantId: 'default', q: 'zebra', limit: 100 });
    expect(rare.order).toBe('relevance');
    expect(rare.items).toHaveLength(Math.ceil(total / 100));
    const mixed = searchRecall(store, { tenantId: 'default', q: 'common zebra', limit: 100 });
    expect(mixed.order).toBe('relevance');
    expect(mixed.items.map((h) => h.eventId).sort()).toEqual(rare.items.map((h) => h.eventId).sort());
    expect(mixed.items.every((h) => h.score > 0 && h.snippet.includes('<mark>common</mark>') && h.snippet.includes('<mark>zebra</mark>'))).toBe(true);
    expect(searchRecall(store, { tenantId: 'default', q: 'common filler zebra' }).items.every((h) => h.snippet.includes('filler'))).toBe(true);
    expect(searchRecall(store, { tenantId: 'default', q: 'common word' }).order).toBe('newest');
    // inside one session: its first mention, then its other hits newest first
    const solo = searchRecall(store, { tenantId: 'default', q: 'common', sessionId: 'solo' });
    expect(solo.order).toBe('newest');
    expect(solo.items.map((h) => [h.eventId, h.firstMention])).toEqual([
      ['s0', true],
      ['s4', undefined],
      ['s3', undefined],
      ['s2', undefined],
      ['s1', undefined],
    ]);
  });
});

describe('recall of a huge event (issue 17, item 1; ncagentloop F1)', () => {
  it(`finds words before and past the first ${RECALL_WORD_CHUNK_LENGTH.toLocaleString('en-US')} characters of a huge event (read models 21: every chunk is indexed)`, () => {
    const filler = 'lorem ipsum '.repeat(Math.ceil(RECALL_WORD_CHUNK_LENGTH / 12));
    const log = new RecordedSessionLog();
    log.append('big', user('b1', `heron ${filler} egret`), { createdAt: '2024-01-01T00:00:00Z' });
    const store = projectedReadModels(log);
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'heron' }).items)).toEqual(['big/b1']);
    expect(ids(searchRecall(store, { tenantId: 'default', q: 'egret' }).items)).toEqual(['big/b1']);
  });
});

describe('recall by substring reads a bounded number of index rows per page (issue 17, item 1)', () => {
  // Events holding unspaced script; only three of them hold 鶴, far apart in the index.
  const total = RECALL_SUBSTRING_SCAN_LIMIT * 2 + 500;
  const holders = new Set([3, RECALL_SUBSTRING_SCAN_LIMIT + 400, total - 2]);
  const log = new RecordedSessionLog();
  log.append('jp', system('sys', 'システム 鶴'));
  for (let i = 0; i < total; i++) log.append('jp', user(`e${i}`, holders.has(i) ? `今日は鶴を見た ${i}` : `今日は雨だった ${i}`));
  const store = projectedReadModels(log);

  function allPages(search: { sessionId?: string; limit: number }) {
    const pages: RecallHit[][] = [];
    let cursor: string | undefined;
    do {
      const page = searchRecall(store, { tenantId: 'default', q: '鶴', ...search, cursor });
      expect(page.order).toBe('oldest');
      pages.push(page.items);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 20);
    return pages;
  }

  it('answers every hit once, oldest first, in pages that each read at most the scan limit, short pages carrying a cursor', () => {
    for (const sessionId of [undefined, 'jp']) {
      const pages = allPages({ sessionId, limit: 20 });
      expect(pages.flat().map((h) => h.eventId)).toEqual(['sys', ...[...holders].map((i) => `e${i}`)]);
      // the index holds total + 1 rows: a page reads at most the limit, so more than two pages
      expect(pages.length).toBeGreaterThanOrEqual(Math.ceil((total + 1) / RECALL_SUBSTRING_SCAN_LIMIT));
      expect(pages.every((items) => items.length <= 20)).toBe(true);
    }
  });

  it("marks the session's first mention on the first page (the system message is not one)", () => {
    const [first] = allPages({ sessionId: 'jp', limit: 5 });
    expect(first.map((h) => [h.eventId, h.firstMention])).toEqual([
      ['sys', undefined],
      ['e3', true],
    ]);
  });

  it('pages of one hit each still reach every hit', () => {
    expect(
      allPages({ limit: 1 })
        .flat()
        .map((h) => h.eventId),
    ).toEqual(['sys', ...[...holders].map((i) => `e${i}`)]);
  });
});
