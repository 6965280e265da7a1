/**
 * Recall's words across the rows of a long event (read models 22, `recall-cross-chunk`): a query
 * of several words finds an event holding every one of them anywhere, though no index row holds
 * them all (an event of 600 KB with `alpha` at its head and `omega` at its tail), in both indexes,
 * on every page and order, with the session filter, across tenants and after erasure.
 */
import fc from 'fast-check';
import { CONVERSATION_EVENT } from '../events/session-stream-events';
import { searchRecall } from './queries/recall-query';
import { RECALL_WORD_CHUNK_LENGTH } from './recall-document';
import { SessionProjector } from './session-projector';
import { projectedReadModels } from './testing/projected-read-models';
import { allRecallPages } from './testing/recall-pages';
import { costs, RecordedSessionLog, tool, user } from './testing/recorded-session-log';

const RUNS = Number(process.env.FC_RUNS ?? 6);

/** About `length` characters of spaced filler words none of the queries holds, distinct per `tag`. */
function filler(length: number, tag: string): string {
  const words: string[] = [];
  for (let i = 0, size = 0; size < length; i++) {
    const word = `${tag}f${i % 4099}`;
    words.push(word);
    size += word.length + 1;
  }
  return words.join(' ');
}

const allPages = allRecallPages;

describe('recall finds the words of a query spread over the rows of a long event', () => {
  const log = new RecordedSessionLog();
  const long = (id: string, head: string, tail: string, tag: string) => tool(id, `call-${id}`, 'dump', `${head} ${filler(600_000, tag)} ${tail}`);
  log.append('s', user('u0', 'alpha and omega together'));
  log.append('s', long('far', 'alpha', 'omega', 'a'));
  log.append('s', user('u1', 'only alpha here'));
  log.append('s', long('far2', 'omega', 'alpha beta', 'b'));
  log.append('s', long('half', 'alpha', 'nothing', 'c'));
  log.append('t', long('other', 'alpha', 'omega', 'd'));
  // A Japanese text over the trigram index's rows (16,384 characters each), 東京タワー at its head, 大阪城公園 at its tail.
  log.append('s', tool('ja', 'call-ja', 'dump', `東京タワー${'名古屋の話です。'.repeat(6_000)}大阪城公園`));
  log.append('s', user('ja2', '東京タワーと大阪城公園'));
  const store = projectedReadModels(log);

  it('given the fixture, then the long events (several rows of an index) and only they are listed', () => {
    expect(600_000).toBeGreaterThan(2 * RECALL_WORD_CHUNK_LENGTH);
    const listed = store.db.prepare('SELECT event_id AS id, recall_rows AS bits FROM session_log WHERE recall_rows IS NOT NULL ORDER BY position').all();
    expect(listed).toEqual(['far', 'far2', 'half', 'other'].map((id) => ({ id, bits: 1 })).concat([{ id: 'ja', bits: 2 }]));
  });

  it('given alpha at the head and omega at the tail of 600 KB, when recall searches "alpha omega", then it finds that event once, with its words marked', () => {
    const { items, order } = searchRecall(store, { tenantId: 'default', q: 'alpha omega' });
    expect(order).toBe('relevance');
    expect(items.map((h) => h.eventId).sort()).toEqual(['far', 'far2', 'other', 'u0']);
    const far = items.find((h) => h.eventId === 'far')!;
    expect(far.snippet).toMatch(/<mark>(alpha|omega)<\/mark>/);
    expect(far.score).toBeGreaterThan(0);
    // An event of one row holding both words ranks above those holding them rows apart (a row's BM25 over the words it holds).
    expect(items[0].eventId).toBe('u0');
  });

  it('given three words over two rows, when recall searches them, then it finds the event; a word it lacks leaves it out', () => {
    expect(searchRecall(store, { tenantId: 'default', q: 'omega beta alpha' }).items.map((h) => h.eventId)).toEqual(['far2']);
    expect(searchRecall(store, { tenantId: 'default', q: 'alpha nothing' }).items.map((h) => h.eventId)).toEqual(['half']);
    expect(searchRecall(store, { tenantId: 'default', q: 'alpha omega zebra' }).items).toEqual([]);
  });

  it('given the session filter, when every page of one hit is read, then the first mention comes first and each event once', () => {
    const { hits } = allPages(store, { q: 'alpha omega', sessionId: 's', limit: 1 });
    expect(hits.map((h) => h.eventId)).toEqual(['u0', expect.any(String), expect.any(String)]);
    expect(hits[0].firstMention).toBe(true);
    expect(hits.map((h) => h.eventId).sort()).toEqual(['far', 'far2', 'u0']);
    // The first mention is a hit across rows when it comes first in the session.
    const { items } = searchRecall(store, { tenantId: 'default', q: 'alpha omega', sessionId: 't' });
    expect(items.map((h) => [h.eventId, h.firstMention])).toEqual([['other', true]]);
  });

  it.each([1, 2, 3, 10])('given pages of %i hits, when every page is read, then each hit comes once, in the first page’s scores', (limit) => {
    const { hits, orders } = allPages(store, { q: 'alpha omega', limit });
    expect(new Set(orders)).toEqual(new Set(['relevance']));
    expect(hits.map((h) => h.eventId).sort()).toEqual(['far', 'far2', 'other', 'u0']);
    const once = searchRecall(store, { tenantId: 'default', q: 'alpha omega', limit: 10 }).items;
    expect(hits.map((h) => [h.eventId, h.score])).toEqual(once.map((h) => [h.eventId, h.score]));
  });

  it('given a long Japanese text, when recall searches its head and tail words (trigram index and substrings), then it finds it', () => {
    expect(
      searchRecall(store, { tenantId: 'default', q: '東京タワー 大阪城公園' })
        .items.map((h) => h.eventId)
        .sort(),
    ).toEqual(['ja', 'ja2']);
    const { hits, orders } = allPages(store, { q: '東京 大阪', limit: 1 });
    expect(new Set(orders)).toEqual(new Set(['oldest']));
    expect(hits.map((h) => h.eventId)).toEqual(['ja', 'ja2']);
    expect(hits[0].snippet).toMatch(/<mark>(東京|大阪)<\/mark>/);
    expect(
      searchRecall(store, { tenantId: 'default', q: '東京タワー 大阪' })
        .items.map((h) => h.eventId)
        .sort(),
    ).toEqual(['ja', 'ja2']);
  });

  it('given another tenant, when it searches the same words, then it finds only its own', () => {
    const other = new RecordedSessionLog();
    other.append('mine', user('m', 'alpha'));
    other.record(
      'theirs',
      CONVERSATION_EVENT,
      { event: tool('x', 'cx', 'dump', `alpha ${filler(600_000, 'x')} omega`), costs: costs(10), createdAt: '2024-01-01T00:00:00.000Z' },
      'acme',
    );
    const two = projectedReadModels(other);
    expect(searchRecall(two, { tenantId: 'default', q: 'alpha omega' }).items).toEqual([]);
    expect(searchRecall(two, { tenantId: 'acme', q: 'alpha omega' }).items.map((h) => h.eventId)).toEqual(['x']);
    two.close();
  });

  it('given the session erased, then its hits across rows are gone and nothing of it is listed', () => {
    const doomed = new RecordedSessionLog();
    doomed.append('d', tool('big', 'c', 'dump', `alpha ${filler(600_000, 'e')} omega`));
    doomed.append('k', user('k', 'alpha omega'));
    const one = projectedReadModels(doomed);
    expect(searchRecall(one, { tenantId: 'default', q: 'alpha omega' }).items.map((h) => h.eventId)).toEqual(['k', 'big']);
    expect(new SessionProjector(one).eraseSession('default', 'd')).toBe(true);
    expect(searchRecall(one, { tenantId: 'default', q: 'alpha omega' }).items.map((h) => h.eventId)).toEqual(['k']);
    expect((one.db.prepare('SELECT count(*) AS n FROM session_log WHERE recall_rows IS NOT NULL').get() as { n: number }).n).toBe(0);
    one.close();
  });
});

describe('recall across rows when every word is too common to rank (newest order)', () => {
  it('given 2,050 events holding both words and long ones holding them rows apart, when every page is read, then each comes once, newest first (and a rare word ranks)', () => {
    const log = new RecordedSessionLog();
    for (let n = 0; n < 2_050; n++) log.append('c', user(`u${n}`, `tern gull ${n}`));
    log.append('c', tool('far3', 'cf3', 'dump', `tern ${filler(600_000, 'h')} rarezq`));
    log.append('c', user('near', 'rarezq tern'));
    log.append('c', tool('far', 'cf', 'dump', `tern ${filler(600_000, 'g')} gull`));
    log.append('c', user('last', 'tern gull'));
    const store = projectedReadModels(log);
    const { hits, orders } = allPages(store, { q: 'tern gull', limit: 100 });
    expect(new Set(orders)).toEqual(new Set(['newest']));
    const ids = hits.map((h) => h.eventId);
    expect(ids.slice(0, 2)).toEqual(['last', 'far']);
    expect(ids.length).toBe(2_052);
    expect(new Set(ids).size).toBe(2_052);
    const session = searchRecall(store, { tenantId: 'default', q: 'tern gull', sessionId: 'c', archived: false, limit: 3 });
    expect(session.items.map((h) => h.eventId)).toEqual(['u0', 'last', 'far']);
    // A common word with a rare one: ranked by the rare one, the common one must occur (anywhere in the event).
    const mixed = allPages(store, { q: 'tern rarezq', limit: 1 });
    expect(new Set(mixed.orders)).toEqual(new Set(['relevance']));
    expect(mixed.hits.map((h) => h.eventId)).toEqual(['near', 'far3']);
    expect(mixed.hits[1].snippet).toContain('<mark>');
    store.close();
  });
});

describe('property: words placed anywhere in a long event are all found by one query', () => {
  it('given two or three words at random offsets of a 300–800 KB text, when recall searches them together, then it finds the event once', () => {
    const word = fc.stringMatching(/^[a-z]{4,8}[0-9]{1,3}qz$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(word, { minLength: 2, maxLength: 3 }),
        fc.integer({ min: 300_000, max: 800_000 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }),
        (words, length, offsets) => {
          let text = filler(length, 'p');
          const placed = words.map((w, i) => ({ w, at: Math.floor(offsets[i] * text.length) })).sort((a, b) => b.at - a.at);
          for (const { w, at } of placed) {
            const cut = text.lastIndexOf(' ', at);
            text = `${text.slice(0, cut + 1)}${w} ${text.slice(cut + 1)}`;
          }
          const log = new RecordedSessionLog();
          log.append('p', user('before', words[0]));
          log.append('p', tool('t', 'c', 'dump', text));
          log.append('p', user('after', words.slice(1).join(' ')));
          const store = projectedReadModels(log);
          const { items } = searchRecall(store, { tenantId: 'default', q: words.join(' ') });
          expect(items.map((h) => h.eventId)).toEqual(['t']);
          expect(items[0].snippet).toMatch(/<mark>/);
          store.close();
        },
      ),
      { numRuns: RUNS },
    );
  });
});
