/**
 * What the decisions feed publishes of each log event (`decisionOf`): a compaction's closing event,
 * an archive on arrival (a late answer archived afterwards and attributed to a compaction, so a
 * feed auditor sees every event a compaction archived, as the history does), an erasure record;
 * nothing else (a compaction's own `EventsArchived` is in its closing event's `archivedIds`).
 */
import { RecordedSessionLog, tool, user } from '../../../../libs/session/src/read-side/testing/recorded-session-log';
import { decisionOf } from './decision-feed-publisher';

describe('decisionOf', () => {
  const log = new RecordedSessionLog();
  const conversation = log.append('s1', user('u1', 'hi'));
  const archived = log.archive('s1', 'c1', ['u1']);
  const completed = log.completed('s1', 'c1');
  log.append('s1', tool('r1', 'k1', 'book', 'late'));
  const onArrival = log.archiveOnArrival('s1', 'c1', ['r1']);

  it('publishes an archive on arrival with the compaction it is attributed to', () => {
    expect(decisionOf(onArrival)).toEqual({
      type: 'EventsArchived',
      tenantId: 'default',
      sessionId: 's1',
      position: onArrival.position.toString(),
      revision: onArrival.revision.toString(),
      recordedAt: onArrival.created.toISOString(),
      decision: { compactionId: 'c1', archivedIds: ['r1'], onArrival: true },
    });
  });

  it("publishes a compaction's closing event, not its own EventsArchived nor conversation events", () => {
    expect(decisionOf(completed)).toMatchObject({ type: 'CompactionCompleted', sessionId: 's1', decision: { compactionId: 'c1' } });
    expect(decisionOf(archived)).toBeNull();
    expect(decisionOf(conversation)).toBeNull();
  });
});
