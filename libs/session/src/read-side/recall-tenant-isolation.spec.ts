/**
 * Recall of one tenant never depends on another tenant's events (docs/configuration.md › API keys, "What tenants
 * share"). With one FTS5 index for every tenant, BM25's statistics (row count, average length,
 * each word's row count), the count that stops ranking a word of more than
 * `RECALL_RANKED_MATCH_LIMIT` events, and the rows a substring scan reads counted every tenant's
 * texts: tenant A could tell whether a word occurred in tenant B's events from the score of two
 * events of its own (`hunter2` in B's archived event scored A's event 12.484, a control word
 * 13.321), from its `order` flipping to `newest`, and from substring-scan pages of B's rows.
 */
import fc from 'fast-check';
import type { SessionEvent } from '@lib/compaction';
import { CONVERSATION_EVENT, type ConversationEventData } from '../events/session-stream-events';
import {
  RECALL_RANKED_MATCH_LIMIT,
  RECALL_SUBSTRING_SCAN_LIMIT,
  searchRecall,
  type RecallHit,
  type RecallPage,
  type RecallSearch,
} from './queries/recall-query';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { costs, RecordedSessionLog, user } from './testing/recorded-session-log';

const A = 'tenant-a';
const B = 'tenant-b';

/** A log of both tenants; every event of a tenant gets a `createdAt` from its own counter, so a tenant's events read the same with or without the other's. */
class TwoTenantLog {
  readonly log = new RecordedSessionLog(A);
  private readonly counters = new Map<string, number>();

  append(tenantId: string, sessionId: string, event: SessionEvent): void {
    const n = this.counters.get(tenantId) ?? 0;
    this.counters.set(tenantId, n + 1);
    const data: ConversationEventData = { event, costs: costs(10), createdAt: new Date(Date.UTC(2024, 4, 1) + n * 1000).toISOString() };
    this.log.record(sessionId, CONVERSATION_EVENT, data, tenantId);
  }
}

/** Every page of `search` (following `nextCursor`), as answered: items and whether a next page was offered. */
function allPages(store: ReadModelStore, search: RecallSearch): Array<{ order: RecallPage['order']; items: RecallHit[]; more: boolean }> {
  const pages: Array<{ order: RecallPage['order']; items: RecallHit[]; more: boolean }> = [];
  let cursor: string | undefined;
  do {
    const page = searchRecall(store, { ...search, cursor });
    pages.push({ order: page.order, items: page.items, more: page.nextCursor !== undefined });
    cursor = page.nextCursor;
  } while (cursor !== undefined && pages.length < 500);
  expect(cursor).toBeUndefined();
  return pages;
}

describe('recall of a tenant does not depend on other tenants’ events', () => {
  it.each([
    ['a Latin word (word index)', 'hunter2', 'zebra99'],
    ['a CJK word (trigram index)', '東京タワー', '大阪ドーム'],
  ])('scores %s exactly the same after another tenant writes it (and scores it as a control word)', (_, word, control) => {
    const two = new TwoTenantLog();
    two.append(A, 'a', user('with-word', `my password is ${word} here`));
    two.append(A, 'a', user('with-control', `my password is ${control} here`));
    two.append(A, 'a', user('other', 'nothing to see here at all'));
    const projector = new SessionProjector(ReadModelStore.open(':memory:'));
    projector.applyBatch(two.log.events);
    const score = (q: string) => {
      const page = searchRecall(projector.store, { tenantId: A, q });
      expect(page.order).toBe('relevance');
      expect(page.items).toHaveLength(1);
      return page.items[0].score;
    };
    const before = score(word);
    // Two events alike but for the word: the same score, whatever B writes.
    expect(score(control)).toBe(before);

    for (let i = 0; i < 5; i++) two.append(B, `b${i}`, user(`b${i}`, `the admin password ${word} again ${word}, see ${i}`));
    two.append(B, 'b-long', user('b-long', `${'filler words of another tenant '.repeat(50)} ${word}`));
    projector.applyBatch(two.log.events);
    expect(score(word)).toBe(before);
    expect(score(control)).toBe(before);
    projector.store.close();
  });

  it('keeps ranking a word another tenant writes in more than RECALL_RANKED_MATCH_LIMIT events', () => {
    const two = new TwoTenantLog();
    two.append(A, 'a', user('mine', 'the reservation ZX9Q7B is confirmed'));
    for (let i = 0; i <= RECALL_RANKED_MATCH_LIMIT; i++) two.append(B, `b${i % 7}`, user(`b${i}`, `reservation ${i}`));
    const store = ReadModelStore.open(':memory:');
    new SessionProjector(store).applyBatch(two.log.events);
    const page = searchRecall(store, { tenantId: A, q: 'reservation' });
    expect(page.order).toBe('relevance');
    expect(page.items.map((h) => [h.eventId, h.score > 0])).toEqual([['mine', true]]);
    // B's own search of its word is answered newest first: in B's index it is that common.
    expect(searchRecall(store, { tenantId: B, q: 'reservation' }).order).toBe('newest');
    store.close();
  });

  it('finds a tenant’s one substring hit on the first page although another tenant holds more than RECALL_SUBSTRING_SCAN_LIMIT CJK events', () => {
    const two = new TwoTenantLog();
    for (let i = 0; i <= RECALL_SUBSTRING_SCAN_LIMIT; i++) two.append(B, `b${i % 7}`, user(`b${i}`, `東京で会議 ${i}`));
    two.append(A, 'a', user('mine', '東京に行きます'));
    for (let i = 0; i < 20; i++) two.append(B, 'b-late', user(`late${i}`, `東京 ${i}`));
    const store = ReadModelStore.open(':memory:');
    new SessionProjector(store).applyBatch(two.log.events);
    const page = searchRecall(store, { tenantId: A, q: '東京' });
    expect(page.order).toBe('oldest');
    expect(page.items.map((h) => h.eventId)).toEqual(['mine']);
    expect(page.nextCursor).toBeUndefined();
    store.close();
  });
});

const SESSIONS = ['s0', 's1', 's2'];
const LATIN = ['kestrel', 'osprey', 'heron', 'plover', 'pad', 'hunter2'];
const CJK = ['東京', '東京タワー', '鶴', '😀', '서울에서'];
const QUERIES = ['kestrel', 'osprey heron', 'hunter2', 'plover kestrel pad', '東京タワー', '東京', '鶴 😀', '서울', '東京タワー kestrel', 'pad'];

describe('recall isolation (property)', () => {
  it('answers a tenant the same pages (hits, order, scores, snippets, next pages) with and without another tenant’s events', () => {
    const words = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...LATIN) }, { weight: 1, arbitrary: fc.constantFrom(...CJK) }), {
      minLength: 1,
      maxLength: 10,
    });
    const event = fc.record({ tenant: fc.constantFrom(A, B), session: fc.constantFrom(...SESSIONS), words });
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 60 }),
        fc.constantFrom(...QUERIES),
        fc.option(fc.constantFrom(...SESSIONS), { nil: undefined }),
        fc.integer({ min: 1, max: 4 }),
        (corpus, q, sessionId, limit) => {
          const numbered = corpus.map((e, i) => ({ ...e, id: `e${i}` }));
          const answers = [numbered, numbered.filter((e) => e.tenant === A)].map((events) => {
            const two = new TwoTenantLog();
            for (const e of events) two.append(e.tenant, e.session, user(e.id, e.words.join(' ')));
            const store = ReadModelStore.open(':memory:');
            new SessionProjector(store).applyBatch(two.log.events);
            const pages = allPages(store, { tenantId: A, q, sessionId, limit });
            store.close();
            return pages;
          });
          expect(answers[0]).toEqual(answers[1]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
