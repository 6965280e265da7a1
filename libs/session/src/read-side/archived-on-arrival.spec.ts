/**
 * The compaction history names the events archived on arrival attributed to a compaction (late
 * answers to calls it archived, DESIGN §3.3 rule 3) apart from what the decision archived, with
 * the revision and position of the `EventsArchived` that archived each, so that a compaction's
 * `archivedIds` and `archivedOnArrival` together are the log's events archived by it; read through
 * the compaction's own rows (`session_log_by_compaction`), not the session's log.
 */
import { ARCHIVED_ON_ARRIVAL_QUERY, getCompaction, listCompactions, pageCompactions } from './queries/compaction-history-query';
import { compactionHistoryItem } from './queries/compaction-history-item';
import { listLog } from './queries/session-log-query';
import { dumpReadModels } from './read-model-dump';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { inMemoryLogStore } from './testing/in-memory-log-store';
import { assistant, RecordedSessionLog, tool, user } from './testing/recorded-session-log';

/** s1: c1 archives a turn whose call k1 was abandoned; its answer r1 arrives later and is archived on arrival; then c2. */
function lateAnswerLog(): RecordedSessionLog {
  const log = new RecordedSessionLog();
  log.append('s1', user('u1', 'book it'));
  log.append('s1', { id: 'k', type: 'assistant', text: null, toolCalls: [{ id: 'k1', name: 'book', arguments: '{}' }] });
  log.append('s1', user('u2', 'never mind'));
  log.append('s1', assistant('a2', 'ok'));
  log.append('s1', user('u3', 'next'));
  log.archive('s1', 'c1', ['u1', 'k', 'u2', 'a2']);
  log.completed('s1', 'c1', ['u3']);
  log.append('s1', tool('r1', 'k1', 'book', 'CONFIRMED'));
  log.archiveOnArrival('s1', 'c1', ['r1']);
  log.append('s1', assistant('a3', 'done'));
  log.append('s1', user('u4', 'more'));
  log.archive('s1', 'c2', ['u3', 'a3']);
  log.completed('s1', 'c2', ['u4']);
  return log;
}

describe('events archived on arrival in the compaction history', () => {
  let store: ReadModelStore;
  beforeEach(() => {
    store = ReadModelStore.open(':memory:');
    new SessionProjector(store).applyBatch(lateAnswerLog().events);
  });
  afterEach(() => store.close());

  it('lists them with the compaction they are attributed to, apart from its archivedIds, on every read of the history', () => {
    const c1 = { eventId: 'r1', revision: 8n, position: 9n, at: '2024-05-01T00:00:09.000Z' };
    expect(listCompactions(store, 'default', 's1')!.map((c) => [c.compactionId, c.archivedIds, c.archivedOnArrival])).toEqual([
      ['c1', ['u1', 'k', 'u2', 'a2'], [c1]],
      ['c2', ['u3', 'a3'], []],
    ]);
    expect(pageCompactions(store, 'default', 's1', 1)!.compactions.map((c) => c.archivedOnArrival)).toEqual([[c1]]);
    expect(getCompaction(store, 'default', 's1', 'c1')!.archivedOnArrival).toEqual([c1]);
    expect(compactionHistoryItem(getCompaction(store, 'default', 's1', 'c1')!)).toMatchObject({
      archivedIds: ['u1', 'k', 'u2', 'a2'],
      archivedOnArrival: [{ eventId: 'r1', revision: '8', position: '9', at: '2024-05-01T00:00:09.000Z' }],
    });
  });

  it("names, with archivedIds, exactly the log's events archived by each compaction", () => {
    const log = listLog(store, 'default', 's1', 0n, 1000)!.events;
    for (const c of listCompactions(store, 'default', 's1')!) {
      const flagged = log.filter((e) => e.archivedBy === c.compactionId).map((e) => e.eventId);
      expect({ compaction: c.compactionId, ids: [...c.archivedIds, ...c.archivedOnArrival.map((a) => a.eventId)].sort() }).toEqual({
        compaction: c.compactionId,
        ids: flagged.sort(),
      });
      // The revision named is the log's EventsArchived that archived it.
      for (const a of c.archivedOnArrival)
        expect(log.find((e) => e.revision === a.revision)).toMatchObject({ type: 'EventsArchived', compactionId: c.compactionId, position: a.position });
    }
  });

  it('gives the same history after a rebuild from the log', async () => {
    const log = lateAnswerLog();
    const rebuilt = ReadModelStore.open(':memory:');
    await new SessionProjector(rebuilt, { rebuildPageSize: 3 }).rebuild(inMemoryLogStore(log.events));
    expect(listCompactions(rebuilt, 'default', 's1')!.map((c) => c.archivedOnArrival.map((a) => a.eventId))).toEqual([['r1'], []]);
    expect(listCompactions(rebuilt, 'default', 's1')).toEqual(listCompactions(store, 'default', 's1'));
    expect(dumpReadModels(rebuilt)).toEqual(dumpReadModels(store));
    rebuilt.close();
  });

  it("reads a compaction's own rows through session_log_by_compaction, not the rest of the session's log", () => {
    const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${ARCHIVED_ON_ARRIVAL_QUERY}`).all('k', 'c', 0) as Array<{ detail: string }>).map((r) => r.detail);
    expect(plan[0]).toMatch(/^SEARCH session_log USING INDEX session_log_by_compaction \(session_key=\? AND compaction_id=\?\)$/);
  });
});
