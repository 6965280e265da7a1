/**
 * A resend (the same ids, no `expectedRevision`) is written with expected revision `any` in the life
 * of the state it was decided on (`AppendOptions.incarnation`): the store answers the original result
 * by its ids. When another replica erases the session between this process's load and that write
 * (and perhaps another client writes it again), the store refuses it for its life, and it is decided
 * again on the session's current life, with that life's ids. Before, it was written into the next
 * life with the erased life's ids (ncverify2), and the cached state of the erased life took them as
 * its own next events: an automatic compaction planned on it wrote the erased life's ids, counts
 * (and, with a summarizing strategy, a summary of erased text) into the new life (newcomer ncrace,
 * run 41). A resend of the session's first events (at `stream_exists` before the life check) and
 * one written after the store named its ids duplicates (at `any`) went there too. Since the write
 * admission rule (newcomer F1), a request is never applied to a life of the session that began after
 * it arrived: such a resend is refused 409 `session_erased`, nothing written; sent again, it is
 * written once in the new life, with that life's ids.
 */
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, type AppendOptions, type EventData, type EventStore } from '@lib/event-store';
import { parseStrategy } from '@lib/compaction';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { SessionStateCache } from './session-state-cache';
import { loadSessionWindow } from './session-loader';
import { storeEventIds } from '../domain/session-ids';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { SessionErasedMeanwhileError } from '../errors';

const noBus = { publish: () => undefined } as unknown as EventBus;

/** `value` with every Date replaced by a marker: a state folded by the cache stamps its own events' times (acknowledgedAt), a few ms after the store's. */
function withoutTimes(value: unknown): unknown {
  if (value instanceof Date) return 'a time';
  // An entry's time: the cache folds a write with the time it was acknowledged, the log holds the writer's (a millisecond apart at times).
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value)) return 'a time';
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, withoutTimes(v)]));
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutTimes(v)]));
  return value;
}
const KEY = sessionKey('t', 's');
const STREAM = sessionStream(KEY);

describe('a resend whose session another replica erases just before it is written', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  /**
   * A store on which an append, once armed (`arm(skip)`: after `skip` more appends), is preceded by
   * the session stream's deletion (another replica's erasure landing first) and, with `writtenAgainBy`,
   * the session's re-creation by another client sending that id through its own handler.
   */
  function erasedBeforeAppend(writtenAgainBy?: string): { store: EventStore; arm: (skip?: number) => void } {
    let countdown = -1;
    const racing: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendToStream: async (stream: string, events: EventData[], options?: AppendOptions) => {
        if (countdown >= 0 && countdown-- === 0) {
          await store.deleteStream(STREAM);
          if (writtenAgainBy) await say(new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus), writtenAgainBy);
        }
        return store.appendToStream(stream, events, options);
      },
    });
    return { store: racing, arm: (skip = 0) => (countdown = skip) };
  }

  const say = (handler: AppendSessionEventsHandler, id: string) =>
    handler.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id, type: 'user', text: `text of ${id}` } }]));

  it("is refused 409 session_erased; sent again, written once in the next life, with that life's ids, keeping no state of the erased life", async () => {
    const racing = erasedBeforeAppend();
    const cache = new SessionStateCache(racing.store);
    const handler = new AppendSessionEventsHandler(racing.store, cache, noBus);
    for (const id of ['u1', 'u2', 'u3']) await say(handler, id);
    racing.arm();
    // arrived in the erased life: not applied in the next one
    await expect(say(handler, 'u2')).rejects.toBeInstanceOf(SessionErasedMeanwhileError);
    expect(await store.readStream(STREAM)).toEqual([]);
    const resent = await say(handler, 'u2');
    // written again, as the first event of the next life (revisions are never reused)
    expect(resent.revision).toBe('3');
    expect((await store.readStream(STREAM)).map((e) => [e.revision, (e.data as { event: { id: string } }).event.id])).toEqual([[3n, 'u2']]);
    // with the ids of the new life (derived from its first revision): a resend decided on the new life finds it by them
    expect((await store.readStream(STREAM))[0].id).toBe(storeEventIds(KEY, 3n, 'u2').id);
    // a resend of it now, through this process or another one, is answered as that write: u2 is not written twice
    expect(await say(handler, 'u2')).toEqual(resent);
    expect(await say(new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus), 'u2')).toEqual(resent);
    expect((await store.readStream(STREAM)).map((e) => e.revision)).toEqual([3n]);
    const cached = await cache.load(KEY);
    expect(withoutTimes(cached)).toEqual(withoutTimes(await loadSessionWindow(store, KEY)));
    expect(cached?.revision).toBe(3n);
    // and an append after it decides on the new life only
    await say(handler, 'u4');
    expect(withoutTimes(await cache.load(KEY))).toEqual(withoutTimes(await loadSessionWindow(store, KEY)));
  });

  it("a resend of the session's first events, racing its erasure and re-creation by another client, is refused 409 session_erased; sent again, written once in the new life, with that life's ids", async () => {
    const racing = erasedBeforeAppend('x1');
    const cache = new SessionStateCache(racing.store);
    const handler = new AppendSessionEventsHandler(racing.store, cache, noBus);
    await say(handler, 'u1');
    racing.arm();
    // decided on the cached life 0 as a resend (u1 at revision 0, written at `stream_exists`), while the stream is in its next life: refused
    await expect(say(handler, 'u1')).rejects.toBeInstanceOf(SessionErasedMeanwhileError);
    expect((await store.readStream(STREAM)).map((e) => e.revision)).toEqual([1n]);
    const resent = await say(handler, 'u1');
    const stored = await store.readStream(STREAM);
    expect(stored.map((e) => [e.revision, (e.data as { event: { id: string } }).event.id])).toEqual([
      [1n, 'x1'],
      [2n, 'u1'],
    ]);
    expect(resent.revision).toBe('2');
    // the new life's id (incarnation 1): not the erased life's, which no resend decided on the new life finds
    expect(stored[1].id).toBe(storeEventIds(KEY, 1n, 'u1').id);
    expect(await say(new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus), 'u1')).toEqual(resent);
    expect(await say(handler, 'u1')).toEqual(resent);
    expect((await store.readStream(STREAM)).map((e) => e.revision)).toEqual([1n, 2n]);
    expect(withoutTimes(await cache.load(KEY))).toEqual(withoutTimes(await loadSessionWindow(store, KEY)));
  });

  it('a resend of an archived event, written after the store named its id a duplicate, racing an erasure and re-creation, is refused 409 session_erased; sent again, written in the new life', async () => {
    const writer = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    for (const id of ['u1', 'u2']) await say(writer, id);
    const compacted = await new CompactSessionHandler(store, new SessionStateCache(store), new ExtractiveSummarizer()).execute(
      new CompactSessionCommand('t', 's', parseStrategy({ type: 'turn-window', maxTurns: 1 }), null, 'chars', false),
    );
    expect(compacted.outcome).toBe('compacted');
    const racing = erasedBeforeAppend('x1');
    // a process that loads the compaction's snapshot: u1 is unknown to it, written as new, and the store names its id a
    // duplicate; decided again on the stored state, it is a resend, and the session is erased and written again right before it
    racing.arm(1);
    await expect(say(new AppendSessionEventsHandler(racing.store, new SessionStateCache(racing.store), noBus), 'u1')).rejects.toBeInstanceOf(
      SessionErasedMeanwhileError,
    );
    const resent = await say(new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus), 'u1');
    const stored = await store.readStream(STREAM);
    const incarnation = await store.streamIncarnation(STREAM);
    expect(stored.map((e) => (e.data as { event: { id: string } }).event.id)).toEqual(['x1', 'u1']);
    expect(stored[1].id).toBe(storeEventIds(KEY, incarnation, 'u1').id);
    expect(resent.revision).toBe(String(stored[1].revision));
  });
});
