/**
 * The SQLite store answers reads of the global log right after its own commits from the events it
 * just wrote (SqliteRecentEvents) instead of the file: the answers must be exactly what the file
 * holds, with no event of another writer skipped, nothing erased served, and nothing twice.
 * A second store instance on the same file plays another process and reads the file itself.
 * With the writer thread, a batch is in the file before its answer reaches the store: a read
 * meanwhile stops before it rather than reading it back from the file.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore, headToSkipTo, type EventData, type RecordedEvent } from '../src';
import { MAX_RECENT_EVENTS, MAX_RECENT_EVENT_TEXT, MAX_RECENT_TEXT, SqliteRecentEvents } from '../src/sqlite/sqlite-recent-events';
import { holdNextWriterAnswer } from './sqlite-writer-answers';
import { sharedValuesFrozen } from '../src/shared-value-freeze';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'es-recent-'));
  dirs.push(dir);
  return join(dir, 'events.sqlite');
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const ev = (data: unknown, metadata?: Record<string, unknown>): EventData => ({ id: randomUUID(), type: 'T', data, metadata });

/** Every event after `after`, page by page, as a subscriber reads them. */
async function readAllFrom(store: SqliteEventStore, after = 0n, page = 512): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for (;;) {
    const next = await store.readAll({ fromPosition: after, maxCount: page });
    if (next.length === 0) return out;
    out.push(...next);
    after = next[next.length - 1].position;
  }
}

/** How many times `store` reads the global log from its file. */
function fileReads(store: SqliteEventStore): () => number {
  let reads = 0;
  watchFileReads(store, () => (reads += 1));
  return () => reads;
}

/** Calls `onRead` with the positions of the rows of each read of the global log `store` makes from its file (with or without a stream prefix). */
function watchFileReads(store: SqliteEventStore, onRead: (positions: bigint[]) => void): void {
  type Statement = { all: (...args: unknown[]) => Array<{ position: bigint }> };
  const stmts = (store as unknown as { stmts: { readAll: Statement; readAllPrefix: Statement } }).stmts;
  for (const statement of [stmts.readAll, stmts.readAllPrefix]) {
    const all = statement.all.bind(statement);
    statement.all = (...args: unknown[]) => {
      const rows = all(...args);
      onRead(rows.map((r) => r.position));
      return rows;
    };
  }
}

/** Resolves once `store.readAll` (the global log, which its subscriptions read) has been called `count` more times. */
function readsOfTheLog(store: SqliteEventStore, count: number): Promise<void> {
  const readAll = store.readAll.bind(store);
  return new Promise((done) => {
    let calls = 0;
    store.readAll = (...args) => {
      if (++calls === count) {
        delete (store as Partial<SqliteEventStore>).readAll; // the class's method again
        done();
      }
      return readAll(...args);
    };
  });
}

describe.each([
  ["on the caller's thread", false],
  ['in the writer thread', true],
])('reads of the global log right after own commits (transactions %s)', (_label, writerThread) => {
  let file: string;
  let store: SqliteEventStore;
  let other: SqliteEventStore;
  beforeEach(() => {
    file = tempFile();
    store = SqliteEventStore.open(file, { pollIntervalMs: 50, writerThread });
    other = SqliteEventStore.open(file, { pollIntervalMs: 50 });
  });
  afterEach(async () => {
    await store.close();
    await other.close();
  });

  it('answers from what it wrote, without reading the file, exactly what the file holds', async () => {
    const reads = fileReads(store);
    await store.appendToStream('session-a', [ev({ text: 'héllo \u0000 \ud83d\ude00', n: [1, 2] }, { by: 'x' }), ev(null)]);
    await store.appendToStream('session-b', [ev({ deep: { a: [true, false, 'z'] } })]);
    const held = await readAllFrom(store);
    expect(reads()).toBe(1); // only the last, empty page
    expect(held).toHaveLength(3);
    expect(held).toEqual(await readAllFrom(other));
  });

  it('given data marked dataIsParsedJson, then the first read answers it as given (not parsed again), later reads parse its text; unmarked data is always parsed', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    const marked = { ...ev({ event: { id: 'u1', text: 'x' }, metadata }), dataIsParsedJson: true };
    const plain = ev({ n: 1 });
    await store.appendToStream('session-a', [marked, plain]);
    const parses = jest.spyOn(JSON, 'parse');
    try {
      const [first, second] = await readAllFrom(store);
      expect(first.data).toBe(marked.data);
      expect(second.data).not.toBe(plain.data);
      expect(second.data).toEqual(plain.data);
      // the unmarked data and each event's metadata column are parsed, the marked data never
      expect(parses.mock.calls.map(([text]) => text)).not.toContain(JSON.stringify(marked.data));
      const again = await readAllFrom(store);
      expect(again[0].data).not.toBe(marked.data);
      expect(again).toEqual(await readAllFrom(other));
      expect(first).toEqual(again[0]);
    } finally {
      parses.mockRestore();
    }
  });

  it('the data it answers as given is frozen in test runs: a reader (or the appender) that changes it fails where it does', async () => {
    expect(sharedValuesFrozen()).toBe(true);
    const marked = { ...ev({ event: { id: 'u1', text: 'x', toolCalls: [{ id: 'c1' }] } }), dataIsParsedJson: true };
    await store.appendToStream('session-a', [marked]);
    const [first] = await readAllFrom(store);
    expect(first.data).toBe(marked.data);
    const data = first.data as { event: { text: string; toolCalls: Array<{ id: string }> } };
    expect(() => (data.event.text = 'changed')).toThrow(TypeError);
    expect(() => data.event.toolCalls.push({ id: 'c2' })).toThrow(TypeError);
    expect(() => (data.event.toolCalls[0].id = 'c2')).toThrow(TypeError);
    expect((await readAllFrom(other))[0].data).toEqual({ event: { id: 'u1', text: 'x', toolCalls: [{ id: 'c1' }] } });
  });

  it("never skips another writer's event between two of its own", async () => {
    await store.appendToStream('session-a', [ev({ n: 1 })]);
    await other.appendToStream('session-b', [ev({ n: 2 })]);
    await store.appendToStream('session-a', [ev({ n: 3 })]);
    await other.appendToStream('session-b', [ev({ n: 4 }), ev({ n: 5 })]);
    await store.appendToStream('session-a', [ev({ n: 6 })]);
    const seen = await readAllFrom(store, 0n, 2);
    expect(seen.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(seen).toEqual(await readAllFrom(other));
    // From every starting point.
    for (const start of seen) expect(await readAllFrom(store, start.position)).toEqual(await readAllFrom(other, start.position));
  });

  it("reads the file when another writer's event comes before the page is full: a short page is the log's head", async () => {
    await store.appendToStream('session-a', [ev({ n: 1 })]);
    await other.appendToStream('session-b', [ev({ n: 2 })]);
    await store.appendToStream('session-a', [ev({ n: 3 })]);
    const reads = fileReads(store);
    const page = await store.readAll({ fromPosition: 0n, maxCount: 512 });
    expect(page.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3]);
    expect(reads()).toBe(1);
  });

  it('serves no event of a deleted stream, held or not', async () => {
    await store.appendToStream('session-gone', [ev({ secret: 1 }), ev({ secret: 2 })]);
    await store.appendToStream('session-kept', [ev({ kept: 1 })]);
    await store.deleteStream('session-gone');
    const left = await readAllFrom(store);
    expect(left.map((e) => e.streamId)).toEqual(['session-kept']);
    expect(left).toEqual(await readAllFrom(other));
  });

  it('holds a maximum-size event (1,000,000 ideographs): the projector does not read it back from the file', async () => {
    const reads = fileReads(store);
    const text = Array.from({ length: 1_000_000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('');
    await store.appendToStream('session-big', [ev({ text }, { by: 'x' }), ev({ n: 2 })]);
    const held = await readAllFrom(store);
    expect(reads()).toBe(1); // only the last, empty page
    expect(held).toEqual(await readAllFrom(other));
  });

  it('holds a resend once, and reads events too large to hold from the file, with what follows them', async () => {
    const first = [ev({ n: 1 })];
    await store.appendToStream('session-r', first);
    await store.appendToStream('session-r', first, { expectedRevision: 'no_stream' }); // idempotent resend: nothing written
    await store.appendToStream('session-r', [ev({ big: 'x'.repeat(MAX_RECENT_EVENT_TEXT) }), ev({ n: 2 })]);
    await store.appendToStream('session-r', [ev({ n: 3 })]);
    const all = await readAllFrom(store);
    expect(all.map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n]);
    expect(all).toEqual(await readAllFrom(other));
  });

  it(`reads the oldest from the file once more than ${MAX_RECENT_EVENTS} events were written`, async () => {
    const batches = Array.from({ length: 50 }, (_, b) => Array.from({ length: 100 }, (_, i) => ev({ n: b * 100 + i })));
    await Promise.all(batches.map((events, b) => store.appendToStream(`session-${b}`, events)));
    const all = await readAllFrom(store, 0n, 777);
    expect(all).toHaveLength(5000);
    expect(all).toEqual(await readAllFrom(other, 0n, 777));
  });
});

describe('reads of the global log while the writer thread has committed a batch whose answer has not arrived', () => {
  let file: string;
  let store: SqliteEventStore;
  let other: SqliteEventStore;
  /** Delivers the answer {@link holdNextAnswer} holds (once; also when a test failed before it did). */
  let release: () => void;
  beforeEach(() => {
    file = tempFile();
    store = SqliteEventStore.open(file, { pollIntervalMs: 10, writerThread: true });
    other = SqliteEventStore.open(file, { pollIntervalMs: 10 });
    release = () => undefined;
  });
  afterEach(async () => {
    release();
    await store.close();
    await other.close();
  });

  /**
   * Holds back the writer thread's next answer: resolves once it arrived (the batch is committed:
   * the thread answers after COMMIT returned) with a function that delivers it.
   */
  function holdNextAnswer(): Promise<() => void> {
    const held = holdNextWriterAnswer(store);
    release = held.deliver;
    return held.arrived.then(() => held.deliver);
  }

  it("given an append committed in the file but not yet answered, when the log is read, then the read stops before it (another writer's earlier event included) and it is never read from the file, but from memory once answered", async () => {
    const fromFile: bigint[] = [];
    watchFileReads(store, (positions) => fromFile.push(...positions));
    await store.appendToStream('session-a', [ev({ n: 1 })]); // position 1; starts the writer thread
    await other.appendToStream('session-o', [ev({ n: 2 })]); // position 2, another process's
    const answer = holdNextAnswer();
    const big = ev({ text: 'x'.repeat(200_000) });
    const appended = store.appendToStream('session-big', [big]); // position 3
    const deliver = await answer;
    expect((await other.readAll({ fromPosition: 2n })).map((e) => e.id)).toEqual([big.id]); // committed in the file
    await other.appendToStream('session-o', [ev({ n: 4 })], { expectedRevision: 0n }); // position 4, after it

    // While unanswered: everything up to where the batch was handed over (its own event from
    // memory, a short page at its own head; then the other's from the file), nothing of it or after it.
    expect((await store.readAll({ fromPosition: 0n })).map((e) => e.position)).toEqual([1n]);
    expect((await store.readAll({ fromPosition: 1n })).map((e) => e.position)).toEqual([2n]);
    expect(await store.readAll({ fromPosition: 2n })).toEqual([]);
    expect(await store.readAll({ fromPosition: 2n, streamPrefix: 'session-' })).toEqual([]);

    deliver();
    await appended;
    // Where a subscriber that read the first two goes on: the append from memory, then the other's from the file.
    const rest = await readAllFrom(store, 2n);
    expect(rest.map((e) => e.position)).toEqual([3n, 4n]);
    expect(fromFile).not.toContain(3n);
    expect(rest).toEqual(await readAllFrom(other, 2n));
  });

  it('given an append committed but not yet answered, then the readable head stops before it (the head counts it), no read finds an event up to the readable head, and headToSkipTo never passes it; another store on the file, with nothing in flight, reads it and may skip to it', async () => {
    await store.appendToStream('session-a', [ev({ n: 1 })]); // position 1; starts the writer thread
    const gone = await other.appendToStream('session-gone', [ev({ n: 2 })]); // position 2, another process's
    await other.deleteStream('session-gone'); // a deleted tail
    expect(await store.readableHead()).toBe(2n);
    expect(await headToSkipTo(store, 1n)).toBe(2n);
    const answer = holdNextAnswer();
    const appended = store.appendToStream('session-held', [ev({ n: 3 }), ev({ n: 4 })]); // positions 3 and 4
    const deliver = await answer;

    expect(await store.headPosition()).toBe(4n); // sqlite_sequence: committed by the thread
    expect(await store.readableHead()).toBe(gone.position);
    expect(await store.readAll({ fromPosition: 2n })).toEqual([]);
    expect(await headToSkipTo(store, 1n)).toBe(2n);
    expect(await headToSkipTo(store, 2n)).toBeNull();
    // The other store has nothing in flight: it reads the batch from the file, so its readable head is past it.
    expect(await other.readableHead()).toBe(4n);
    expect((await other.readAll({ fromPosition: 2n })).map((e) => e.position)).toEqual([3n, 4n]);
    expect(await headToSkipTo(other, 2n)).toBeNull();

    deliver();
    await appended;
    expect(await store.readableHead()).toBe(4n);
    expect((await store.readAll({ fromPosition: 2n })).map((e) => e.position)).toEqual([3n, 4n]);
    expect(await headToSkipTo(store, 2n)).toBeNull();
  });

  it('given a readable head answered while nothing was in flight, when a batch is handed over and the head cannot be read then, then reads still reach that readable head', async () => {
    await store.appendToStream('session-a', [ev({ n: 1 })]); // starts the writer thread
    await other.appendToStream('session-o', [ev({ n: 2 })]); // position 2, another process's
    expect(await store.readableHead()).toBe(2n);
    // The handover reads the head to set the reads' limit; that read fails now (it falls back to what it knew).
    const stmts = (store as unknown as { stmts: { head: { get: () => unknown } } }).stmts;
    const get = stmts.head.get.bind(stmts.head);
    stmts.head.get = () => {
      throw new Error('disk I/O error');
    };
    const answer = holdNextAnswer();
    const appended = store.appendToStream('session-held', [ev({ n: 3 })]);
    const deliver = await answer;
    stmts.head.get = get;
    expect(await store.readableHead()).toBe(2n);
    expect((await store.readAll({ fromPosition: 1n })).map((e) => e.position)).toEqual([2n]);
    deliver();
    await appended;
  });

  it('given a subscription following the log, when an append is committed but not yet answered, then the subscription gets every event once, in order, and the append from memory', async () => {
    const fromFile: bigint[] = [];
    watchFileReads(store, (positions) => fromFile.push(...positions));
    await store.appendToStream('session-a', [ev({ n: 1 })]); // starts the writer thread
    const subscription = store.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ position: 1n });
    const next = iterator.next();
    const answer = holdNextAnswer();
    const appended = store.appendToStream('session-big', [ev({ text: 'x'.repeat(200_000) })]); // position 2
    const deliver = await answer;
    await other.appendToStream('session-o', [ev({ n: 3 })]); // position 3
    await readsOfTheLog(store, 1); // the subscription polls meanwhile (pollIntervalMs)
    deliver();
    await appended;
    expect((await next).value).toMatchObject({ position: 2n, streamId: 'session-big' });
    expect((await iterator.next()).value).toMatchObject({ position: 3n, streamId: 'session-o' });
    await subscription.close();
    expect(fromFile).not.toContain(2n);
  });
});

describe('SqliteRecentEvents bounds', () => {
  const serialized = (n: number, size: number) =>
    Array.from({ length: n }, (_, i) => ({ id: `id-${i}`, type: 'T', data: JSON.stringify('x'.repeat(size)), metadata: null }));

  it(`holds at most ${MAX_RECENT_TEXT} code units of JSON text: the oldest events go first`, () => {
    const recent = new SqliteRecentEvents();
    const perEvent = 60_000;
    const total = Math.ceil((2 * MAX_RECENT_TEXT) / perEvent);
    for (let p = 1; p <= total; p++)
      recent.appended('s', serialized(1, perEvent), { nextExpectedRevision: BigInt(p - 1), position: BigInt(p), writtenAtMs: 0 });
    const fits = Math.floor(MAX_RECENT_TEXT / (perEvent + 2));
    expect(recent.readAfter(BigInt(total - fits - 1), 10_000)).toBeNull();
    expect(recent.readAfter(BigInt(total - fits), 10_000)).toHaveLength(fits);
  });
});
