/**
 * Newcomer findings F1 and F2 (two replicas behind a proxy, a client that times out and retries on
 * the other one; also on one SQLite process): a write request held on one replica (queued behind a
 * slow write to its session) while its client retried elsewhere, erased the session and wrote it
 * again, was applied later in the session's new life: an append put erased content back, out of
 * order (F1); an erasure erased the new life (F2). The rule ({@link checkWriteAdmission}): a write
 * is applied only in the life of the session it arrived in, and never starts past its write deadline.
 */
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, type AppendOptions, type EventData, type EventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionCommand, EraseSessionHandler, erasureStream } from './erase-session';
import { SessionStateCache } from './session-state-cache';
import { RequestExpiredError, SessionErasedMeanwhileError } from '../errors';
import { admitWrite } from '../decider/write-admission';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));

const appendOf = (id: string) => new AppendSessionEventsCommand('t', 's', [{ event: { id, type: 'user', text: `text of ${id}` } }]);
const idsIn = async (store: EventStore) => (await store.readStream(STREAM)).map((e) => (e.data as { event: { id: string } }).event.id);

/** A store whose appends to the session wait, once `hold()` is called, until `release()`. */
function holdingAppends(store: EventStore) {
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  let held = 0;
  const wrapped: EventStore = Object.assign(Object.create(store) as EventStore, {
    appendToStream: async (stream: string, events: EventData[], options?: AppendOptions) => {
      if (gate && stream === STREAM) {
        held++;
        await gate;
      }
      return store.appendToStream(stream, events, options);
    },
  });
  return {
    store: wrapped,
    hold: () => {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release: () => {
      gate = null;
      open();
    },
    held: () => held,
  };
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('a write held on one replica while its client retried, erased and wrote the session again elsewhere', () => {
  let store: SqliteEventStore;
  let projectors: SessionProjector[];
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    projectors = [];
  });
  afterEach(async () => {
    for (const p of projectors) await p.stop?.();
    await store.close();
  });

  /** An erasure handler of a replica of its own (its own cache and read models). */
  function eraser(on: EventStore = store): EraseSessionHandler {
    const projector = new SessionProjector(ReadModelStore.open(':memory:'));
    projector.start(store);
    projectors.push(projector);
    return new EraseSessionHandler(on, new SessionStateCache(on), projector, 200);
  }

  it('F1: an append queued behind a slow write is not applied in the life begun after its erasure: 409 session_erased, the new life as written', async () => {
    const replicaA = holdingAppends(store);
    const a = new AppendSessionEventsHandler(replicaA.store, new SessionStateCache(replicaA.store), noBus);
    const b = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    await a.execute(appendOf('u1'));
    // replica A: a slow write to the session, and the client's append queued behind it
    replicaA.hold();
    const slow = a.execute(appendOf('slow'));
    const stale = a.execute(appendOf('stale'));
    await turn();
    expect(replicaA.held()).toBe(1);
    // the client gave up on A: its retry on B is acknowledged, then it erases the session and writes its new life
    await b.execute(appendOf('stale'));
    await eraser().execute(new EraseSessionCommand('t', 's'));
    await b.execute(appendOf('n1'));
    replicaA.release();
    await expect(slow).rejects.toBeInstanceOf(SessionErasedMeanwhileError);
    await expect(stale).rejects.toBeInstanceOf(SessionErasedMeanwhileError);
    // nothing of the erased life came back
    expect(await idsIn(store)).toEqual(['n1']);
  });

  it('F2: an erasure held while the client retried it elsewhere and wrote the session again answers as that erasure did and erases nothing more', async () => {
    const b = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    for (const id of ['u1', 'u2']) await b.execute(appendOf(id));
    // replica A's erasure reads the session's life as it arrives, then is held (before it deletes)
    let proceed: () => void = () => undefined;
    const heldRead = new Promise<void>((resolve) => (proceed = resolve));
    let reads = 0;
    const slowStore: EventStore = Object.assign(Object.create(store) as EventStore, {
      headPosition: async () => {
        if (reads++ === 0) await heldRead;
        return store.headPosition();
      },
    });
    const held = eraser(slowStore).execute(new EraseSessionCommand('t', 's'));
    await turn();
    // the client's retry on B erases the session, and the client writes it again
    const first = await eraser().execute(new EraseSessionCommand('t', 's'));
    await b.execute(appendOf('n1'));
    proceed();
    // A answers as the erasure of the life it arrived in did, writing nothing: the new life stays
    expect(await held).toEqual(first);
    expect(await idsIn(store)).toEqual(['n1']);
    expect((await store.readStream(erasureStream('t'))).length).toBe(1);
  });

  it('a write whose deadline passed while it was queued is refused 503 request_expired, nothing written; one whose client is gone likewise', async () => {
    const replicaA = holdingAppends(store);
    const a = new AppendSessionEventsHandler(replicaA.store, new SessionStateCache(replicaA.store), noBus);
    await a.execute(appendOf('u1'));
    replicaA.hold();
    const slow = a.execute(admitWrite(appendOf('slow'), { arrivedAtMs: performance.now(), deadlineMs: 60_000, clientGone: () => false }));
    // arrived "long ago" on this replica's monotonic clock: its deadline has passed by the time the queue lets it write
    const expired = a.execute(admitWrite(appendOf('late'), { arrivedAtMs: performance.now() - 10_000, deadlineMs: 5_000, clientGone: () => false }));
    let gone = false;
    const abandoned = a.execute(admitWrite(appendOf('gone'), { arrivedAtMs: performance.now(), deadlineMs: 60_000, clientGone: () => gone }));
    await turn();
    gone = true;
    replicaA.release();
    await expect(slow).resolves.toMatchObject({ revision: '1' });
    await expect(expired).rejects.toBeInstanceOf(RequestExpiredError);
    await expect(expired).rejects.toMatchObject({ code: 'request_expired', details: { deadlineMs: 5_000 } });
    await expect(abandoned).rejects.toBeInstanceOf(RequestExpiredError);
    expect(await idsIn(store)).toEqual(['u1', 'slow']);
  });
});
