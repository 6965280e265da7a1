/**
 * A resend is recognised whatever build wrote the original (newcomer ncsre, upgrade finding 1).
 * Builds from e92296e up to 3771ca3 kept a session's revisions after an erasure but derived its
 * event ids without the stream's incarnation; later builds derive them in it
 * (`deterministicEventIdForms`). A log written by such a build — a session erased and written
 * again — is built here through the store directly, with the ids that build gave ({@link legacyId}),
 * then the current write side gets a resend: it must be answered with the original result and
 * write nothing (docs/http-api.md "Ids and retries"), on SQLite and PostgreSQL. A reuse of a client id of
 * an erased life is still a new event (the stores delete an erased life's events).
 */
import { randomUUID } from 'node:crypto';
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, deterministicEventId, type EventStore } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../../event-store/test/postgres-test-database';
import { CONVERSATION_EVENT, sessionKey, sessionStream } from '../events/session-stream-events';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;

/** The id a build before 3771ca3 gave the conversation event `clientId` of session `key` (no incarnation, in any life). */
function legacyId(key: string, clientId: string): string {
  return deterministicEventId('session-memory-compaction/event', `${key}\u0000${clientId}`);
}

/** The events of a user message `id`, as the current write side stores them (data and metadata), read back from a scratch store. */
async function storedForm(sessionId: string, id: string) {
  const scratch = SqliteEventStore.open(':memory:');
  try {
    await new AppendSessionEventsHandler(scratch, new SessionStateCache(scratch), noBus).execute(say(sessionId, id));
    const [e] = await scratch.readStream(sessionStream(sessionKey('t', sessionId)));
    return { type: e.type, data: e.data, metadata: e.metadata };
  } finally {
    await scratch.close();
  }
}

const say = (sessionId: string, ...ids: string[]) =>
  new AppendSessionEventsCommand(
    't',
    sessionId,
    ids.map((id) => ({ event: { id, type: 'user' as const, text: `text of ${id}` } })),
  );

function flows(name: string, open: () => Promise<EventStore>) {
  describe(`a resend of an event written with the id form of builds before 3771ca3 (${name})`, () => {
    let store: EventStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    /** Session `sessionId` as a build from e92296e to 3771ca3 left it: written, erased, then m0 and m9 written again (revisions 1 and 2, ids without the incarnation). */
    async function writtenByOldBuild(sessionId: string) {
      const key = sessionKey('t', sessionId);
      const stream = sessionStream(key);
      const m0 = await storedForm(sessionId, 'm0');
      const m9 = await storedForm(sessionId, 'm9');
      await store.appendToStream(stream, [{ id: legacyId(key, 'm0'), ...m0 }], { expectedRevision: 'no_stream' });
      await store.deleteStream(stream);
      const original = await store.appendToStream(stream, [{ id: legacyId(key, 'm0'), ...m0 }], { expectedRevision: 'no_stream' });
      await store.appendToStream(stream, [{ id: legacyId(key, 'm9'), ...m9 }], { expectedRevision: original.nextExpectedRevision });
      expect(await store.streamIncarnation(stream)).toBe(1n);
      return { key, stream, original };
    }

    it('answers the resend with the original result and writes nothing (HTTP write side, a fresh process)', async () => {
      const session = `s-${randomUUID()}`;
      const { stream, original } = await writtenByOldBuild(session);
      const handler = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
      const answer = await handler.execute(say(session, 'm0'));
      expect(answer).toEqual({ revision: original.nextExpectedRevision.toString(), position: original.position.toString() });
      const stored = await store.readStream(stream);
      expect(stored.map((e) => (e.data as { event: { id: string } }).event.id)).toEqual(['m0', 'm9']);
      // A new event after the resend is written in the current form, after m9.
      expect(await handler.execute(say(session, 'm10'))).toMatchObject({ revision: '3' });
    });

    it('answers the resend at its own expectedRevision too (the client sends the revision it wrote at)', async () => {
      const session = `s-${randomUUID()}`;
      const { stream, original } = await writtenByOldBuild(session);
      const handler = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
      const resend = new AppendSessionEventsCommand('t', session, say(session, 'm0').events, 'no_stream');
      expect(await handler.execute(resend)).toEqual({ revision: original.nextExpectedRevision.toString(), position: original.position.toString() });
      expect(await store.readStream(stream)).toHaveLength(2);
    });

    it('the store takes an event stored under its former id in the same stream for a resend, never one of another stream', async () => {
      const session = `s-${randomUUID()}`;
      const { key, stream, original } = await writtenByOldBuild(session);
      const m0 = await storedForm(session, 'm0');
      // The current form of m0's id in the session's life 1, with the old one as its former id.
      const current = deterministicEventId('session-memory-compaction/event', `${key}\u0000m0`, 1n);
      expect(await store.appendToStream(stream, [{ id: current, formerIds: [legacyId(key, 'm0')], ...m0 }], { expectedRevision: 'any' })).toEqual(original);
      expect(await store.readStream(stream)).toHaveLength(2);
      // In another stream the former id names nothing of that stream: the event is written there.
      const other = sessionStream(sessionKey('t', `other-${randomUUID()}`));
      await expect(store.appendToStream(other, [{ id: randomUUID(), formerIds: [legacyId(key, 'm0')], ...m0 }])).resolves.toMatchObject({
        nextExpectedRevision: 0n,
      });
    });

    it('writes a client id of an ERASED life again as a new event (an erased life is never taken for a resend)', async () => {
      const session = `s-${randomUUID()}`;
      const { stream } = await writtenByOldBuild(session);
      await store.deleteStream(stream);
      const handler = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
      const again = await handler.execute(say(session, 'm0'));
      const stored = await store.readStream(stream);
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ type: CONVERSATION_EVENT, revision: 3n });
      expect(again.revision).toBe('3');
    });
  });
}

flows('SQLite', async () => SqliteEventStore.open(':memory:'));

const pgSkip = postgresUnavailableReason();
describeUnlessSkipped(pgSkip, 'runs the resend flows on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('resend_forms');
  });
  afterAll(async () => {
    await db?.drop();
  });
  flows('PostgreSQL', async () => PostgresEventStore.connect(db.url));
});
