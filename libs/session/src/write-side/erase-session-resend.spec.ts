/**
 * A DELETE sent again by its client (its answer lost) under its own request id (`X-Request-Id`),
 * after the session id was written again: it answers the erasure it resends and erases nothing of
 * the new life. Before, a DELETE carried no expected revision and erasures were not matched by
 * request id, so that resend erased the new life. A DELETE without a client-chosen id, or with
 * another one, or one for another session, is erased as before.
 */
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, type AppendOptions, type EventData, type EventStore, type ReadStreamOptions } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import type { RequestedBy } from '../events/requested-by';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { getWindow } from '../read-side/queries/window-query';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionCommand, EraseSessionHandler, erasureStream, type EraseAnswer } from './erase-session';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));
const ERASURES = erasureStream('t');

const byClient = (requestId: string, keyLabel?: string): RequestedBy => ({
  ...(keyLabel ? { keyLabel } : {}),
  requestId,
  requestIdFrom: 'client',
  via: 'http',
});
const byService = (requestId: string): RequestedBy => ({ requestId, requestIdFrom: 'service', via: 'http' });

/** A replica: its own read models and projector following `store`, and its handlers. */
function replica(store: EventStore, recordWaitMs = 2000) {
  const projector = new SessionProjector(ReadModelStore.open(':memory:'));
  projector.start(store);
  const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
  const erase = new EraseSessionHandler(store, new SessionStateCache(store), projector, recordWaitMs);
  return {
    projector,
    say: (id: string, sessionId = 's') =>
      append.execute(new AppendSessionEventsCommand('t', sessionId, [{ event: { id, type: 'user', text: `text of ${id}` } }])),
    erase: (requestedBy?: RequestedBy, sessionId = 's') => erase.execute(new EraseSessionCommand('t', sessionId, requestedBy)),
    caughtUp: async (store_: EventStore = store) => expect(await projector.waitForPosition(await store_.headPosition(), 5000)).toBe(true),
  };
}

describe('a DELETE sent again under its client request id after the session was written again', () => {
  let store: SqliteEventStore;
  const replicas: Array<ReturnType<typeof replica>> = [];
  const started = (r: ReturnType<typeof replica>) => (replicas.push(r), r);
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(async () => {
    await Promise.all(replicas.splice(0).map((r) => r.projector.stop()));
    await store.close();
  });

  const streamIds = async () => (await store.readStream(STREAM)).map((e) => (e.data as { event: { id: string } }).event.id);
  const records = () => store.readStream(ERASURES);

  /** Erases `s` (u1, u2) under `requestedBy` on `r`, then writes it again (n1); returns the erasure's answer. */
  async function erasedAndWrittenAgain(r: ReturnType<typeof replica>, requestedBy?: RequestedBy): Promise<EraseAnswer> {
    await r.say('u1');
    await r.say('u2');
    const first = await r.erase(requestedBy);
    await r.say('n1');
    return first;
  }

  it('given an erasure under X-Request-Id req-1 and the session written again, when the DELETE comes again with req-1, then it answers the first erasure, the new life intact, no record written', async () => {
    const a = started(replica(store));
    const first = await erasedAndWrittenAgain(a, byClient('req-1', 'API_KEYS#1'));
    expect(first).toMatchObject({ sessionId: 's', erasedEvents: 2 });
    const again = await a.erase(byClient('req-1', 'API_KEYS#1'));
    expect(again).toEqual(first);
    expect(await streamIds()).toEqual(['n1']);
    expect(await records()).toHaveLength(1);
    await a.caughtUp();
    expect(getWindow(a.projector.store, 't', 's')?.entries.map((e) => e.event.id)).toEqual(['n1']);
  });

  it('given two identical resends at once, then both answer the first erasure and nothing is written', async () => {
    const a = started(replica(store));
    const b = started(replica(store));
    const first = await erasedAndWrittenAgain(a, byClient('req-1'));
    const both = await Promise.all([a.erase(byClient('req-1')), b.erase(byClient('req-1'))]);
    expect(both).toEqual([first, first]);
    expect(await streamIds()).toEqual(['n1']);
    expect(await records()).toHaveLength(1);
  });

  it.each<[string, RequestedBy | undefined]>([
    ['no requestedBy', undefined],
    ['an id the service made', byService('req-1')],
    ['another client id', byClient('req-2')],
    ['the same id under another API key', byClient('req-1', 'API_KEYS#2')],
  ])('given the resend carries %s, then it erases the new life as before', async (_case, requestedBy) => {
    const a = started(replica(store));
    const first = await erasedAndWrittenAgain(a, byClient('req-1', requestedBy?.keyLabel === undefined ? undefined : 'API_KEYS#1'));
    const second = await a.erase(requestedBy);
    expect(second).toMatchObject({ sessionId: 's', erasedEvents: 1 });
    expect(second.position).not.toBe(first.position);
    expect(await streamIds()).toEqual([]);
    expect(await records()).toHaveLength(2);
  });

  it('given the client reuses the request id for another session, then that session is erased (the id matches records of its own session only)', async () => {
    const a = started(replica(store));
    await erasedAndWrittenAgain(a, byClient('req-1'));
    await a.say('o1', 'other');
    expect(await a.erase(byClient('req-1'), 'other')).toMatchObject({ sessionId: 'other', erasedEvents: 1 });
    expect(await store.readStream(sessionStream(sessionKey('t', 'other')))).toEqual([]);
    expect(await streamIds()).toEqual(['n1']);
  });

  it('given the erasure recorded through another replica, when the resend reaches one whose read models have it, then it answers it (found through the read model)', async () => {
    const a = started(replica(store));
    const b = started(replica(store));
    const first = await erasedAndWrittenAgain(a, byClient('req-1'));
    await b.caughtUp();
    const readAt: bigint[] = [];
    const watched: EventStore = Object.assign(Object.create(store) as EventStore, {
      eventAt: async (position: bigint) => (readAt.push(position), store.eventAt(position)),
    });
    const onB = new EraseSessionHandler(watched, new SessionStateCache(watched), b.projector);
    expect(await onB.execute(new EraseSessionCommand('t', 's', byClient('req-1')))).toEqual(first);
    expect(readAt).toEqual([BigInt(first.position)]);
    expect(await streamIds()).toEqual(['n1']);
  });

  it("given the erasure recorded through another replica, when the resend reaches one whose read models have not read it yet, then it answers it (found in the store's erasure stream)", async () => {
    const a = started(replica(store));
    const b = started(replica(store));
    await b.projector.stop();
    const first = await erasedAndWrittenAgain(a, byClient('req-1'));
    expect(b.projector.checkpoint()).toBeLessThan(BigInt(first.position));
    // B's projector resumes once the resend has read the store's erasure stream (its answer waits for the read models)
    const watched: EventStore = Object.assign(Object.create(store) as EventStore, {
      readStream: async (stream: string, options?: ReadStreamOptions) => {
        const read = await store.readStream(stream, options);
        if (stream === ERASURES) b.projector.start(store);
        return read;
      },
      eventAt: () => Promise.reject(new Error('not through the read models: they have not read the record')),
    });
    const onB = new EraseSessionHandler(watched, new SessionStateCache(watched), b.projector);
    expect(await onB.execute(new EraseSessionCommand('t', 's', byClient('req-1')))).toEqual(first);
    expect(await streamIds()).toEqual(['n1']);
    await b.caughtUp();
    expect(getWindow(b.projector.store, 't', 's')?.entries.map((e) => e.event.id)).toEqual(['n1']);
  });

  /** A store whose appends to the erasure stream wait, once armed, until released (an erasure between its deletion and its record). */
  function recordHeld() {
    let gate: Promise<void> | null = null;
    let open = () => undefined as void;
    let entered = () => undefined as void;
    const reached = new Promise<void>((resolve) => (entered = resolve));
    const held: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendToStream: async (stream: string, events: EventData[], options?: AppendOptions) => {
        if (stream === ERASURES && gate) {
          entered();
          await gate;
        }
        return store.appendToStream(stream, events, options);
      },
    });
    return {
      store: held,
      arm: () => {
        gate = new Promise<void>((resolve) => (open = resolve));
      },
      reached,
      release: () => open(),
    };
  }

  it('given the first sending deleted the session on another replica and has not written its record yet, and the session was written again, when the resend comes, then it waits for that record and answers it', async () => {
    const held = recordHeld();
    const a = started(replica(held.store));
    const b = started(replica(store));
    await a.say('u1');
    await a.say('u2');
    held.arm();
    const first = a.erase(byClient('req-1'));
    await held.reached;
    await b.say('n1');
    const resend = b.erase(byClient('req-1'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    held.release();
    const answer = await first;
    expect(await resend).toEqual(answer);
    expect(await streamIds()).toEqual(['n1']);
    expect(await records()).toHaveLength(1);
  });

  it('given that record never comes (the first sending interrupted), then after the record wait the resend erases the session as it is (as before)', async () => {
    const held = recordHeld();
    const a = started(replica(held.store));
    const b = started(replica(store, 100));
    await a.say('u1');
    held.arm();
    void a.erase(byClient('req-1')).catch(() => undefined);
    await held.reached;
    await b.say('n1');
    const sentAt = performance.now();
    expect(await b.erase(byClient('req-1'))).toMatchObject({ sessionId: 's', erasedEvents: 1 });
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(90);
    expect(await streamIds()).toEqual([]);
  });
});
