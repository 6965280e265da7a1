/**
 * Two DELETEs of one session at once through two replicas (newcomer ncrace74 F3): A deletes the
 * session's stream and writes the record of the life it ended; B finds the stream already deleted.
 * B answered 200 with the record of the session's PREVIOUS life (another erasedAt, erasedEvents and
 * position) when A's record landed, and B's projector erased the life's rows at it, between B's
 * first look for the record and its check of its own read models: holding no row of the life, B
 * went the way of a replica that never had it, found the life recorded already and answered the
 * older record it had found before. Whatever B's store reads A's record lands between, and
 * whether it lands within B's record wait or just after, B answers A's record.
 */
import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { SqliteEventStore, type AppendOptions, type DeleteStreamOptions, type EventData, type EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, sessionKey, sessionStream } from '../events/session-stream-events';
import { SESSION_ERASED, erasureStream } from '../events/erasure-events';
import type { RequestedBy } from '../events/requested-by';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { getWindow } from '../read-side/queries/window-query';
import { user } from '../read-side/testing/recorded-session-log';
import { EraseSessionCommand, EraseSessionHandler, type EraseAnswer } from './erase-session';
import { SessionStateCache } from './session-state-cache';

const STREAM = sessionStream(sessionKey('t', 's'));
const ERASURES = erasureStream('t');
/**
 * The handlers' record wait (ms): long enough that every store call B makes before A's record lands
 * comes within it (B reads at most every 200 ms). Its end is reached by moving the clock
 * (`Date.now`) past it, not by waiting.
 */
const RECORD_WAIT_MS = 5000;

/** `n` conversation events of session `s` tagged `tag`. */
const events = (tag: string, n: number): EventData[] =>
  Array.from({ length: n }, (_, i) => ({
    id: crypto.randomUUID(),
    type: CONVERSATION_EVENT,
    data: { event: user(`${tag}-${i}`, `text of ${tag} ${i}`), costs: { chars: 10, cl100k_base: 3, o200k_base: 3 } },
  }));

/**
 * Where A's steps land on B's way: A deletes the stream before B starts (`deleteAfterCall` 0) or
 * after B's `deleteAfterCall`-th store call (1-based); A's record lands after B's `afterCall`-th
 * (not before A deletes), and B's record wait is then over or not (`pastRecordWait`: the clock moved
 * past it, so that B's next read of the erasure stream is its last).
 */
interface Landing {
  deleteAfterCall?: number;
  afterCall: number;
  pastRecordWait: boolean;
}

/** How the session's first life was recorded, and what B's read models held of its second. */
interface History {
  /** The first life's record was written by a build before records named their life (no `lastRevision`, no `lastPosition`). */
  unnamedFirstRecord?: boolean;
  /** B's projector was stopped while the second life was written and deleted: B holds no row of it (a replica started since). */
  bNeverHeld?: boolean;
}

/**
 * Session `s` lived once (`firstLife` events, erased and recorded) and is in its second life
 * (`secondLife` events), projected by replicas A and B (as `history` says). A's DELETE deletes the
 * stream and is held before its record; then B's DELETE runs, and A's record lands, and B's
 * projector passes it (erasing the life's rows there), as `landing` says. Returns both answers and
 * the records.
 */
async function twins(firstLife: number, secondLife: number, landing: Landing, requestedBy?: RequestedBy, history: History = {}) {
  const store = SqliteEventStore.open(':memory:');
  const [a, b] = [new SessionProjector(ReadModelStore.open(':memory:')), new SessionProjector(ReadModelStore.open(':memory:'))];
  a.start(store);
  b.start(store);
  const caught = async (p: SessionProjector) => expect(await p.waitForPosition(await store.headPosition(), 5000)).toBe(true);
  const now = Date.now.bind(Date);
  let clockMoved = 0;
  const clock = jest.spyOn(Date, 'now').mockImplementation(() => now() + clockMoved);
  try {
    const { nextExpectedRevision } = await store.appendToStream(STREAM, events('one', firstLife));
    let first: EraseAnswer;
    if (history.unnamedFirstRecord) {
      await store.deleteStream(STREAM, { expectedRevision: nextExpectedRevision });
      const erasedAt = new Date().toISOString();
      const { position } = await store.appendToStream(ERASURES, [
        { id: crypto.randomUUID(), type: SESSION_ERASED, data: { sessionId: 's', erasedEvents: firstLife, erasedAt } },
      ]);
      first = { sessionId: 's', erasedEvents: firstLife, erasedAt, position: position.toString() };
    } else {
      first = await new EraseSessionHandler(store, new SessionStateCache(store), a, RECORD_WAIT_MS).execute(new EraseSessionCommand('t', 's'));
    }
    await Promise.all([caught(a), caught(b)]);
    if (history.bNeverHeld) await b.stop();
    await store.appendToStream(STREAM, events('two', secondLife));
    await caught(a);
    if (!history.bNeverHeld) {
      await caught(b);
      expect(getWindow(b.store, 't', 's')).not.toBeNull();
    }

    // A: waits to be released before deleting the stream, and again before appending its record.
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      let reach!: () => void;
      const reached = new Promise<void>((resolve) => (reach = resolve));
      return { open, opened, reach, reached };
    };
    const [atDeletion, atRecord] = [gate(), gate()];
    /** Whether A's deletion was tried, and whether it deleted the stream (else B had). */
    let aTried = Promise.resolve(false);
    const held: EventStore = Object.assign(Object.create(store) as EventStore, {
      deleteStream: async (stream: string, options?: DeleteStreamOptions) => {
        atDeletion.reach();
        await atDeletion.opened;
        const deleting = store.deleteStream(stream, options);
        aTried = deleting.then(
          () => true,
          () => false,
        );
        return deleting;
      },
      appendToStream: async (stream: string, data: EventData[], options?: AppendOptions) => {
        if (stream === ERASURES) {
          atRecord.reach();
          await atRecord.opened;
        }
        return store.appendToStream(stream, data, options);
      },
    });
    const answerA = new EraseSessionHandler(held, new SessionStateCache(held), a, RECORD_WAIT_MS).execute(new EraseSessionCommand('t', 's'));
    await atDeletion.reached;
    if (!landing.deleteAfterCall) {
      atDeletion.open();
      await atRecord.reached;
      expect(await store.readStream(STREAM)).toEqual([]);
    }
    if (history.bNeverHeld) {
      expect(landing.deleteAfterCall ?? 0).toBe(0);
      b.start(store);
      await caught(b);
      expect(getWindow(b.store, 't', 's')).toBeNull();
    }

    // B: every store call counted; A deletes after the `landing.deleteAfterCall`-th, its record lands after the `landing.afterCall`-th.
    let calls = 0;
    let landed = false;
    /** A deletes now, if it can (B may have deleted the stream first: then A waits for B's record). */
    const deleteA = async () => {
      atDeletion.open();
      await sleep(0);
      return aTried;
    };
    const land = async () => {
      landed = true;
      // A's record lands (and B's projector passes it) when A deleted the stream; else A answers B's record later.
      if (await deleteA()) {
        atRecord.open();
        await answerA;
        await caught(b);
        if (landing.pastRecordWait) clockMoved += RECORD_WAIT_MS + 1;
      }
    };
    const counted = new Proxy(store, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
          if (++calls === landing.deleteAfterCall) await deleteA();
          if (calls === landing.afterCall) await land();
          return result;
        };
      },
    }) as EventStore;
    const answerB = await new EraseSessionHandler(counted, new SessionStateCache(counted), b, RECORD_WAIT_MS).execute(
      new EraseSessionCommand('t', 's', requestedBy),
    );
    if (!landed) await land();
    const records = (await store.readStream(ERASURES)).filter((e) => e.type === SESSION_ERASED);
    return { first, answerA: await answerA, answerB, records, calls };
  } finally {
    clock.mockRestore();
    await Promise.all([a.stop(), b.stop()]);
    a.store.close();
    b.store.close();
    await store.close();
  }
}

/** Checks B answered A's record, the one record of the second life, not the first life's. */
function expectOneAnswer({ first, answerA, answerB, records }: Awaited<ReturnType<typeof twins>>, secondLife: number): void {
  expect(answerA.erasedEvents).toBe(secondLife);
  expect(answerB).toEqual<EraseAnswer>(answerA);
  expect(answerB.position).not.toBe(first.position);
  expect(records.map((r) => r.position.toString())).toEqual([first.position, answerA.position]);
}

describe('two DELETEs of one session at once through two replicas', () => {
  it('given A deleted the stream, when its record lands and B erases the rows at it right after B first looked for it, then B answers that record (not the previous life’s)', async () => {
    // B's calls: streamIncarnation (arrival), headPosition, readStream, streamIncarnation (stream found deleted), then
    // readStream of the erasure stream (its first look for the record): A's record lands after that one.
    const result = await twins(3, 5, { afterCall: 5, pastRecordWait: false });
    expectOneAnswer(result, 5);
  });

  it('given A’s record lands just after B’s record wait ended, when B finds no row of the life left, then B answers that record (not 404)', async () => {
    // B's calls as above; B holds the life's rows, so it waits for the record: its first look in that wait (call 6)
    // finds none, A's record lands and B's projector erases the rows, and B's record wait is over (it answered 404).
    const result = await twins(3, 5, { afterCall: 6, pastRecordWait: true });
    expectOneAnswer(result, 5);
  });

  it('given A deletes the stream between B’s reads of it and B’s deletion, when A’s record lands as B’s record wait ends, then B answers that record (not 409 erasure_interrupted)', async () => {
    // B's calls: streamIncarnation, headPosition, readStream (the last event), streamIncarnation, readStream (the first):
    // A deletes after that one, so B's deletion fails (6: what beat it; 7–9: B reads the stream again) and B finds the
    // life erased since it arrived: its first look for that life's record (10) finds none, A's record lands and B's
    // record wait is over.
    const result = await twins(3, 5, { deleteAfterCall: 5, afterCall: 10, pastRecordWait: true });
    expectOneAnswer(result, 5);
  });

  it('given the previous life’s record names no life (an older build’s) and B never held the life’s rows, when A’s record lands after B looked for it twice, then B waits for it and answers it (not the older record)', async () => {
    // B's calls: 1–4 as above, 5: its first look for the record (the older one found), 6–8: the session's records
    // (the older one among them: no life's record to finish), 9: its look for the life's record written since 5.
    const result = await twins(3, 5, { afterCall: 9, pastRecordWait: false }, undefined, { unnamedFirstRecord: true, bNeverHeld: true });
    expectOneAnswer(result, 5);
  });

  it('property: wherever among B’s store calls A deletes the stream and its record lands, within B’s record wait or after it, with or without a client request id, whatever B held of the life and however its previous life was recorded, both answer one record of the life', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.record({ unnamedFirstRecord: fc.boolean(), bNeverHeld: fc.boolean() }),
        async (firstLife, secondLife, deleteAt, later, pastRecordWait, withRequestId, history) => {
          const requestedBy: RequestedBy | undefined = withRequestId ? { requestId: 'b-1', requestIdFrom: 'client', via: 'http' } : undefined;
          // B's projector is started again once A deleted the stream, before B's DELETE.
          const deleteAfterCall = history.bNeverHeld ? 0 : deleteAt;
          const landing = { deleteAfterCall, afterCall: Math.max(1, deleteAfterCall + later), pastRecordWait };
          expectOneAnswer(await twins(firstLife, secondLife, landing, requestedBy, history), secondLife);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
