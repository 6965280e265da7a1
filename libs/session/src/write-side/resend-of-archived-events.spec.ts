/**
 * A resend of events a compaction archived, decided by a process that loads the session from the
 * compaction's snapshot (its state knows only the events it folded): the resend is answered with
 * its original result, as on a fold of the whole log, not refused by the tool-call rules against
 * calls that came after it (docs/http-api.md "Ids and retries"; DESIGN §2 idempotent appends). A new append
 * that breaks the rules is still refused, and neither writes anything.
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { sessionKey, sessionStream, type ConversationEventData } from '../events/session-stream-events';
import { DuplicateEventIdConflictError, ToolCallConflictError, UserIdConflictError } from '../errors';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;
const user = (id: string): SessionEvent => ({ id, type: 'user', text: `message ${id}` });
const call = (id: string, callId: string): SessionEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: [{ id: callId, name: 'lookup', arguments: '{}' }],
});
const answer = (id: string, callId: string, data = 'ok'): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'lookup', data }] });

describe('a resend of archived events, decided on a state loaded from a compaction snapshot', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(() => store.close());

  /** A new process: its own cache, so its first command loads the session from the log. */
  const freshProcess = () => new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
  const append = (handler: AppendSessionEventsHandler, sessionId: string, ...events: SessionEvent[]) =>
    handler.execute(
      new AppendSessionEventsCommand(
        't',
        sessionId,
        events.map((event) => ({ event })),
      ),
    );
  /** Keeps the last turn only: everything before it is archived, and the compaction's snapshot is what later loads start from. */
  const compact = (sessionId: string) =>
    new CompactSessionHandler(store, new SessionStateCache(store), new ExtractiveSummarizer()).execute(
      new CompactSessionCommand('t', sessionId, parseStrategy({ type: 'turn-window', maxTurns: 1 }), null, 'chars', false),
    );
  const log = async (sessionId: string) =>
    (await store.readStream(sessionStream(sessionKey('t', sessionId)))).map((e) => [e.type, (e.data as Partial<ConversationEventData>).event?.id]);

  /** A call `k0` answered by `t1`, then both archived by a compaction (a later turn kept): the answer's result. */
  const answeredCallArchived = async (sessionId: string) => {
    const writer = freshProcess();
    await append(writer, sessionId, user('u1'), call('a1', 'k0'));
    const answered = await append(writer, sessionId, answer('t1', 'k0'));
    await append(writer, sessionId, user('u2'));
    expect((await compact(sessionId)).outcome).toBe('compacted');
    return answered;
  };

  it('given a call archived while open and a new call with its id, when the archived call is resent, then the answer is its original result and nothing is written', async () => {
    const writer = freshProcess();
    const original = await append(writer, 's1', user('u1'), call('a1', 'k0'));
    await append(writer, 's1', user('u2'));
    expect((await compact('s1')).outcome).toBe('compacted');
    await append(writer, 's1', call('a2', 'k0'));
    const before = await log('s1');

    await expect(append(freshProcess(), 's1', user('u1'), call('a1', 'k0'))).resolves.toEqual(original);
    expect(await log('s1')).toEqual(before);
  });

  it('given an answered call archived, when its answer is resent, then the answer is its original result and nothing is written', async () => {
    const original = await answeredCallArchived('s2');
    const before = await log('s2');

    await expect(append(freshProcess(), 's2', answer('t1', 'k0'))).resolves.toEqual(original);
    expect(await log('s2')).toEqual(before);
  });

  it('given the same state, when a new event breaks the tool-call rules, then it is still refused and nothing is written', async () => {
    await answeredCallArchived('s3');
    const before = await log('s3');

    await expect(append(freshProcess(), 's3', answer('t2', 'k0'))).rejects.toBeInstanceOf(ToolCallConflictError);
    // A resend together with a new event is not a resend: the stored id is refused first (README "Importing existing
    // conversations": 409 duplicate_event_id, send only what is not stored), then the new event alone by the rules.
    await expect(append(freshProcess(), 's3', answer('t1', 'k0'), answer('t2', 'k0'))).rejects.toMatchObject({
      code: 'duplicate_event_id',
      details: { eventId: 't1' },
    });
    expect(await log('s3')).toEqual(before);
  });

  it.each([
    { resentBy: 'without userId', userId: undefined, naming: 'as-sent' as const },
    { resentBy: 'with the owner', userId: 'al', naming: 'as-sent' as const },
    { resentBy: 'without userId, through /messages (responses named from calls)', userId: undefined, naming: 'from-calls' as const },
  ])(
    'given an owned session whose first request a compaction archived, when a new process gets it resent $resentBy, then the answer is its original result and nothing is written',
    async ({ userId, naming }) => {
      const writer = freshProcess();
      const request = [user('u1'), call('a1', 'k0'), answer('t1', 'k0'), { id: 'r1', type: 'assistant' as const, text: 'booked' }];
      const original = await writer.execute(
        new AppendSessionEventsCommand(
          't',
          `owned-${naming}-${String(userId)}`,
          request.map((event) => ({ event })),
          'any',
          'al',
        ),
      );
      await append(writer, `owned-${naming}-${String(userId)}`, user('u2'), { id: 'r2', type: 'assistant', text: 'ok' });
      expect((await compact(`owned-${naming}-${String(userId)}`)).outcome).toBe('compacted');
      const before = await log(`owned-${naming}-${String(userId)}`);

      const resent = request.map((event) => ({
        event: event.type === 'tool' && naming === 'from-calls' ? { ...event, responses: event.responses.map((r) => ({ ...r, name: '' })) } : event,
      }));
      await expect(
        freshProcess().execute(new AppendSessionEventsCommand('t', `owned-${naming}-${String(userId)}`, resent, 'any', userId, naming)),
      ).resolves.toEqual(original);
      expect(await log(`owned-${naming}-${String(userId)}`)).toEqual(before);
    },
  );

  it('given the same, when another user resends it, then it is refused as another user and nothing is written', async () => {
    const writer = freshProcess();
    const request = [user('u1'), { id: 'r1', type: 'assistant' as const, text: 'hi' }];
    await writer.execute(
      new AppendSessionEventsCommand(
        't',
        'owned-other',
        request.map((event) => ({ event })),
        'any',
        'al',
      ),
    );
    await append(writer, 'owned-other', user('u2'), { id: 'r2', type: 'assistant', text: 'ok' });
    await compact('owned-other');
    const before = await log('owned-other');

    await expect(
      freshProcess().execute(
        new AppendSessionEventsCommand(
          't',
          'owned-other',
          request.map((event) => ({ event })),
          'any',
          'bob',
        ),
      ),
    ).rejects.toBeInstanceOf(UserIdConflictError);
    expect(await log('owned-other')).toEqual(before);
  });

  it('given an archived answer, when its id is sent again with other content, then it is refused as a duplicate id and nothing is written', async () => {
    await answeredCallArchived('s4');
    const before = await log('s4');

    await expect(append(freshProcess(), 's4', answer('t1', 'k0', 'changed'))).rejects.toBeInstanceOf(DuplicateEventIdConflictError);
    expect(await log('s4')).toEqual(before);
  });
});
