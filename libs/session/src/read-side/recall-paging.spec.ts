/**
 * Recall paging while the read models change (newcomer report `repro-recall-cursor.sh`): a cursor
 * returns every hit of its first page's moment exactly once, in that page's order, whatever is
 * appended, compacted, archived or erased between pages. The relevance pages used to be keyed on
 * the last hit's absolute BM25 value, which moves for every row whenever the index grows.
 */
import { CursorOfAnotherReleaseError } from './cursor-of-another-release-error';
import { RECALL_RANKED_MATCH_LIMIT, searchRecall, type RecallHit, type RecallPage, type RecallSearch } from './queries/recall-query';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { assistant, RecordedSessionLog, system, user } from './testing/recorded-session-log';

/** A read model fed from a growing log: `sync()` projects what was appended since. */
class LiveRecall {
  readonly log = new RecordedSessionLog();
  readonly store = ReadModelStore.open(':memory:');
  readonly projector = new SessionProjector(this.store);

  sync(): this {
    this.projector.applyBatch(this.log.events);
    return this;
  }

  search(search: Omit<RecallSearch, 'tenantId'>): RecallPage {
    return searchRecall(this.store, { tenantId: 'default', ...search });
  }

  /** Follows `nextCursor` from the first page, calling `between(pageIndex)` after each page. */
  pages(search: Omit<RecallSearch, 'tenantId' | 'cursor'>, between: (page: number) => void = () => {}): RecallPage[] {
    const pages: RecallPage[] = [];
    let cursor: string | undefined;
    do {
      const page = this.search({ ...search, cursor });
      pages.push(page);
      between(pages.length);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 500);
    return pages;
  }
}

const key = (h: RecallHit) => `${h.sessionId}/${h.eventId}`;
const keys = (pages: RecallPage[]) => pages.flatMap((p) => p.items.map(key));

describe('recall paging returns the hits of its first page once each, whatever changes between pages', () => {
  it('given six hits paged by three, when a matching event is appended between pages, then page 2 is e4 e5 e6 (the repro: it was e3 e4 e5)', () => {
    const live = new LiveRecall();
    for (let i = 1; i <= 6; i++) live.log.append('rc', user(`e${i}`, `zqword ${'filler '.repeat(i)}`));
    live.sync();
    const all = live.search({ q: 'zqword', limit: 100 }).items.map((h) => h.eventId);
    expect(all).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    const first = live.search({ q: 'zqword', limit: 3 });
    expect(first.items.map((h) => h.eventId)).toEqual(['e1', 'e2', 'e3']);
    live.log.append('rc-other', user('x1', 'zqword again'));
    live.sync();
    const second = live.search({ q: 'zqword', limit: 3, cursor: first.nextCursor });
    expect(second.items.map((h) => h.eventId)).toEqual(['e4', 'e5', 'e6']);
    expect(second.nextCursor).toBeUndefined(); // x1 came after the first page: a new search finds it
    expect(live.search({ q: 'zqword', limit: 100 }).items.map((h) => h.eventId)).toContain('x1');
  });

  it('given a two-word query, when events change both IDFs and the average length between pages, then the pages are the first ranking, with its scores', () => {
    const live = new LiveRecall();
    // rows with different frequencies and lengths: the order of two rows can flip as the statistics move
    for (let i = 0; i < 30; i++)
      live.log.append(`s${i % 3}`, user(`m${i}`, `${'kestrel '.repeat(1 + (i % 4))}${'osprey '.repeat(1 + ((i * 7) % 5))}${'pad '.repeat((i * 11) % 13)}`));
    live.sync();
    const snapshot = live.search({ q: 'kestrel osprey', limit: 100 }).items;
    expect(snapshot).toHaveLength(30);
    let n = 0;
    const pages = live.pages({ q: 'kestrel osprey', limit: 4 }, () => {
      // kestrel grows common and the rows grow long: without the first page's statistics the
      // pages repeat and skip rows
      for (let k = 0; k < 5; k++) live.log.append('grow', user(`g${n++}`, `kestrel ${'longer text '.repeat(40)}`));
      live.sync();
    });
    expect(pages.every((p) => p.order === 'relevance')).toBe(true);
    expect(keys(pages)).toEqual(snapshot.map(key));
    expect(pages.flatMap((p) => p.items.map((h) => h.score))).toEqual(snapshot.map((h) => h.score));
  });

  it('given a session erased between pages, then its hits are gone and every other hit comes once, in order (a skip before)', () => {
    const live = new LiveRecall();
    for (let i = 1; i <= 6; i++) live.log.append('keep', user(`e${i}`, `zqword ${'filler '.repeat(i)}`));
    live.log.append('doomed', user('d1', `zqword ${'long '.repeat(30)}`));
    live.log.append('doomed', user('d2', 'nothing to find'));
    live.sync();
    const snapshot = live.search({ q: 'zqword', limit: 100 }).items.map(key);
    const pages = live.pages({ q: 'zqword', limit: 3 }, (page) => page === 1 && live.projector.eraseSession('default', 'doomed'));
    expect(snapshot.indexOf('doomed/d1')).toBeGreaterThanOrEqual(3); // not on the first page
    expect(keys(pages)).toEqual(snapshot.filter((k) => !k.startsWith('doomed/')));
  });

  it(`given a word found in ${RECALL_RANKED_MATCH_LIMIT} events, when it passes the ranked match limit between pages, then every page stays in relevance order and every hit comes once`, () => {
    const live = new LiveRecall();
    for (let i = 0; i < RECALL_RANKED_MATCH_LIMIT; i++) live.log.append(`n${i % 7}`, user(`m${i}`, `rising ${'filler '.repeat(i % 9)}${i}`));
    live.sync();
    const first = live.search({ q: 'rising', limit: 100 });
    expect(first.order).toBe('relevance');
    const snapshotScores = new Map(first.items.map((h) => [key(h), h.score]));
    let added = 0;
    const pages = live.pages({ q: 'rising', limit: 100 }, (page) => {
      if (page !== 1) return;
      for (let i = 0; i < 20; i++) live.log.append('late', user(`late${added++}`, 'rising again'));
      live.sync();
    });
    expect(live.search({ q: 'rising' }).order).toBe('newest'); // a new search: now too common to rank
    expect(pages.map((p) => p.order)).toEqual(pages.map(() => 'relevance'));
    const seen = keys(pages);
    expect(seen).toHaveLength(RECALL_RANKED_MATCH_LIMIT);
    expect(new Set(seen).size).toBe(RECALL_RANKED_MATCH_LIMIT);
    expect(seen.some((k) => k.startsWith('late/'))).toBe(false);
    // the first page's hits score on page 1 as the paging ranks them
    expect(pages[0].items.map((h) => snapshotScores.get(key(h)))).toEqual(pages[0].items.map((h) => h.score));
    const scores = pages.flatMap((p) => p.items.map((h) => h.score));
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('given newest order and a page of only the first mention, when the session gets a matching event, then the next pages do not hold it', () => {
    const live = new LiveRecall();
    for (let i = 0; i < RECALL_RANKED_MATCH_LIMIT + 10; i++) live.log.append(`w${i % 5}`, user(`m${i}`, `plentiful ${i}`));
    for (let i = 0; i < 4; i++) live.log.append('solo', user(`s${i}`, `plentiful solo ${i}`));
    live.sync();
    const search = { q: 'plentiful', sessionId: 'solo', limit: 1 };
    const snapshot = live.search({ ...search, limit: 100 });
    expect(snapshot.order).toBe('newest');
    const pages = live.pages(search, (page) => {
      if (page > 2) return;
      live.log.append('solo', user(`new${page}`, 'plentiful once more'));
      live.sync();
    });
    expect(pages[0].items[0]).toMatchObject({ eventId: 's0', firstMention: true });
    expect(pages.every((p) => p.order === 'newest')).toBe(true);
    expect(keys(pages)).toEqual(['solo/s0', 'solo/s3', 'solo/s2', 'solo/s1']);
    expect(keys(pages)).toEqual(snapshot.items.map(key));
  });

  it('given a substring query (oldest order), when matching events are appended between pages, then the paging ends at its first moment', () => {
    const live = new LiveRecall();
    for (let i = 0; i < 5; i++) live.log.append('jp', user(`k${i}`, `今日は鶴を見た ${i}`));
    live.sync();
    const pages = live.pages({ q: '鶴', limit: 2 }, () => {
      live.log.append('jp', user(`late${live.log.events.length}`, '鶴がまた来た'));
      live.sync();
    });
    expect(pages.every((p) => p.order === 'oldest')).toBe(true);
    expect(keys(pages)).toEqual(['jp/k0', 'jp/k1', 'jp/k2', 'jp/k3', 'jp/k4']);
  });

  it('given archived=false, when a compaction archives hits between pages, then they still come (the filter as of the first page) with their flags of now', () => {
    const live = new LiveRecall();
    live.log.append('c', system('sys', 'marmot rules'));
    for (let i = 0; i < 8; i++) live.log.append('c', user(`u${i}`, `marmot ${'x '.repeat(i)}`));
    live.sync();
    const snapshot = live.search({ q: 'marmot', archived: false, limit: 100 }).items.map(key);
    expect(snapshot).toHaveLength(9);
    const pages = live.pages({ q: 'marmot', archived: false, limit: 3 }, (page) => {
      if (page !== 1) return;
      live.log.archive('c', 'c1', ['u0', 'u1', 'u2', 'u3', 'u4', 'u5']);
      live.log.summary('c', 'c1', 'u6', 'marmot summary');
      live.log.completed('c', 'c1');
      live.sync();
    });
    expect(keys(pages)).toEqual(snapshot);
    expect(pages.slice(1).flatMap((p) => p.items.filter((h) => h.archived).map((h) => h.compactionId))).not.toHaveLength(0);
    // archived=true, the other way round: what was archived after the first page is not in its paging
    const archivedPages = live.pages({ q: 'marmot', archived: true, limit: 1 }, (page) => {
      if (page !== 1) return;
      live.log.archive('c', 'c2', ['u6', 'u7']);
      live.log.completed('c', 'c2');
      live.sync();
    });
    expect(keys(archivedPages).sort()).toEqual(['c/u0', 'c/u1', 'c/u2', 'c/u3', 'c/u4', 'c/u5']);
    expect(live.search({ q: 'marmot', compactionId: 'c2', limit: 100 }).items.map(key).sort()).toEqual(['c/u6', 'c/u7']);
  });

  it('refuses a cursor of the earlier release (version 1) with a message saying to search again', () => {
    const live = new LiveRecall();
    live.log.append('a', assistant('a1', 'zqword'));
    live.sync();
    const v1 = Buffer.from(JSON.stringify({ v: 1, r: -1.5, p: '1', f: 'abcdefghijklmnop' })).toString('base64url');
    let thrown: unknown;
    try {
      live.search({ q: 'zqword', cursor: v1 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CursorOfAnotherReleaseError);
    expect(thrown).toMatchObject({ parameter: 'cursor', code: 'cursor_expired' });
    expect((thrown as Error).message).toMatch(/^cursor: was made by an earlier release .* search again without cursor/);
  });
});
