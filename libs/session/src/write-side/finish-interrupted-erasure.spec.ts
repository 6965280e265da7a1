/**
 * Finishing an erasure interrupted after its deletion, before its record (`finishInterrupted`,
 * `finishInterruptedNotHeld`): the record is written only when none comes within the record wait,
 * and `written` says whether this call wrote it. A record the erasure itself wrote meanwhile (a
 * `DELETE` still running, in this process too) is answered with `written: false`: the sweep and a
 * new life's first append log a line for a written record only, and that line says a replica had
 * stopped (newcomer ncapi73 F1: a `DELETE` racing an append logged it, with no replica stopped).
 */
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore } from '@lib/event-store';
import { SESSION_ERASED, type SessionErasedData } from '../events/erasure-events';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionHandler, erasureRecordId, erasureStream } from './erase-session';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;
const RECORD_WAIT_MS = 1_000;

describe('finishing an erasure interrupted before its record', () => {
  let store: SqliteEventStore;
  let projector: SessionProjector;
  let erasures: EraseSessionHandler;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    projector = new SessionProjector(ReadModelStore.open(':memory:'));
    projector.start(store);
    erasures = new EraseSessionHandler(store, new SessionStateCache(store), projector, RECORD_WAIT_MS, noBus);
  });
  afterEach(async () => {
    await projector.stop();
    await store.close();
  });

  /** Appends `ids` to session `s` of tenant `t`, waits until the projector holds them, and deletes the stream without a record. */
  async function writtenThenDeleted(ids: string[]): Promise<void> {
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    const answer = await append.execute(
      new AppendSessionEventsCommand(
        't',
        's',
        ids.map((id) => ({ event: { id, type: 'user' as const, text: `text of ${id}` } })),
      ),
    );
    expect(await projector.waitForPosition(BigInt(answer.position), 5_000)).toBe(true);
    await store.deleteStream(sessionStream(sessionKey('t', 's')));
  }

  /** Appends the record of the life ending at `lastRevision` as the erasure that deleted it does, `afterMs` from now; answers its position. */
  async function recordWrittenByTheErasure(lastRevision: bigint, erasedEvents: number, afterMs: number): Promise<bigint> {
    await new Promise((resolve) => setTimeout(resolve, afterMs));
    const data: SessionErasedData = {
      sessionId: 's',
      erasedEvents,
      erasedAt: new Date().toISOString(),
      lastRevision: lastRevision.toString(),
      requestedBy: { requestId: 'the-delete', requestIdFrom: 'client', via: 'http' },
    };
    const appended = await store.appendToStream(erasureStream('t'), [{ id: erasureRecordId('t', 's', lastRevision), type: SESSION_ERASED, data }]);
    return appended.position;
  }

  it('answers the record the erasure wrote meanwhile as not written by this call (a replica holding the rows)', async () => {
    await writtenThenDeleted(['u1', 'u2']);
    const [finished, position] = await Promise.all([erasures.finishInterrupted('t', 's'), recordWrittenByTheErasure(1n, 2, 100)]);
    expect(finished).toEqual({
      record: { position, data: expect.objectContaining({ requestedBy: expect.objectContaining({ requestId: 'the-delete' }) }) },
      written: false,
    });
  });

  it('writes the record when none comes within the record wait, and says so (a replica holding the rows)', async () => {
    await writtenThenDeleted(['u1', 'u2']);
    const finished = await erasures.finishInterrupted('t', 's');
    expect(finished).toEqual({
      record: { position: expect.any(BigInt), data: expect.objectContaining({ erasedEvents: 2, lastRevision: '1' }) },
      written: true,
    });
    expect(finished!.record.data.requestedBy).toBeUndefined();
    // found, not written, when asked again
    expect(await erasures.finishInterrupted('t', 's')).toEqual({ record: finished!.record, written: false });
  });

  it('answers the record the erasure wrote meanwhile as not written by this call (a replica holding no row)', async () => {
    await writtenThenDeleted(['u1', 'u2']);
    const fresh = new SessionProjector(ReadModelStore.open(':memory:'));
    fresh.start(store);
    try {
      const unheld = new EraseSessionHandler(store, new SessionStateCache(store), fresh, RECORD_WAIT_MS, noBus);
      const [finished, position] = await Promise.all([unheld.finishInterruptedNotHeld('t', 's', 2n), recordWrittenByTheErasure(1n, 2, 100)]);
      expect(finished).toEqual({ record: { position, data: expect.objectContaining({ lastRevision: '1' }) }, written: false });
    } finally {
      await fresh.stop();
    }
  });

  it('writes the record counted from the session’s previous record when none comes (a replica holding no row)', async () => {
    await writtenThenDeleted(['u1']);
    await recordWrittenByTheErasure(0n, 1, 0);
    await writtenThenDeleted(['u2', 'u3', 'u4']);
    const fresh = new SessionProjector(ReadModelStore.open(':memory:'));
    fresh.start(store);
    try {
      const unheld = new EraseSessionHandler(store, new SessionStateCache(store), fresh, RECORD_WAIT_MS, noBus);
      const head = await store.headPosition();
      const finished = await unheld.finishInterruptedNotHeld('t', 's', 4n);
      expect(finished).toEqual({
        record: { position: expect.any(BigInt), data: expect.objectContaining({ erasedEvents: 3, lastRevision: '3', lastPosition: head.toString() }) },
        written: true,
      });
      expect(finished!.record.data.requestedBy).toBeUndefined();
      // asked again: a record closes the life, nothing to finish
      expect(await unheld.finishInterruptedNotHeld('t', 's', 4n)).toBeNull();
      expect((await store.readStream(erasureStream('t'))).length).toBe(2);
    } finally {
      await fresh.stop();
    }
  });
});
