/**
 * The AppendedEventsObserver an append tells (ncimport A1: `events_appended_total`): the kinds of
 * the conversation events each append wrote, whether the session has a policy or not (the event
 * bus is not published on without one); nothing for a retry or a refused append.
 */
import type { EventBus } from '@nestjs/cqrs';
import type { SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { SessionStateCache } from './session-state-cache';

describe('the AppendedEventsObserver of appends', () => {
  let store: SqliteEventStore;
  let told: Array<ReadonlyArray<SessionEvent['type']>>;
  let handler: AppendSessionEventsHandler;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    told = [];
    handler = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus, {
      appended: (types) => told.push(types),
    });
  });
  afterEach(() => store.close());

  const events: SessionEvent[] = [
    { id: 's', type: 'system', text: 'be brief' },
    { id: 'u', type: 'user', text: 'weather?' },
    { id: 'a', type: 'assistant', text: null, toolCalls: [{ id: 'c', name: 'weather', arguments: '{}' }] },
    { id: 't', type: 'tool', responses: [{ toolCallId: 'c', name: 'weather', data: '' }] },
  ];
  const append = (list: SessionEvent[]) =>
    handler.execute(
      new AppendSessionEventsCommand(
        't',
        'plain',
        list.map((event) => ({ event })),
      ),
    );

  it('given a session without a policy, when events are appended, then it is told their kinds in order; a retry or a refused append tells nothing', async () => {
    await append(events.slice(0, 2));
    await append(events.slice(2));
    expect(told).toEqual([
      ['system', 'user'],
      ['assistant', 'tool'],
    ]);
    await append(events.slice(0, 2)); // a retry
    await append(events.slice(1, 3)); // a run of stored events spanning two requests: a retry too
    await expect(append([...events.slice(3), { id: 'u2', type: 'user', text: 'and tomorrow?' }])).rejects.toThrow(); // stored and new: 409
    expect(told).toHaveLength(2);
  });
});
