/**
 * A log that ends with deleted events: an erasure interrupted after its stream deletion, before
 * its `SessionErased` record. SQLite and PostgreSQL still count them in the head (the highest
 * position ever assigned), so a projector that never read them has nothing left to read below the
 * head. It takes the store's readable head as its checkpoint once a read finds nothing up to it,
 * so the start-up catch-up (readiness), `waitForPosition(head)` and a rebuild end there instead of
 * waiting for the next append; it never skips an event that exists.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore, type EventStore, type RecordedEvent, type Subscription } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { createTestDatabase, postgresUnavailableReason } from '../../../event-store/test/postgres-test-database';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { getWindow } from './queries/window-query';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { checkpointReaches, conversationEvent, withOverrides } from './testing/followed-store';

const ERASED = sessionStream(sessionKey('t', 'erased'));
const KEPT = sessionStream(sessionKey('t', 'kept'));
/** Long enough for any check of the tail on a loaded machine; the projector passes a deleted tail about 50 ms after it read the rest. */
const WITHIN_MS = 10_000;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const pgSkip = postgresUnavailableReason();
if (pgSkip) process.stderr.write(`${pgSkip}\n`);

/** A store of the kind named, and what releases it besides `close`. */
type Target = [string, () => Promise<{ store: EventStore; drop?: () => Promise<void> }>];
const targets: Target[] = [
  ['SQLite in memory', async () => ({ store: SqliteEventStore.open(':memory:') })],
  [
    'SQLite file with the writer thread',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'deleted-tail-'));
      dirs.push(dir);
      return { store: SqliteEventStore.open(join(dir, 'events.sqlite'), { writerThread: true, pollIntervalMs: 10 }) };
    },
  ],
  ...(pgSkip
    ? []
    : ([
        [
          'PostgreSQL',
          async () => {
            const db = await createTestDatabase('deleted_tail');
            return { store: PostgresEventStore.connect(db.url, { pollIntervalMs: 10 }), drop: () => db.drop() };
          },
        ],
      ] satisfies Target[])),
];

/** A log with session `kept` (2 events) then session `erased` (3 events) whose stream is deleted, as the erase handler does, and no erasure record; returns the head. */
async function logEndingWithDeletedStream(store: EventStore): Promise<bigint> {
  await store.appendToStream(KEPT, [conversationEvent('k1', 'kept one'), conversationEvent('k2', 'kept two')]);
  const erased = await store.appendToStream(ERASED, [
    conversationEvent('e1', 'gone one'),
    conversationEvent('e2', 'gone two'),
    conversationEvent('e3', 'gone three'),
  ]);
  await store.deleteStream(ERASED, { expectedRevision: erased.nextExpectedRevision });
  expect(await store.headPosition()).toBe(erased.position);
  return erased.position;
}

/** `store`, whose subscriptions never show the events of `hidden` (as if deleted before the subscription read them). */
function hiding(store: EventStore, hidden: string): EventStore {
  return withOverrides(store, {
    subscribeToAll: (options) => {
      const inner = store.subscribeToAll(options);
      return {
        close: () => inner.close(),
        async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
          for await (const event of inner) if (event.streamId !== hidden) yield event;
        },
      } satisfies Subscription;
    },
  });
}

const windowIds = (projector: SessionProjector, sessionId: string) => getWindow(projector.store, 't', sessionId)?.entries.map((e) => e.event.id);

describe.each(targets)('SessionProjector on a log ending with deleted events (%s)', (_name, open) => {
  let store: EventStore;
  let drop: (() => Promise<void>) | undefined;
  let projector: SessionProjector;
  beforeEach(async () => {
    ({ store, drop } = await open());
    projector = new SessionProjector(ReadModelStore.open(':memory:'));
  });
  afterEach(async () => {
    await projector.stop();
    projector.store.close();
    await store.close();
    await drop?.();
  });

  it('given a projector started after the deletion (a restarted or new replica), when it has read the log, then it reaches the head with nothing waiting for it: the start-up catch-up holds', async () => {
    const head = await logEndingWithDeletedStream(store);
    projector.start(store);
    expect(await checkpointReaches(projector, head, WITHIN_MS)).toBe(true);
    expect(projector.checkpoint()).toBe(head);
    expect(projector.reachedHeadOnce()).toBe(true);
    expect(windowIds(projector, 'kept')).toEqual(['k1', 'k2']);
    expect(getWindow(projector.store, 't', 'erased')).toBeNull();
  });

  it('given a running projector that never read events deleted since, when something waits for the head, then it gets there, and applies the next append as usual', async () => {
    await store.appendToStream(KEPT, [conversationEvent('k1', 'kept one')]);
    projector.start(hiding(store, ERASED));
    expect(await projector.waitForPosition(await store.headPosition(), WITHIN_MS)).toBe(true);
    const erased = await store.appendToStream(ERASED, [conversationEvent('e1', 'gone one')]);
    await store.deleteStream(ERASED, { expectedRevision: erased.nextExpectedRevision });
    expect(await projector.waitForPosition(erased.position, WITHIN_MS)).toBe(true);
    expect(projector.checkpoint()).toBe(erased.position);
    const next = await store.appendToStream(KEPT, [conversationEvent('k2', 'kept two')], { expectedRevision: 0n });
    expect(await projector.waitForPosition(next.position, WITHIN_MS)).toBe(true);
    expect(windowIds(projector, 'kept')).toEqual(['k1', 'k2']);
  });

  it('given a rebuild, when the log ends with deleted events, then it ends at the head', async () => {
    const head = await logEndingWithDeletedStream(store);
    expect(await projector.rebuild(store)).toBe(head);
    expect(projector.checkpoint()).toBe(head);
    expect(windowIds(projector, 'kept')).toEqual(['k1', 'k2']);
  });

  it('given deleted events before existing ones, when the projector catches up, then it applies every existing event', async () => {
    await logEndingWithDeletedStream(store);
    const last = await store.appendToStream(KEPT, [conversationEvent('k3', 'kept three')], { expectedRevision: 1n });
    projector.start(store);
    expect(await checkpointReaches(projector, last.position, WITHIN_MS)).toBe(true);
    expect(windowIds(projector, 'kept')).toEqual(['k1', 'k2', 'k3']);
  });
});
