/**
 * What an append publishes on the event bus (`SessionEventsAppended`, for the auto-compaction
 * scheduler): one event per append to a session that has an auto-compaction policy, carrying the
 * session and the revision written; nothing for a session without one (the scheduler has nothing to
 * do for it, and publishing cost every append the bus's work, issue 14).
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler, SessionEventsAppended } from './append-session-events';
import { SessionStateCache } from './session-state-cache';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';

const user = (id: string): SessionEvent => ({ id, type: 'user', text: `message ${id}` });

describe('the event an append publishes', () => {
  let store: SqliteEventStore;
  let published: unknown[];
  let handler: AppendSessionEventsHandler;
  let cache: SessionStateCache;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    published = [];
    cache = new SessionStateCache(store);
    handler = new AppendSessionEventsHandler(store, cache, { publish: (event: unknown) => published.push(event) } as unknown as EventBus);
  });
  afterEach(() => store.close());

  const append = (session: string, id: string) => handler.execute(new AppendSessionEventsCommand('t', session, [{ event: user(id) }]));

  it('given a session without a policy, when events are appended (new session, then cached state), then nothing is published', async () => {
    await append('plain', 'u1');
    await append('plain', 'u2');
    expect(published).toEqual([]);
  });

  it('given a session with a policy, when an event is appended, then one SessionEventsAppended names it and the revision written', async () => {
    await new SetCompactionPolicyHandler(store, cache, new ExtractiveSummarizer()).execute(
      new SetCompactionPolicyCommand('t', 'kept', parseStrategy({ type: 'sliding-window', maxEvents: 50 }), null, 'chars'),
    );
    await append('kept', 'u1');
    const answer = await append('kept', 'u2');
    expect(published).toHaveLength(2);
    expect(published[1]).toBeInstanceOf(SessionEventsAppended);
    expect(published[1]).toMatchObject({ tenantId: 't', sessionId: 'kept', revision: BigInt(answer.revision), hasPolicy: true });
  });

  it('given a session whose policy is removed, when an event is appended after, then nothing is published', async () => {
    const policy = new SetCompactionPolicyHandler(store, cache, new ExtractiveSummarizer());
    await policy.execute(new SetCompactionPolicyCommand('t', 'off', parseStrategy({ type: 'sliding-window', maxEvents: 50 }), null, 'chars'));
    await policy.execute(new SetCompactionPolicyCommand('t', 'off', null, null, 'chars'));
    await append('off', 'u1');
    expect(published).toEqual([]);
  });
});
