/**
 * What a compaction's diff reads of the decision from the read models (issue 14): the first
 * revision of the compaction's events, found through `session_log_by_compaction` (the planner,
 * without statistics, walked `session_log_by_revision` from the session's first revision instead:
 * every row before the compaction, 150 ms of the event loop in one stretch after 30,000 events),
 * and the decision's revision, estimator and late answers without decoding its archived ids.
 */
import { firstDecisionRevision, getCompaction, getCompactionDiffHead, FIRST_DECISION_REVISION_QUERY } from './queries/compaction-history-query';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { assistant, RecordedSessionLog, tool, user } from './testing/recorded-session-log';
import { sessionKey } from '../events/session-stream-events';

/** s1: 200 turns, then c1 archives all but the last (a call k1 abandoned among them), its late answer r1 archived on arrival; then c2. */
function longLog(): RecordedSessionLog {
  const log = new RecordedSessionLog();
  const archived: string[] = [];
  for (let t = 0; t < 200; t++) {
    log.append('s1', user(`u${t}`, `question ${t}`));
    log.append('s1', assistant(`a${t}`, `answer ${t}`));
    archived.push(`u${t}`, `a${t}`);
  }
  log.append('s1', { id: 'k', type: 'assistant', text: null, toolCalls: [{ id: 'k1', name: 'book', arguments: '{}' }] });
  log.append('s1', user('last', 'next'));
  log.archive('s1', 'c1', [...archived, 'k']);
  log.completed('s1', 'c1', ['last']);
  log.append('s1', tool('r1', 'k1', 'book', 'CONFIRMED'));
  log.archiveOnArrival('s1', 'c1', ['r1']);
  log.append('s1', user('more', 'more'));
  log.archive('s1', 'c2', ['last']);
  log.completed('s1', 'c2', ['more']);
  return log;
}

describe("a compaction diff's head", () => {
  let store: ReadModelStore;
  let log: RecordedSessionLog;
  beforeEach(() => {
    store = ReadModelStore.open(':memory:');
    log = longLog();
    new SessionProjector(store).applyBatch(log.events);
  });
  afterEach(() => store.close());

  it("finds the compaction's first revision through session_log_by_compaction, not by walking the session's log", () => {
    const prepare = jest.spyOn(store.db, 'prepare');
    expect(firstDecisionRevision(store, sessionKey('default', 's1'), 'c1')).toBe(402n);
    const sql = prepare.mock.calls.map(([text]) => text).find((text) => /MIN\(revision\)/.test(text));
    prepare.mockRestore();
    expect(sql).toBe(FIRST_DECISION_REVISION_QUERY);
    const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('k', 'c') as Array<{ detail: string }>).map((r) => r.detail);
    expect(plan[0]).toMatch(/^SEARCH session_log USING INDEX session_log_by_compaction \(session_key=\? AND compaction_id=\?\)$/);
  });

  it("answers what the compaction's whole record says: revision, estimator, recorded time, late answers; and its first revision", () => {
    for (const id of ['c1', 'c2']) {
      const record = getCompaction(store, 'default', 's1', id)!;
      expect(getCompactionDiffHead(store, 'default', 's1', id)).toEqual({
        revision: record.revision,
        firstRevision: firstDecisionRevision(store, sessionKey('default', 's1'), id),
        estimator: record.data.estimator,
        recordedAt: record.recordedAt,
        archivedOnArrival: record.archivedOnArrival,
      });
      // The store's time of its closing event (ncaudit56 F1), not its payload's completedAt (the deciding process's clock).
      const closing = log.events.find((e) => e.position === record.position)!;
      expect([closing.revision, record.recordedAt]).toEqual([record.revision, closing.created.toISOString()]);
      expect(record.recordedAt).not.toBe(record.at);
    }
    expect(getCompactionDiffHead(store, 'default', 's1', 'c1')!.archivedOnArrival.map((a) => a.eventId)).toEqual(['r1']);
  });

  it('is null where the record is: an unknown compaction, session, or another tenant', () => {
    expect(getCompactionDiffHead(store, 'default', 's1', 'nope')).toBeNull();
    expect(getCompactionDiffHead(store, 'default', 'nope', 'c1')).toBeNull();
    expect(getCompactionDiffHead(store, 'other', 's1', 'c1')).toBeNull();
  });
});
