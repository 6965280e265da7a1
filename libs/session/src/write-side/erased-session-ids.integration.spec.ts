/**
 * A session erased and written again under the same id, with the same client ids (issue: silent
 * data loss on KurrentDB). KurrentDB's soft delete keeps the deleted events' ids, and the server
 * answers an append of them to the stream as an idempotent replay of the deleted events: success,
 * nothing written (kurrent-io/KurrentDB#4058). The write side derives every id in the stream's
 * incarnation (`EventStore.streamIncarnation`, see `session-ids`), so the new life of the session
 * never sends those ids, while a retry within one life still derives the same ids.
 *
 * There is no KurrentDB server here: {@link softDeletingStore} gives a SQLite store KurrentDB's
 * answer to those ids. SQLite and PostgreSQL themselves remove the erased rows and so have no such
 * gap: the same flow is run on them (real stores) as evidence that it holds there too.
 */
import { randomUUID } from 'node:crypto';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy } from '@lib/compaction';
import {
  SqliteEventStore,
  deterministicEventId,
  type AppendOptions,
  type AppendResult,
  type DeleteStreamOptions,
  type EventData,
  type EventStore,
} from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../../event-store/test/postgres-test-database';
import { sessionKey, sessionStream, CONVERSATION_EVENT, POLICY_SET } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionCommand, EraseSessionHandler } from './erase-session';
import { SessionStateCache } from './session-state-cache';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';

const noBus = { publish: () => undefined } as unknown as EventBus;

/**
 * `store`, answering as KurrentDB does after a soft delete: the ids of a deleted stream's events
 * stay known, and an append made only of them to that stream is answered with the deleted events'
 * result without writing anything (kurrent-io/KurrentDB#4058).
 */
function softDeletingStore(store: EventStore): EventStore {
  const deletedIds = new Map<string, Map<string, AppendResult>>();
  return Object.assign(Object.create(store) as EventStore, {
    deleteStream: async (stream: string, options?: DeleteStreamOptions) => {
      const events = await store.readStream(stream);
      await store.deleteStream(stream, options);
      const known = deletedIds.get(stream) ?? new Map<string, AppendResult>();
      for (const e of events) known.set(e.id, { nextExpectedRevision: e.revision, position: e.position });
      deletedIds.set(stream, known);
    },
    appendToStream: async (stream: string, events: EventData[], options?: AppendOptions) => {
      const known = deletedIds.get(stream);
      if (known && events.every((e) => known.has(e.id.toLowerCase()))) return known.get(events[events.length - 1].id.toLowerCase())!;
      return store.appendToStream(stream, events, options);
    },
  });
}

/** The write side of one service over `store`, with a projector for the erasure to wait on. */
function service(store: EventStore) {
  const cache = new SessionStateCache(store);
  const projector = new SessionProjector(ReadModelStore.open(':memory:'));
  projector.start(store);
  return {
    append: new AppendSessionEventsHandler(store, cache, noBus),
    policy: new SetCompactionPolicyHandler(store, cache, new ExtractiveSummarizer()),
    erase: new EraseSessionHandler(store, cache, projector),
    stop: () => projector.stop(),
  };
}

const say = (sessionId: string, ...ids: string[]) =>
  new AppendSessionEventsCommand(
    't',
    sessionId,
    ids.map((id) => ({ event: { id, type: 'user' as const, text: `text of ${id}` } })),
  );

/** The flows run on each store: every one fails when ids do not depend on the stream's incarnation and the store keeps erased ids. */
function erasedSessionFlows(name: string, open: () => Promise<EventStore>, close: (store: EventStore) => Promise<void>) {
  describe(`a session erased and written again with the same client ids (${name})`, () => {
    let store: EventStore;
    let write: ReturnType<typeof service>;
    beforeEach(async () => {
      store = await open();
      write = service(store);
    });
    afterEach(async () => {
      await write.stop();
      await close(store);
    });

    it('writes the new events (not taken for a replay of the erased ones), and a retry of that append is answered with its result', async () => {
      const session = `s-${randomUUID()}`;
      const stream = sessionStream(sessionKey('t', session));
      const before = await write.append.execute(say(session, 'u1', 'u2'));
      expect(before.revision).toBe('1');
      await write.erase.execute(new EraseSessionCommand('t', session));
      expect(await store.readStream(stream)).toEqual([]);

      const again = await write.append.execute(say(session, 'u1', 'u2'));
      const stored = await store.readStream(stream);
      expect(stored.map((e) => (e.data as { event: { id: string } }).event.id)).toEqual(['u1', 'u2']);
      // Revisions continue after the erased ones (never reused); the ids are not the erased events'.
      expect(stored.map((e) => e.revision)).toEqual([2n, 3n]);
      expect(again).toMatchObject({ revision: '3', position: stored[1].position.toString() });

      // A retry in the same life of the session derives the same ids: answered, nothing written again.
      expect(await write.append.execute(say(session, 'u1', 'u2'))).toEqual(again);
      // Also by another process (its own cache: the state loaded from the store, incarnation included).
      expect(await new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus).execute(say(session, 'u1', 'u2'))).toEqual(again);
      expect(await store.readStream(stream)).toHaveLength(2);
    });

    it.each([
      [9, 2],
      [99, 2],
    ])(
      'answers a resend of the first append after an erasure sent with no_stream with its original result, also when the new revisions gain a digit (%i erased, %i new)',
      async (erased, written) => {
        const session = `s-${randomUUID()}`;
        const old = Array.from({ length: erased }, (_, i) => `o${i}`);
        const fresh = Array.from({ length: written }, (_, i) => `n${i}`);
        await write.append.execute(say(session, ...old));
        await write.erase.execute(new EraseSessionCommand('t', session));
        const first = () => new AppendSessionEventsCommand('t', session, say(session, ...fresh).events, 'no_stream');
        const original = await write.append.execute(first());
        expect(original.revision).toBe(String(erased + written - 1));
        expect(await write.append.execute(first())).toEqual(original);
        // Also by another process, which loads the session from the store.
        expect(await new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus).execute(first())).toEqual(original);
        expect(await store.readStream(sessionStream(sessionKey('t', session)))).toHaveLength(written);
      },
    );

    it('writes the same policy again on a session re-created by it (the policy event of a session without a stream repeats its base revision, null)', async () => {
      const session = `s-${randomUUID()}`;
      const stream = sessionStream(sessionKey('t', session));
      const policy = () => new SetCompactionPolicyCommand('t', session, parseStrategy({ type: 'sliding-window', maxEvents: 10 }), null, 'chars');
      await write.policy.execute(policy());
      await write.erase.execute(new EraseSessionCommand('t', session));

      const again = await write.policy.execute(policy());
      const stored = await store.readStream(stream);
      expect(stored.map((e) => e.type)).toEqual([POLICY_SET]);
      expect(again).toMatchObject({ revision: stored[0].revision.toString(), position: stored[0].position.toString() });
    });

    it('derives ids of a session never erased as before (incarnation 0n): the stored ids are the earlier formula', async () => {
      const session = `s-${randomUUID()}`;
      await write.append.execute(say(session, 'u1'));
      const [stored] = await store.readStream(sessionStream(sessionKey('t', session)));
      expect(stored.type).toBe(CONVERSATION_EVENT);
      expect(stored.id).toBe(deterministicEventId('session-memory-compaction/event', `${sessionKey('t', session)}\u0000u1`));
    });
  });
}

erasedSessionFlows(
  'a store that keeps erased ids, as KurrentDB',
  async () => softDeletingStore(SqliteEventStore.open(':memory:')),
  (store) => store.close(),
);

erasedSessionFlows(
  'SQLite',
  async () => SqliteEventStore.open(':memory:'),
  (store) => store.close(),
);

const pgSkip = postgresUnavailableReason();
describeUnlessSkipped(pgSkip, 'runs the erased-session flows on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('erased_ids');
  });
  afterAll(async () => {
    await db?.drop();
  });
  erasedSessionFlows(
    'PostgreSQL',
    async () => PostgresEventStore.connect(db.url),
    (store) => store.close(),
  );
});
