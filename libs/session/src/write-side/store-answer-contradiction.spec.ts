/**
 * A store whose append check contradicts its own reads (newcomer ncsre: PostgreSQL's `es_append`
 * replaced by an older replica refused every write to an erased session with "wrong revision",
 * while reads said the session did not exist). The write loops reloaded, found the session
 * unchanged, and after 32 attempts answered 409 "other writers changed the session 32 times in a
 * row": untrue, nobody wrote. They now end with StoreAnswerContradictionError (500, logged) saying
 * what happened; a true conflict is still a 409.
 */
import { randomUUID } from 'node:crypto';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy } from '@lib/compaction';
import {
  SqliteEventStore,
  StoreAnswerContradictionError,
  WrongExpectedRevisionError,
  type AppendOptions,
  type EventData,
  type EventStore,
} from '@lib/event-store';
import { CONVERSATION_EVENT, POLICY_SET } from '../events/session-stream-events';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { storeEventIds } from '../domain/session-ids';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { SessionErasedMeanwhileError } from '../errors';
import { SessionStateCache } from './session-state-cache';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { MAX_CONTRADICTED_REFUSALS } from './store-answer-check';

const noBus = { publish: () => undefined } as unknown as EventBus;

/** `store`, whose appends at `no_stream` are refused as if the stream were at revision 0 (reads unchanged): an erased stream's old append function. */
function contradictingStore(store: EventStore): EventStore & { refusals: number } {
  const wrapped = Object.assign(Object.create(store) as EventStore, {
    refusals: 0,
    appendToStream: (stream: string, events: EventData[], options?: AppendOptions) => {
      if (options?.expectedRevision === 'no_stream') {
        wrapped.refusals++;
        return Promise.reject(new WrongExpectedRevisionError(stream, 'no_stream', 0n));
      }
      return store.appendToStream(stream, events, options);
    },
  });
  return wrapped;
}

describe('a store refusing the revision its own reads show', () => {
  let base: SqliteEventStore;
  beforeEach(() => {
    base = SqliteEventStore.open(':memory:');
  });
  afterEach(async () => {
    await base.close();
  });

  it('an append ends with StoreAnswerContradictionError after a few refusals, not 409 "other writers changed the session"', async () => {
    const store = contradictingStore(base);
    const handler = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    const error = await handler
      .execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: 'a', type: 'user', text: 'hi' } }]))
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StoreAnswerContradictionError);
    expect((error as Error).message).toMatch(
      /its own reads showed the stream at no_stream: its append check and its reads disagree \(no other writer moved the stream\); nothing was written/,
    );
    expect((error as Error).message).not.toMatch(/other writers changed/);
    expect(store.refusals).toBe(MAX_CONTRADICTED_REFUSALS);
    expect(await base.readStream('session-t.s')).toEqual([]);
  });

  it('a policy PUT too', async () => {
    const store = contradictingStore(base);
    const handler = new SetCompactionPolicyHandler(store, new SessionStateCache(store), new ExtractiveSummarizer());
    const put = new SetCompactionPolicyCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 10 }), null, 'chars');
    await expect(handler.execute(put)).rejects.toBeInstanceOf(StoreAnswerContradictionError);
  });

  it('a policy PUT refused because another writer of this process moved the session is a conflict, not a contradiction (the cached state it decided on moved meanwhile)', async () => {
    // Found by the concurrent-writers property (seed -129651551): the policy handler judged each
    // refusal against the shared cached state's revision read after the append, which another
    // client's append had already moved to the revision the store reported; three such refusals
    // ended the PUT with StoreAnswerContradictionError (500) instead of deciding again.
    const cache = new SessionStateCache(base);
    const appends = new AppendSessionEventsHandler(base, cache, noBus);
    await appends.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: 'u0', type: 'user', text: 'hi' } }]));
    let raced = 0;
    const racing = Object.assign(Object.create(base) as EventStore, {
      appendToStream: async (stream: string, events: EventData[], options?: AppendOptions) => {
        // Before each of the policy's first MAX_CONTRADICTED_REFUSALS appends lands, another client
        // of this process appends (through the same cache, which folds it into the shared state).
        if (raced < MAX_CONTRADICTED_REFUSALS) {
          raced++;
          await appends.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${raced}`, type: 'user', text: 'more' } }]));
        }
        return base.appendToStream(stream, events, options);
      },
    });
    const handler = new SetCompactionPolicyHandler(racing, cache, new ExtractiveSummarizer());
    const put = new SetCompactionPolicyCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 10 }), null, 'chars');
    const answer = await handler.execute(put);
    expect(raced).toBe(MAX_CONTRADICTED_REFUSALS);
    expect(answer.revision).toBe(BigInt(MAX_CONTRADICTED_REFUSALS + 1).toString());
    const log = await base.readStream('session-t.s');
    expect(log.map((e) => e.type)).toEqual([...Array<string>(MAX_CONTRADICTED_REFUSALS + 1).fill(CONVERSATION_EVENT), POLICY_SET]);
  });

  it("a session's first append refused for its life (created and erased by others after it arrived) is refused 409 session_erased, not a contradiction", async () => {
    // The refusal is a WrongIncarnationError at `no_stream`, and the reload finds no stream again:
    // the revision did not move, the life did; a write is never applied to a life begun after it arrived.
    let raced = 0;
    const racing = Object.assign(Object.create(base) as EventStore, {
      appendToStream: async (stream: string, events: EventData[], options?: AppendOptions) => {
        if (raced < MAX_CONTRADICTED_REFUSALS) {
          raced++;
          await base.appendToStream(stream, [{ id: randomUUID(), type: CONVERSATION_EVENT, data: {} }]);
          await base.deleteStream(stream);
        }
        return base.appendToStream(stream, events, options);
      },
    });
    const handler = new AppendSessionEventsHandler(racing, new SessionStateCache(racing), noBus);
    await expect(handler.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: 'a', type: 'user', text: 'hi' } }]))).rejects.toBeInstanceOf(
      SessionErasedMeanwhileError,
    );
    expect(raced).toBe(1);
    expect(await base.readStream('session-t.s')).toEqual([]);
    // sent again, it is written in the session's life as it is now
    const again = new AppendSessionEventsHandler(base, new SessionStateCache(base), noBus);
    const answer = await again.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: 'a', type: 'user', text: 'hi' } }]));
    expect((await base.readStream('session-t.s')).map((e) => [e.revision, e.id])).toEqual([[1n, storeEventIds('t.s', 1n, 'a').id]]);
    expect(answer.revision).toBe('1');
  });
});
