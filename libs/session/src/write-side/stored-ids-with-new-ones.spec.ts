/**
 * A request that holds events already stored and new ones is refused 409 `duplicate_event_id`
 * naming the first stored id, nothing written (README "Importing existing conversations": send only
 * the events not stored yet), whatever kind the stored event is. Newcomer ncclient60 F1: a stored
 * tool answer resent with a new message was refused 422 `tool_call_conflict` ("call … is already
 * answered"), as if it were a second answer, where a stored user message got the 409 the README
 * names; a runtime resending its unacknowledged tail after a lost answer was told of a tool bug.
 * The same holds when the stored answer was archived by a compaction and the session is loaded
 * from its snapshot (a new process), through both namings of responses (`/events` as sent,
 * `/messages` from the calls), and for a large request counted off-thread.
 */
import type { SessionEvent } from '@lib/compaction';
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import type { EventBus } from '@nestjs/cqrs';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { computeEventCosts } from '../domain/event-costs';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { DuplicateEventIdConflictError } from '../errors';
import { INLINE_COUNT_LIMIT, sharedTokenCountingPool } from '../token-counting/token-counting-pool';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';
import { appendAs } from './testing/append-as';

const noBus = { publish: () => undefined } as unknown as EventBus;
const user = (id: string, text = `message ${id}`): SessionEvent => ({ id, type: 'user', text });
const call = (id: string, callId: string): SessionEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: [{ id: callId, name: 'lookup', arguments: '{}' }],
});
const answer = (id: string, callId: string, name = 'lookup'): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name, data: 'ok' }] });
const LARGE = 'word '.repeat(4_000);

describe('a request holding stored events and new ones', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
  });

  /** A new process: its own cache, so its first command loads the session from the store. */
  const process = () => new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
  const logIds = async (sessionId: string) => (await store.readStream(sessionStream(sessionKey('t', sessionId)))).map((e) => e.id);
  /** `u1`, a call `k1` by `a1` answered by `t1`, then `u2`, all through `handler`. */
  async function answered(handler: AppendSessionEventsHandler, sessionId: string): Promise<void> {
    await appendAs(handler, sessionId, [user('u1'), call('a1', 'k1'), answer('t1', 'k1')]);
    await appendAs(handler, sessionId, [user('u2')]);
  }
  /** Expects `sending` to be refused as a duplicate of `eventId` and the log to be as it was. */
  async function expectDuplicateOf(sessionId: string, eventId: string, sending: () => Promise<unknown>): Promise<void> {
    const before = await logIds(sessionId);
    const refusal = await sending().then(
      () => null,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(DuplicateEventIdConflictError);
    expect(refusal).toMatchObject({ code: 'duplicate_event_id', details: { eventId } });
    expect(await logIds(sessionId)).toEqual(before);
  }

  it('given an answered call in the window, when its answer is resent with a new message, then 409 names the answer and nothing is written; the new message alone is written', async () => {
    const writer = process();
    await answered(writer, 's1');
    await expectDuplicateOf('s1', 't1', () => appendAs(writer, 's1', [answer('t1', 'k1'), user('u3')]));
    await expectDuplicateOf('s1', 't1', () => appendAs(writer, 's1', [user('u3'), answer('t1', 'k1')]));
    // Another process, whose first load reads the store.
    await expectDuplicateOf('s1', 't1', () => appendAs(process(), 's1', [answer('t1', 'k1'), user('u3')]));
    await appendAs(writer, 's1', [user('u3')]);
    expect((await logIds('s1')).length).toBe(5);
  });

  it('given the same, when the answer is resent as /messages sends it (no name), then 409 names it', async () => {
    const writer = process();
    await answered(writer, 's2');
    const fromCalls = (events: SessionEvent[]) =>
      writer.execute(
        new AppendSessionEventsCommand(
          't',
          's2',
          events.map((event) => ({ event })),
          'any',
          undefined,
          'from-calls',
        ),
      );
    await expectDuplicateOf('s2', 't1', () => fromCalls([answer('t1', 'k1', ''), user('u3')]));
  });

  it('given the answered call archived by a compaction, when a new process resends the answer with a new message, then 409 names it and nothing is written', async () => {
    await answered(process(), 's3');
    await appendAs(process(), 's3', [user('u3')]);
    const compaction = await new CompactSessionHandler(store, new SessionStateCache(store), new ExtractiveSummarizer()).execute(
      new CompactSessionCommand('t', 's3', parseStrategy({ type: 'turn-window', maxTurns: 1 }), null, 'chars', false),
    );
    expect(compaction.outcome).toBe('compacted');
    await expectDuplicateOf('s3', 't1', () => appendAs(process(), 's3', [answer('t1', 'k1'), user('u4')]));
    await expectDuplicateOf('s3', 'a1', () => appendAs(process(), 's3', [call('a1', 'k1'), answer('t1', 'k1'), user('u4')]));
  });

  it('given the same in the window, when the new message is large (counted off-thread), then 409 names the stored answer', async () => {
    jest.spyOn(sharedTokenCountingPool(), 'eventCosts').mockImplementation(async (events) => events.map(computeEventCosts));
    expect(LARGE.length).toBeGreaterThan(INLINE_COUNT_LIMIT);
    const writer = process();
    await answered(writer, 's4');
    await expectDuplicateOf('s4', 't1', () => appendAs(writer, 's4', [answer('t1', 'k1'), user('u3', LARGE)]));
  });
});
