/**
 * Recall's selective filters on a long session read the rows they pass, not every match of the
 * session (`recall-filter-candidates`): `archived=false` with `sessionId` reads the rows of the
 * session's active window entries (and a `compactionId` the rows `session_log_by_archive` lists for
 * that compaction). Shown without timing: rows of the archived middle of the session are marked
 * active behind the filter's back (`archived = 0`, `archived_by` kept, out of the window): a query
 * that walked the session's matches would answer them, one that starts from the filter's rows
 * never reads them. And the rows it starts from on the next pages of a paging include those
 * archived since its first page (they are active as of it). Answers on consistent read models
 * are the unfiltered answer restricted (see `recall-filter-equivalence.integration.spec`; here
 * also for an id appended again while active, whose window entry covers both of its rows).
 */
import { RECALL_RANKED_MATCH_LIMIT, searchRecall, type RecallHit, type RecallSearch } from './queries/recall-query';
import { ReadModelStore } from './read-model-store';
import { RECALL_FILTER_WALK_RATIO } from './recall-filter-candidates';
import { SessionProjector } from './session-projector';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, system, user } from './testing/recorded-session-log';

const EVENTS = RECALL_RANKED_MATCH_LIMIT + 100;

/** `long`: a system prompt, then {@link EVENTS} events holding `hotel` (ids `e0`, `e1`, …), all but the last 10 archived by `c1`. */
function longSession(): { log: RecordedSessionLog; ids: string[] } {
  const log = new RecordedSessionLog();
  log.append('long', system('sys', 'hotel prompt'));
  const ids = Array.from({ length: EVENTS }, (_, i) => `e${i}`);
  for (const id of ids) log.append('long', user(id, `hotel ${id}`));
  log.archive('long', 'c1', ids.slice(0, -10));
  log.completed('long', 'c1');
  return { log, ids };
}

/** {@link longSession} projected, three events of the middle marked active behind the index's back. */
function tamperedLongSession() {
  const { log, ids } = longSession();
  const store = projectedReadModels(log);
  const tampered = store.db.prepare("UPDATE session_log SET archived = 0 WHERE archived_by = 'c1' AND event_id IN ('e500', 'e1000', 'e1500')").run().changes;
  expect(tampered).toBe(3);
  return { store, recent: ids.slice(-10) };
}

function allPages(store: ReadModelStore, search: RecallSearch): RecallHit[] {
  const hits: RecallHit[] = [];
  let cursor = search.cursor;
  do {
    const page = searchRecall(store, { ...search, cursor });
    expect(page.order).toBe('newest');
    hits.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return hits;
}

describe('recall filters a long session from the rows they pass', () => {
  it('archived=false with sessionId reads the pinned prompt and the active events, never the archived events between them', () => {
    const { store, recent } = tamperedLongSession();
    const hits = allPages(store, { tenantId: 'default', q: 'hotel', sessionId: 'long', archived: false, limit: 4 });
    // newest first, the system prompt last; the session's first mention is archived, so no hit is marked
    expect(hits.map((h) => h.eventId)).toEqual([...recent.reverse(), 'sys']);
    expect(hits.filter((h) => h.firstMention)).toEqual([]);
    store.close();
  });

  it('archived=false with sessionId finds both rows of an id appended again while active', () => {
    const { log } = longSession();
    // Its two rows more than RECALL_FILTER_WALK_RATIO positions apart: the walk between candidates
    // reaches the first only when it is a candidate itself.
    const again = 'again';
    log.append('long', user(again, 'hotel first'));
    for (let i = 0; i <= RECALL_FILTER_WALK_RATIO; i++) log.append('other', user(`o${i}`, `hotel o${i}`));
    log.append('long', user(again, 'hotel second'));
    const store = projectedReadModels(log);
    const rowsOf = (hits: RecallHit[]) => hits.map((h) => `${h.eventId} ${h.snippet}`).sort();
    const active = allPages(store, { tenantId: 'default', q: 'hotel', sessionId: 'long', archived: false, limit: 5 });
    const all = allPages(store, { tenantId: 'default', q: 'hotel', sessionId: 'long', limit: 100 });
    expect(active.filter((h) => h.eventId === again)).toHaveLength(2);
    expect(rowsOf(active)).toEqual(rowsOf(all.filter((h) => !h.archived)));
    store.close();
  });

  it('archived=false with sessionId keeps, on the next pages, the events a compaction archived after the first page', () => {
    const { log, ids } = longSession();
    const store = ReadModelStore.open(':memory:');
    const projector = new SessionProjector(store);
    projector.applyBatch(log.events.splice(0));
    const search: RecallSearch = { tenantId: 'default', q: 'hotel', sessionId: 'long', archived: false, limit: 3 };
    const first = searchRecall(store, search);
    // the 7 oldest of the 10 active events are archived before the next pages
    log.archive('long', 'c2', ids.slice(-10, -3));
    log.completed('long', 'c2');
    projector.applyBatch(log.events.splice(0));
    const rest = allPages(store, { ...search, cursor: first.nextCursor });
    const recent = ids.slice(-10);
    expect([...first.items, ...rest].map((h) => h.eventId)).toEqual([...recent.reverse(), 'sys']);
    // each hit says what is true now
    expect(rest.filter((h) => h.archived).map((h) => h.compactionId)).toEqual(Array(7).fill('c2'));
    store.close();
  });
});
