import type { ReadModelStore } from './read-model-store';
import { RECALL_RANKED_MATCH_LIMIT, searchRecall, type RecallHit, type RecallSearch } from './queries/recall-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, assistant, user } from './testing/recorded-session-log';

const EVENTS = RECALL_RANKED_MATCH_LIMIT + 400;

/**
 * `EVENTS` events over three sessions, `long` holding most of them, interleaved; every text holds
 * `reservation` and `flight` (more than RECALL_RANKED_MATCH_LIMIT events: common, `newest`
 * order), every 7th `alpha` (ranked), and a unique token; the oldest third of `long` archived.
 */
function readModels(): ReadModelStore {
  const log = new RecordedSessionLog();
  const longIds: string[] = [];
  for (let k = 0; k < EVENTS; k++) {
    const session = k % 10 < 7 ? 'long' : k % 10 < 9 ? 'other1' : 'other2';
    const id = `e${k}`;
    const extra = k % 7 === 0 ? ` alpha${k % 3 === 0 ? ' alpha' : ''}` : '';
    log.append(session, (k % 2 ? assistant : user)(id, `hotel reservation flight${extra} tok${k}`));
    if (session === 'long') longIds.push(id);
  }
  log.archive('long', 'c1', longIds.slice(0, Math.floor(longIds.length / 3)));
  log.completed('long', 'c1');
  return projectedReadModels(log);
}

/** Every hit of the search, following `nextCursor` to the end. */
function allHits(store: ReadModelStore, search: RecallSearch): { hits: RecallHit[]; order: string } {
  const hits: RecallHit[] = [];
  let cursor: string | undefined;
  let order: string;
  do {
    const page = searchRecall(store, { ...search, cursor });
    order = page.order;
    hits.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { hits, order };
}

/** Counts the rows the store's cached statements hand back to JavaScript while `read` runs. */
function rowsReturned(store: ReadModelStore, read: () => unknown): number {
  let rows = 0;
  const statement = store.statement.bind(store);
  const spy = jest.spyOn(store, 'statement').mockImplementation((sql: string) => {
    const real = statement(sql);
    return new Proxy(real, {
      get(target, property) {
        if (property === 'all')
          return (...args: unknown[]) => {
            const result = target.all(...args);
            rows += result.length;
            return result;
          };
        if (property === 'get')
          return (...args: unknown[]) => {
            const result = target.get(...args);
            if (result !== undefined) rows++;
            return result;
          };
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  });
  try {
    read();
  } finally {
    spy.mockRestore();
  }
  return rows;
}

describe('recall limited to one session (capacity finding 3)', () => {
  const store = readModels();
  afterAll(() => store.close());

  it.each([
    ['reservation', 'newest'],
    ['reservation flight', 'newest'],
    ['alpha', 'relevance'],
    ['alpha reservation', 'relevance'],
    ['tok700', 'relevance'],
  ])('with sessionId answers the unfiltered hits of that session, its first mention first: %s', (q, order) => {
    for (const archived of [undefined, true]) {
      const unfiltered = allHits(store, { tenantId: 'default', q, archived, limit: 100 });
      const filtered = allHits(store, { tenantId: 'default', q, archived, sessionId: 'long', limit: 7 });
      expect([unfiltered.order, filtered.order]).toEqual([order, order]);
      const ofSession = unfiltered.hits.filter((hit) => hit.sessionId === 'long');
      expect(ofSession.length).toBeGreaterThan(0);
      const earliest = ofSession.reduce((a, b) => (b.createdAt < a.createdAt ? b : a));
      expect(filtered.hits[0]).toEqual({ ...earliest, firstMention: true });
      expect(filtered.hits.slice(1)).toEqual(ofSession.filter((hit) => hit !== earliest));
    }
  });

  it('reads a page of a common word in a long session without walking its other matches: rows handed back stay within a few per hit', () => {
    const limit = 20;
    const rows = rowsReturned(store, () => {
      const page = searchRecall(store, { tenantId: 'default', q: 'reservation', sessionId: 'long', limit });
      expect(page.items).toHaveLength(limit);
      expect(page.order).toBe('newest');
    });
    // Before read models 12 the snippets of a `newest` page came from one pass over every match
    // between the first mention and the newest hit: here ~1,700 rows.
    expect(rows).toBeLessThanOrEqual(2 * limit + 10);
  });
});
