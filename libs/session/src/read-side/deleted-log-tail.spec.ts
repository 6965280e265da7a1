/**
 * A log that ends with deleted events (an erasure interrupted after its stream deletion, before
 * its `SessionErased` record). The store's head still counts them (`headPosition` is the highest
 * position ever assigned), so a projector that never read them has nothing left to read below
 * the head: it takes the head as its checkpoint once a read of the log finds nothing up to it,
 * so `waitForPosition(head)`, the start-up catch-up (readiness) and a rebuild end there instead of
 * waiting for the next append. It never skips an event that exists.
 */
import { randomUUID } from 'node:crypto';
import { SqliteEventStore, type EventData, type EventStore, type RecordedEvent, type Subscription } from '@lib/event-store';
import { CONVERSATION_EVENT, sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { getWindow } from './queries/window-query';
import { user } from './testing/recorded-session-log';

const ERASED = sessionStream(sessionKey('t', 'erased'));
const KEPT = sessionStream(sessionKey('t', 'kept'));

const conversation = (id: string, text: string): EventData => ({
  id: randomUUID(),
  type: CONVERSATION_EVENT,
  data: { event: user(id, text), costs: { chars: text.length, cl100k_base: 1, o200k_base: 1 } },
});

/** A log with session `kept` (2 events) then session `erased` (3 events) whose stream is deleted, as the erase handler does, and no erasure record. */
async function logEndingWithDeletedStream(store: EventStore): Promise<bigint> {
  await store.appendToStream(KEPT, [conversation('k1', 'kept one'), conversation('k2', 'kept two')]);
  const erased = await store.appendToStream(ERASED, [conversation('e1', 'gone one'), conversation('e2', 'gone two'), conversation('e3', 'gone three')]);
  await store.deleteStream(ERASED, { expectedRevision: erased.nextExpectedRevision });
  expect(await store.headPosition()).toBe(erased.position);
  return erased.position;
}

/** `store`, whose subscriptions never show the events of `hidden` (as if deleted before the subscription read them). */
function hiding(store: EventStore, hidden: string): EventStore {
  return Object.assign(Object.create(store) as EventStore, {
    subscribeToAll: (options?: Parameters<EventStore['subscribeToAll']>[0]): Subscription => {
      const inner = store.subscribeToAll(options);
      return {
        close: () => inner.close(),
        async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
          for await (const event of inner) if (event.streamId !== hidden) yield event;
        },
      };
    },
  });
}

describe('SessionProjector on a log ending with deleted events', () => {
  const open: { store: EventStore; projector: SessionProjector }[] = [];
  const setup = () => {
    const entry = { store: SqliteEventStore.open(':memory:') as EventStore, projector: new SessionProjector(ReadModelStore.open(':memory:')) };
    open.push(entry);
    return entry;
  };
  afterEach(async () => {
    for (const { store, projector } of open.splice(0)) {
      await projector.stop();
      projector.store.close();
      await store.close();
    }
  });

  it('given a projector started after the deletion (a restarted or new replica), when it has read the log, then its checkpoint is the head and it reached the head', async () => {
    const { store, projector } = setup();
    const head = await logEndingWithDeletedStream(store);
    projector.start(store);
    expect(await projector.waitForPosition(head, 5000)).toBe(true);
    expect(projector.checkpoint()).toBe(head);
    expect(projector.reachedHeadOnce()).toBe(true);
    expect(getWindow(projector.store, 't', 'kept')?.entries.map((e) => e.event.id)).toEqual(['k1', 'k2']);
    expect(getWindow(projector.store, 't', 'erased')).toBeNull();
  });

  it('given a running projector that never read events deleted since, when something waits for the head, then it gets there', async () => {
    const { store, projector } = setup();
    await store.appendToStream(KEPT, [conversation('k1', 'kept one')]);
    projector.start(hiding(store, ERASED));
    expect(await projector.waitForPosition(await store.headPosition(), 5000)).toBe(true);
    const erased = await store.appendToStream(ERASED, [conversation('e1', 'gone one')]);
    await store.deleteStream(ERASED, { expectedRevision: erased.nextExpectedRevision });
    expect(await projector.waitForPosition(erased.position, 5000)).toBe(true);
    expect(projector.checkpoint()).toBe(erased.position);
    // The next append is applied as usual.
    const next = await store.appendToStream(KEPT, [conversation('k2', 'kept two')]);
    expect(await projector.waitForPosition(next.position, 5000)).toBe(true);
    expect(getWindow(projector.store, 't', 'kept')?.entries.map((e) => e.event.id)).toEqual(['k1', 'k2']);
  });

  it('given a rebuild, when the log ends with deleted events, then it ends at the head', async () => {
    const { store, projector } = setup();
    const head = await logEndingWithDeletedStream(store);
    expect(await projector.rebuild(store)).toBe(head);
    expect(projector.checkpoint()).toBe(head);
  });

  it('given deleted events before existing ones, when the projector catches up, then it applies every existing event', async () => {
    const { store, projector } = setup();
    await logEndingWithDeletedStream(store);
    const last = await store.appendToStream(KEPT, [conversation('k3', 'kept three')]);
    projector.start(store);
    expect(await projector.waitForPosition(last.position, 5000)).toBe(true);
    expect(getWindow(projector.store, 't', 'kept')?.entries.map((e) => e.event.id)).toEqual(['k1', 'k2', 'k3']);
  });
});
