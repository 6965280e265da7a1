/**
 * The order of an append's checks when the client sends its own `expectedRevision` (docs/http-api.md
 * "Optimistic concurrency", "Ids and retries"):
 * - a resend of a request that was written (same ids, content and `expectedRevision`) answers its
 *   original `{ revision, position }`, whatever came after it: compactions (which may have archived
 *   it, and whose snapshot a process may have loaded the session from), other writers, or the same
 *   request written a moment before through another replica;
 * - any other request whose revision another writer moved past is refused 409
 *   `wrong_expected_revision`, before the rules that judge it against the session's state
 *   (tool calls, owner): those would judge it against a state the client has not seen.
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { CONVERSATION_EVENT, sessionKey, sessionStream, type ConversationEventData } from '../events/session-stream-events';
import { RevisionConflictError } from '../errors';
import { AppendSessionEventsCommand, AppendSessionEventsHandler, type AppendSessionEventsResult } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));
const user = (id: string): SessionEvent => ({ id, type: 'user', text: `message ${id}` });
const assistant = (id: string): SessionEvent => ({ id, type: 'assistant', text: `reply ${id}` });
const call = (id: string, callId: string): SessionEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: [{ id: callId, name: 'lookup', arguments: '{}' }],
});
const answer = (id: string, callId: string): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'lookup', data: 'ok' }] });
type Expected = bigint | 'no_stream' | 'stream_exists';

describe("an append with the client's expectedRevision", () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(() => store.close());

  /** A replica: its own cache on the shared store (or on `seen`, a view of it). */
  const replica = (seen: EventStore = store) => new AppendSessionEventsHandler(seen, new SessionStateCache(seen), noBus);
  const command = (expected: Expected | 'any', events: SessionEvent[], userId?: string) =>
    new AppendSessionEventsCommand(
      't',
      's',
      events.map((event) => ({ event })),
      expected,
      userId,
    );
  /** Keeps the last turn: the turns before it are archived; later loads by a new cache start from this compaction's snapshot. */
  const compact = async (maxTurns = 1) => {
    const answer = await new CompactSessionHandler(store, new SessionStateCache(store), new ExtractiveSummarizer()).execute(
      new CompactSessionCommand('t', 's', parseStrategy({ type: 'turn-window', maxTurns }), null, 'chars', false),
    );
    expect(answer.outcome).toBe('compacted');
  };
  const head = async () => (await store.streamRevision(STREAM))!;
  const conversationIds = async () =>
    (await store.readStream(STREAM)).filter((e) => e.type === CONVERSATION_EVENT).map((e) => (e.data as ConversationEventData).event.id);

  /** u1, a1, u2 written, then a compaction (archive + completion, revisions 3 and 4): the client saw revision 2. */
  const compactedAfterRevisionTwo = async () => {
    const writer = replica();
    for (const event of [user('u1'), assistant('a1'), user('u2')]) await writer.execute(command('any', [event]));
    expect(await head()).toBe(2n);
    await compact();
    expect(await head()).toBe(4n);
  };

  it('given a compaction after the revision, when the same append reaches two replicas and one writes it while the other decides, then both answer the one write', async () => {
    await compactedAfterRevisionTwo();
    const sent = () => command(2n, [assistant('a2')]);
    const a = replica();
    // Replica B loads the session (at revision 4) and decides; replica A writes the same request before B's write reaches the store.
    const aWrite: { answer?: Promise<AppendSessionEventsResult> } = {};
    const seenByB: EventStore = Object.create(store) as EventStore;
    seenByB.appendToStream = async (...args: Parameters<EventStore['appendToStream']>) => {
      aWrite.answer ??= a.execute(sent());
      await aWrite.answer;
      return store.appendToStream(...args);
    };
    const bAnswer = await replica(seenByB).execute(sent());
    const aAnswer = await aWrite.answer;
    expect(aAnswer).toEqual({ revision: '5', position: expect.any(String) });
    expect(bAnswer).toEqual(aAnswer);
    expect(await conversationIds()).toEqual(['u1', 'a1', 'u2', 'a2']);
  });

  it('given the append written after a compaction, then archived by another one, when a replica that loads from that snapshot gets the resend, then it answers the original', async () => {
    await compactedAfterRevisionTwo();
    const original = await replica().execute(command(2n, [assistant('a2')]));
    expect(original.revision).toBe('5');
    await replica().execute(command('any', [user('u3')]));
    await compact();
    const log = await store.readStream(STREAM);
    // A new replica's state comes from the last snapshot: a2 archived, so it knows neither its id nor its revision.
    expect(await replica().execute(command(2n, [assistant('a2')]))).toEqual(original);
    expect(await store.readStream(STREAM)).toEqual(log);
  });

  it("given another writer's event after the revision, when a new append also answers an unknown call, then 409 wrong_expected_revision (not 422 unknown_tool_call)", async () => {
    const writer = replica();
    await writer.execute(command('any', [user('u1')]));
    await writer.execute(command('any', [user('u2')]));
    const log = await store.readStream(STREAM);
    const refused = await replica()
      .execute(command(0n, [answer('t1', 'never-called')]))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RevisionConflictError);
    expect(refused).toMatchObject({ code: 'wrong_expected_revision', details: { expected: '0', actual: '1' } });
    expect(await store.readStream(STREAM)).toEqual(log);
  });

  it("given another writer's answer to a call after the revision, when a second answer comes with the revision seen before it, then 409 wrong_expected_revision (not tool_call_conflict)", async () => {
    const writer = replica();
    await writer.execute(command('any', [user('u1'), call('a1', 'k1')]));
    const seen = await head();
    await writer.execute(command('any', [answer('t1', 'k1')]));
    await expect(writer.execute(command(seen, [answer('t2', 'k1')]))).rejects.toMatchObject({
      code: 'wrong_expected_revision',
      details: { expected: String(seen), actual: String(seen + 1n) },
    });
  });

  it("given another writer's event after the revision, when a new append names another user than the owner, then 409 wrong_expected_revision (not user_id_conflict)", async () => {
    const writer = replica();
    await writer.execute(command('any', [user('u1')], 'ann'));
    await writer.execute(command('any', [user('u2')]));
    await expect(writer.execute(command(0n, [user('u3')], 'bob'))).rejects.toMatchObject({ code: 'wrong_expected_revision' });
  });

  it.each<Expected>([0n, 5n, 'no_stream'])(
    'given a request that gives one id to two events, whatever its revision (%s), then 400 invalid_request first, as for a field error, and nothing written',
    async (expected) => {
      const writer = replica();
      await writer.execute(command('any', [user('u1')]));
      await writer.execute(command('any', [user('u2')]));
      const log = await store.readStream(STREAM);
      const refused = await replica()
        .execute(command(expected, [user('x1'), assistant('x1')]))
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'invalid_request', location: { index: 1, field: 'id' } });
      expect(await store.readStream(STREAM)).toEqual(log);
    },
  );

  it("given ids in the log where the request's revision put them, when another user sends them with other content and a stale revision, then it is judged as a resend of them: 409 user_id_conflict (docs/http-api.md)", async () => {
    const writer = replica();
    await writer.execute(command('any', [user('e1'), user('e2')], 'alice'));
    await expect(replica().execute(command(0n, [{ id: 'e2', type: 'user', text: 'other content' }], 'bob'))).rejects.toMatchObject({
      code: 'user_id_conflict',
    });
    await expect(replica().execute(command(0n, [{ id: 'e2', type: 'user', text: 'other content' }]))).rejects.toMatchObject({ code: 'duplicate_event_id' });
    // A new id with the same stale revision: the revision first.
    await expect(replica().execute(command(0n, [user('e3')], 'bob'))).rejects.toMatchObject({ code: 'wrong_expected_revision' });
  });

  it('given a session that exists, when a new append sent with no_stream answers an unknown call, then 409 wrong_expected_revision', async () => {
    await replica().execute(command('any', [user('u1')]));
    await expect(replica().execute(command('no_stream', [answer('t1', 'never-called')]))).rejects.toMatchObject({
      code: 'wrong_expected_revision',
      details: { expected: 'no_stream', actual: '0' },
    });
  });

  it('given the first append sent with no_stream, archived by a compaction, when it is resent to a replica that loads from the snapshot, then it answers the original', async () => {
    const writer = replica();
    const original = await writer.execute(command('no_stream', [user('u1'), assistant('a1')]));
    await writer.execute(command('any', [user('u2')]));
    await compact();
    expect(await replica().execute(command('no_stream', [user('u1'), assistant('a1')]))).toEqual(original);
    expect(await conversationIds()).toEqual(['u1', 'a1', 'u2']);
  });

  it('given a resend at its revision with other content, then 409 duplicate_event_id, and a resend after another writer is still answered', async () => {
    await compactedAfterRevisionTwo();
    const original = await replica().execute(command(2n, [assistant('a2')]));
    await replica().execute(command('any', [user('u3')]));
    await expect(replica().execute(command(2n, [{ id: 'a2', type: 'assistant', text: 'other' }]))).rejects.toMatchObject({ code: 'duplicate_event_id' });
    expect(await replica().execute(command(2n, [assistant('a2')]))).toEqual(original);
  });
});
