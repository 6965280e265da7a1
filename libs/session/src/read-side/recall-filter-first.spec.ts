/**
 * Recall's selective filters on a long session read the rows they pass, not every match of the
 * session (`recall-filter-candidates`): `archived=false` with `sessionId` reads the session's rows
 * `session_log_by_archive` lists as not archived (and a `compactionId` the rows it lists for that
 * compaction). Shown without timing: rows of the archived middle of the session are marked active
 * behind the index's back (`archived = 0`, `archived_by` kept, so the index still lists them as
 * archived): a query that walked the session's matches would answer them, one that starts from
 * the index never reads them. Answers on consistent read models are the unfiltered answer
 * restricted (see `recall-filter-equivalence.integration.spec`).
 */
import { RECALL_RANKED_MATCH_LIMIT, searchRecall, type RecallHit, type RecallSearch } from './queries/recall-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, system, user } from './testing/recorded-session-log';

const EVENTS = RECALL_RANKED_MATCH_LIMIT + 100;

/** `long`: a system prompt, then {@link EVENTS} events holding `hotel`, all but the last 10 archived by `c1`, the middle of them marked active behind the index's back. */
function tamperedLongSession() {
  const log = new RecordedSessionLog();
  log.append('long', system('sys', 'hotel prompt'));
  const ids = Array.from({ length: EVENTS }, (_, i) => `e${i}`);
  for (const id of ids) log.append('long', user(id, `hotel ${id}`));
  log.archive('long', 'c1', ids.slice(0, -10));
  log.completed('long', 'c1');
  const store = projectedReadModels(log);
  const tampered = store.db.prepare("UPDATE session_log SET archived = 0 WHERE archived_by = 'c1' AND event_id IN ('e500', 'e1000', 'e1500')").run().changes;
  expect(tampered).toBe(3);
  return { store, recent: ids.slice(-10) };
}

function allPages(store: ReturnType<typeof tamperedLongSession>['store'], search: RecallSearch): RecallHit[] {
  const hits: RecallHit[] = [];
  let cursor: string | undefined;
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
    // the first mention (the oldest active event), then newest first, the system prompt last
    expect(hits.map((h) => h.eventId)).toEqual([recent[0], ...recent.slice(1).reverse(), 'sys']);
    expect(hits[0].firstMention).toBe(true);
    store.close();
  });
});
