/**
 * The life a queued command belongs to (newcomer ncnats66 F1): given a session and its erasures, when a command stored at
 * a time is received, then it is of the life current now unless the session's latest erasure came at or after it.
 */
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { erasureStream, SESSION_ERASED, type SessionErasedData } from '../events/erasure-events';
import { ENDED_LIFE, LatestErasureTimes, QUEUED_COMMAND_RECORD_WAIT_MS, readSessionLifeAt } from './life-when-stored';

const stream = sessionStream(sessionKey('default', 's'));
const event = () => ({ id: randomUUID(), type: 'ConversationEventAppended', data: { event: { id: randomUUID(), type: 'user', text: 'x' } } });
const record = (data: SessionErasedData) => ({ id: randomUUID(), type: SESSION_ERASED, data });

describe('the life a queued command belongs to', () => {
  it('given three lives, then a request of any time is of the life current then, however late its read ends (newcomer ncrace74 F1), and a record naming no last revision gives ENDED_LIFE', async () => {
    const store = SqliteEventStore.open(':memory:');
    const at = (minute: number) => Date.parse(`2026-12-07T10:${String(minute).padStart(2, '0')}:00.000Z`);
    const erase = async (lastRevision: bigint, minute: number, named = true) => {
      await store.deleteStream(stream, { expectedRevision: lastRevision });
      await store.appendToStream(erasureStream('default'), [
        record({ sessionId: 's', erasedEvents: 1, erasedAt: new Date(at(minute)).toISOString(), ...(named ? { lastRevision: String(lastRevision) } : {}) }),
      ]);
    };
    await store.appendToStream(stream, [event(), event()]); // life 0: revisions 0–1
    await erase(1n, 10);
    await store.appendToStream(stream, [event()]); // life 2: revision 2
    await erase(2n, 20);
    await store.appendToStream(stream, [event()]); // life 3, current
    const erasures = new LatestErasureTimes();
    expect(await readSessionLifeAt(store, erasures, 'default', 's', at(5))).toBe(0n);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', at(10))).toBe(0n);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', at(15))).toBe(2n);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', at(20))).toBe(2n);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', at(25))).toBe(3n);
    // A third erasure whose record, of an older build, names no last revision: a time before it is still placed by the records before it;
    await erase(3n, 30, false);
    await store.appendToStream(stream, [event()]); // life 4
    expect(await readSessionLifeAt(store, new LatestErasureTimes(), 'default', 's', at(25))).toBe(3n);
    expect(await readSessionLifeAt(store, new LatestErasureTimes(), 'default', 's', at(35))).toBe(4n);
    // a time after it and before a fourth erasure falls in a life whose first revision that record does not say.
    await erase(4n, 40);
    await store.appendToStream(stream, [event()]); // life 5
    expect(await readSessionLifeAt(store, new LatestErasureTimes(), 'default', 's', at(35))).toBe(ENDED_LIFE);
    expect(await readSessionLifeAt(store, new LatestErasureTimes(), 'default', 's', at(45))).toBe(5n);
  });

  it('given a session never erased, then a command of any time is of its life now', async () => {
    const store = SqliteEventStore.open(':memory:');
    await store.appendToStream(stream, [event(), event()]);
    expect(await readSessionLifeAt(store, new LatestErasureTimes(), 'default', 's', 0)).toBe(0n);
  });

  it("given an erasure recorded at T, then a command stored at or before T is of the life it ended, one after T of the new life, and a record of another session's erasure does not count", async () => {
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
    expect(await readSessionLifeAt(store, erasures, 'default', 's', erasedAt - 1)).toBe(0n);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', erasedAt)).toBe(0n);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', erasedAt + 1)).toBe(3n);
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

  it('given an erasure whose record is written while the command waits for it (ncrecheck66 F1), then a command stored before it is of the life it ended', async () => {
    const store = await erasureInProgress();
    const erasedAt = Date.parse('2026-12-06T11:00:00.000Z');
    let sleeps = 0;
    const erasures = new LatestErasureTimes(async () => {
      if (++sleeps === 3)
        await store.appendToStream(erasureStream('default'), [
          record({ sessionId: 's', erasedEvents: 2, erasedAt: new Date(erasedAt).toISOString(), lastRevision: '2' }),
        ]);
    });
    expect(await readSessionLifeAt(store, erasures, 'default', 's', erasedAt - 5)).toBe(1n);
    expect(sleeps).toBe(3);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', erasedAt + 5)).toBe(3n);
  });

  it('given an erasure interrupted before its record, then an erasure reads the life current now at once, without waiting or remembering it', async () => {
    const store = await erasureInProgress();
    let sleptMs = 0;
    const erasures = new LatestErasureTimes(async (ms) => {
      sleptMs += ms;
    });
    expect(await readSessionLifeAt(store, erasures, 'default', 's', 0, false)).toBe(3n);
    expect(sleptMs).toBe(0);
    // not remembered: a write that does wait still waits for the record
    expect(await readSessionLifeAt(store, erasures, 'default', 's', 0)).toBe(3n);
    expect(sleptMs).toBe(QUEUED_COMMAND_RECORD_WAIT_MS);
  });

  it('given an erasure interrupted before its record, then a command waits at most the bound and is of the life current now (remembered for the life)', async () => {
    const store = await erasureInProgress();
    let sleptMs = 0;
    const erasures = new LatestErasureTimes(async (ms) => {
      sleptMs += ms;
    });
    expect(await readSessionLifeAt(store, erasures, 'default', 's', 0)).toBe(3n);
    expect(sleptMs).toBe(QUEUED_COMMAND_RECORD_WAIT_MS);
    expect(await readSessionLifeAt(store, erasures, 'default', 's', 0)).toBe(3n);
    expect(sleptMs).toBe(QUEUED_COMMAND_RECORD_WAIT_MS);
  });
});
