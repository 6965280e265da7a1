/**
 * What the decisions feed publishes of each log event (`decisionOf`): a compaction's closing event,
 * an archive on arrival (a late answer archived afterwards and attributed to a compaction, so a
 * feed auditor sees every event a compaction archived, as the history does), an erasure record;
 * nothing else (a compaction's own `EventsArchived` is in its closing event's `archivedIds`).
 */
import type { RecordedEvent } from '@lib/event-store';
import { COMPACTION_COMPLETED, COMPACTION_FAILED } from '@lib/session';
import { stateOf } from '../../../../libs/session/src/decider/testing/decider-spec';
import { compact, compactCommand } from '../../../../libs/session/src/decider/testing/compaction-spec';
import { reply as assistant, user as said } from '../../../../libs/session/src/decider/testing/session-events';
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

describe('decisionOf: what a decision feed auditor learns of the summarizer (ncsummarizer A1, A2)', () => {
  const turns = [said('u1'), assistant('a1'), said('u2'), assistant('a2'), said('u3'), assistant('a3')];
  const command = compactCommand({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 });
  /** The closing event of a compaction decided (by the decider) with the summarizer answering `outcome`, as the log records it. */
  function published(outcome: Parameters<typeof compact>[1]) {
    const { events } = compact(command, outcome)(stateOf(turns));
    const closing = events[events.length - 1];
    const event: RecordedEvent = {
      ...closing,
      id: String(closing.id),
      metadata: closing.metadata,
      streamId: 'session-default.s1',
      revision: 9n,
      position: 10n,
      created: new Date('2026-12-03T00:00:00.000Z'),
    };
    return decisionOf(event);
  }
  const spent = { calls: 2, promptTokens: 900, completionTokens: 90, retries: 1, unreportedUsageCalls: 1, answeredModels: ['gpt-4o-2024-08-06'] };

  it('a compaction carries the models the endpoint answered with, beside the configured one, and its summary against its budget', () => {
    const decision = published(() => ({ ok: true, text: 'a recap far longer than the few words it replaces '.repeat(20), ...spent }));
    expect(decision).toMatchObject({
      type: COMPACTION_COMPLETED,
      decision: {
        summarizer: { model: 'scripted', answeredModels: ['gpt-4o-2024-08-06'], calls: 2, retries: 1 },
        summaryBudget: { exceeded: true, overBudget: 'kept' },
      },
    });
  });

  it('a failure carries the models that answered (a reply it could not use) and no budget', () => {
    const decision = published(() => ({ ok: false, reason: 'the model refused to summarize (message.refusal set)', ...spent }));
    expect(decision?.type).toBe(COMPACTION_FAILED);
    expect(decision?.decision).toMatchObject({ summarizer: { answeredModels: ['gpt-4o-2024-08-06'] } });
    expect(decision?.decision).not.toHaveProperty('summaryBudget');
  });
});
