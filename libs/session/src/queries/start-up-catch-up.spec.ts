/**
 * A replica that starts on an existing log (or a read model file far behind it) serves no read
 * from read models that have not yet caught up once: a read waits for the log's head, then answers
 * from complete read models; when the store cannot be read, the read answers that it cannot tell
 * (503), never a 404 for a session that exists.
 */
import type { EventBus } from '@nestjs/cqrs';
import { EventStoreUnavailableError, SqliteEventStore, type EventStore, type RecordedEvent, type Subscription } from '@lib/event-store';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { AcknowledgedPositions } from '../write-side/acknowledged-positions';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from '../write-side/append-session-events';
import { SessionStateCache } from '../write-side/session-state-cache';
import { DEFAULT_SESSION_SETTINGS } from '../write-side/auto-compaction';
import { SessionReads } from './session-reads';

/** `store` whose subscriptions deliver nothing until `open()` (a projector stuck in its catch-up). */
function heldSubscriptions(store: EventStore): { store: EventStore; open: () => void } {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const held: EventStore = Object.assign(Object.create(store) as EventStore, {
    subscribeToAll: (options?: Parameters<EventStore['subscribeToAll']>[0]): Subscription => {
      const inner = store.subscribeToAll(options);
      return {
        close: () => inner.close(),
        async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
          await gate;
          yield* inner;
        },
      };
    },
  });
  return { store: held, open };
}

describe('reads of a replica that has not caught up with the log since it started', () => {
  let store: SqliteEventStore;
  beforeEach(async () => {
    store = SqliteEventStore.open(':memory:');
    // Written before this replica starts (by another replica, or before a restart on fresh read models).
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus);
    await append.execute(new AppendSessionEventsCommand('t', 'existing', [{ event: { id: 'u1', type: 'user', text: 'hello' } }]));
  });
  afterEach(async () => {
    await store.close();
  });

  const replica = (seen: EventStore, maxWaitMs: number) => {
    const projector = new SessionProjector(ReadModelStore.open(':memory:'));
    projector.start(seen);
    const reads = new SessionReads(seen, projector.store, projector, { ...DEFAULT_SESSION_SETTINGS, maxWaitMs }, new AcknowledgedPositions());
    return { projector, reads };
  };

  it('given the projector still catching up, when a session that exists is read, then the read waits and finds it', async () => {
    const held = heldSubscriptions(store);
    const { projector, reads } = replica(held.store, 5000);
    const read = reads.window('t', 'existing', { format: 'events', estimator: 'chars' });
    setTimeout(held.open, 50);
    await expect(read).resolves.toMatchObject({ sessionId: 'existing', revision: '0' });
    await projector.stop();
  });

  it('given the projector stuck behind, when the wait runs out, then the read answers 503 projection_behind, not 404', async () => {
    const held = heldSubscriptions(store);
    const { projector, reads } = replica(held.store, 100);
    const refused = await reads.window('t', 'existing', { format: 'events', estimator: 'chars' }).catch((e: unknown) => e);
    // It names no minPosition: the client sent none.
    expect(refused).toMatchObject({ code: 'projection_behind', details: { catchingUpTo: expect.any(String), checkpoint: '0' } });
    expect((refused as Error).message).toMatch(
      /^this service process started recently and its read models are still catching up with the log \(at position 0 of \d+\)/,
    );
    held.open();
    await projector.stop();
  });

  it('given a store that cannot be read since start, when a session is read, then the read answers that the store is unavailable', async () => {
    const down: EventStore = Object.assign(Object.create(store) as EventStore, {
      headPosition: () => Promise.reject(new EventStoreUnavailableError('connection refused')),
      subscribeToAll: (): Subscription => ({
        close: async () => undefined,
        // eslint-disable-next-line require-yield
        async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
          throw new EventStoreUnavailableError('connection refused');
        },
      }),
    });
    const { projector, reads } = replica(down, 100);
    await expect(reads.window('t', 'existing', { format: 'events', estimator: 'chars' })).rejects.toBeInstanceOf(EventStoreUnavailableError);
    await projector.stop();
  });

  it('readiness follows the same rule without waiting: not ready while catching up (store_unavailable while the store is down then), ready once caught up, also while the store is down', async () => {
    let down = false;
    const flaky: EventStore = Object.assign(Object.create(store) as EventStore, {
      headPosition: () => (down ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) : store.headPosition()),
    });
    const held = heldSubscriptions(flaky);
    // maxWaitMs long: ready() must answer at once, not after a wait.
    const { projector, reads } = replica(held.store, 60_000);
    const started = Date.now();
    const behind = await reads.ready().catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(behind).toMatchObject({ code: 'projection_behind', details: { catchingUpTo: '1', checkpoint: '0' } });
    down = true;
    expect(await reads.ready().catch((e: unknown) => e)).toBeInstanceOf(EventStoreUnavailableError);
    down = false;
    held.open();
    await projector.waitForPosition(1n, 5000);
    await expect(reads.ready()).resolves.toBeUndefined();
    // Caught up once: a read no longer waits for the start-up catch-up, and readiness stays, also while the store is down
    // (reads are served from the read models; writes answer 503 themselves).
    await expect(reads.window('t', 'existing', { format: 'events', estimator: 'chars' })).resolves.toMatchObject({ revision: '0' });
    down = true;
    await expect(reads.ready()).resolves.toBeUndefined();
    await expect(reads.window('t', 'existing', { format: 'events', estimator: 'chars' })).resolves.toMatchObject({ revision: '0' });
    down = false;
    await expect(reads.ready()).resolves.toBeUndefined();
    await projector.stop();
  });

  it('a read that waited for the catch-up makes the replica ready: one rule, one state', async () => {
    const held = heldSubscriptions(store);
    const { projector, reads } = replica(held.store, 5000);
    expect(await reads.ready().catch((e: unknown) => e)).toMatchObject({ code: 'projection_behind' });
    const read = reads.window('t', 'existing', { format: 'events', estimator: 'chars' });
    setTimeout(held.open, 50);
    await read;
    await expect(reads.ready()).resolves.toBeUndefined();
    await projector.stop();
  });

  it('given the projector caught up with the log since start and no read served yet, when the store goes down, then reads answer from the read models', async () => {
    let down = false;
    const flaky: EventStore = Object.assign(Object.create(store) as EventStore, {
      headPosition: () => (down ? Promise.reject(new EventStoreUnavailableError('connect ECONNREFUSED 127.0.0.1:5432')) : store.headPosition()),
    });
    const { projector, reads } = replica(flaky, 100);
    // Only writes so far (none of them a read nor a readiness probe): the projector has applied the log.
    expect(await projector.waitForPosition(1n, 5000)).toBe(true);
    down = true;
    await expect(reads.window('t', 'existing', { format: 'events', estimator: 'chars' })).resolves.toMatchObject({ sessionId: 'existing', revision: '0' });
    await expect(reads.log('t', 'existing', 0n, 10)).resolves.toMatchObject({ events: [expect.objectContaining({ eventId: 'u1' })] });
    await projector.stop();
  });
});
