/**
 * The life a queued command belongs to (newcomer ncnats66 F1): given a session and its erasures, when a command stored at
 * a time is received, then it is of the life current now unless the session's latest erasure came at or after it.
 */
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { erasureStream, SESSION_ERASED, type SessionErasedData } from '../events/erasure-events';
import { ENDED_LIFE, LatestErasureTimes, QUEUED_COMMAND_RECORD_WAIT_MS, readSessionLifeWhenStored } from './life-when-stored';

const stream = sessionStream(sessionKey('default', 's'));
const event = () => ({ id: randomUUID(), type: 'ConversationEventAppended', data: { event: { id: randomUUID(), type: 'user', text: 'x' } } });
const record = (data: SessionErasedData) => ({ id: randomUUID(), type: SESSION_ERASED, data });

describe('the life a queued command belongs to', () => {
  it('given a session never erased, then a command of any time is of its life now', async () => {
    const store = SqliteEventStore.open(':memory:');
    await store.appendToStream(stream, [event(), event()]);
    expect(await readSessionLifeWhenStored(store, new LatestErasureTimes(), 'default', 's', 0)).toBe(0n);
  });

  it("given an erasure recorded at T, then a command stored at or before T is of the ended life, one after T of the new life, and a record of another session's erasure does not count", async () => {
    const store = SqliteEventStore.open(':memory:');
    const written = await store.appendToStream(stream, [event(), event(), event()]);
    await store.deleteStream(stream, { expectedRevision: written.nextExpectedRevision });
    const erasedAt = Date.parse('2026-12-06T10:00:00.000Z');
    await store.appendToStream(erasureStream('default'), [
      record({ sessionId: 's', erasedEvents: 3, erasedAt: new Date(erasedAt).toISOString(), lastRevision: '2' }),
      record({ sessionId: 'other', erasedEvents: 1, erasedAt: new Date(erasedAt + 60_000).toISOString(), lastRevision: '0' }),
    ]);
    await store.appendToStream(stream, [event()]); // written again: the life that starts at revision 3
    const erasures = new LatestErasureTimes();
    expect(await readSessionLifeWhenStored(store, erasures, 'default', 's', erasedAt - 1)).toBe(ENDED_LIFE);
    expect(await readSessionLifeWhenStored(store, erasures, 'default', 's', erasedAt)).toBe(ENDED_LIFE);
    expect(await readSessionLifeWhenStored(store, erasures, 'default', 's', erasedAt + 1)).toBe(3n);
  });

  /** A store whose session `s` was erased twice, the second erasure's record not written yet (the first's closes revision 0). */
  async function erasureInProgress() {
    const store = SqliteEventStore.open(':memory:');
    const first = await store.appendToStream(stream, [event()]);
    await store.deleteStream(stream, { expectedRevision: first.nextExpectedRevision });
    await store.appendToStream(erasureStream('default'), [
      record({ sessionId: 's', erasedEvents: 1, erasedAt: '2026-12-06T10:00:00.000Z', lastRevision: '0' }),
    ]);
    const second = await store.appendToStream(stream, [event(), event()]);
    await store.deleteStream(stream, { expectedRevision: second.nextExpectedRevision });
    expect(await store.streamIncarnation(stream)).toBe(3n);
    return store;
  }

  it('given an erasure whose record is written while the command waits for it (ncrecheck66 F1), then a command stored before it is of the ended life', async () => {
    const store = await erasureInProgress();
    const erasedAt = Date.parse('2026-12-06T11:00:00.000Z');
    let sleeps = 0;
    const erasures = new LatestErasureTimes(async () => {
      if (++sleeps === 3)
        await store.appendToStream(erasureStream('default'), [
          record({ sessionId: 's', erasedEvents: 2, erasedAt: new Date(erasedAt).toISOString(), lastRevision: '2' }),
        ]);
    });
    expect(await readSessionLifeWhenStored(store, erasures, 'default', 's', erasedAt - 5)).toBe(ENDED_LIFE);
    expect(sleeps).toBe(3);
    expect(await readSessionLifeWhenStored(store, erasures, 'default', 's', erasedAt + 5)).toBe(3n);
  });

  it('given an erasure interrupted before its record, then a command waits at most the bound and is of the life current now (remembered for the life)', async () => {
    const store = await erasureInProgress();
    let sleptMs = 0;
    const erasures = new LatestErasureTimes(async (ms) => {
      sleptMs += ms;
    });
    expect(await readSessionLifeWhenStored(store, erasures, 'default', 's', 0)).toBe(3n);
    expect(sleptMs).toBe(QUEUED_COMMAND_RECORD_WAIT_MS);
    expect(await readSessionLifeWhenStored(store, erasures, 'default', 's', 0)).toBe(3n);
    expect(sleptMs).toBe(QUEUED_COMMAND_RECORD_WAIT_MS);
  });
});
