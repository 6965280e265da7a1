/// <reference types="jest" />
/**
 * The event store contract (issue 3, acceptance 1): one suite that every adapter must pass.
 * Call {@link eventStoreContract} from an adapter's spec. Streams and prefixes are unique per test,
 * so the suite can run against a shared server.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import {
  DuplicateEventIdError,
  WrongExpectedRevisionError,
  WrongIncarnationError,
  satisfies,
  type ExpectedRevision,
  headToSkipTo,
  type EventData,
  type EventStore,
  type RecordedEvent,
  type Subscription,
} from '../src';

/** How an adapter's spec provides a store to the contract. */
export interface ContractTarget {
  /** Creates (or connects to) the store under test, once per suite. */
  setup(): Promise<EventStore>;
  /** Releases what setup created (the store is closed by the contract). */
  teardown?(): Promise<void>;
}

const ev = (type = 'Noted', data: unknown = { n: Math.random() }, id = randomUUID()): EventData => ({ id, type, data });
const prefix = (): string => `ct${randomUUID().replace(/-/g, '').slice(0, 12)}-`;

async function expectRejects<E extends Error>(promise: Promise<unknown>, cls: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(cls);
    return error as E;
  }
  throw new Error(`expected ${cls.name}, but the call succeeded`);
}

/** Collects events from a subscription in the background; `until(n)` resolves once n have arrived. */
class Collector {
  readonly events: RecordedEvent[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];
  readonly done: Promise<void>;

  constructor(readonly sub: Subscription) {
    this.done = (async () => {
      for await (const e of sub) {
        this.events.push(e);
        this.waiters = this.waiters.filter((w) => (this.events.length >= w.n ? (w.resolve(), false) : true));
      }
    })();
  }

  until(n: number, timeoutMs = 15000): Promise<void> {
    if (this.events.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`subscription delivered ${this.events.length} of ${n} events`)), timeoutMs);
      this.waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

/** Registers the contract suite for one adapter. */
export function eventStoreContract(name: string, target: ContractTarget): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    beforeAll(async () => {
      store = await target.setup();
    }, 240_000);
    afterAll(async () => {
      await store?.close();
      await target.teardown?.();
    }, 60_000);

    describe('expected revision', () => {
      it("'no_stream' succeeds on a new stream and fails once it exists, with expected and actual", async () => {
        const s = `${prefix()}session-a`;
        const first = await store.appendToStream(s, [ev()], { expectedRevision: 'no_stream' });
        expect(first.nextExpectedRevision).toBe(0n);
        const err = await expectRejects(store.appendToStream(s, [ev()], { expectedRevision: 'no_stream' }), WrongExpectedRevisionError);
        expect(err.stream).toBe(s);
        expect(err.expected).toBe('no_stream');
        expect(err.actual).toBe(0n);
        expect(await store.readStream(s)).toHaveLength(1);
      });

      it("'any' appends whatever the state", async () => {
        const s = `${prefix()}session-a`;
        expect((await store.appendToStream(s, [ev()], { expectedRevision: 'any' })).nextExpectedRevision).toBe(0n);
        expect((await store.appendToStream(s, [ev(), ev()])).nextExpectedRevision).toBe(2n);
        expect(await store.streamRevision(s)).toBe(2n);
      });

      it("'stream_exists' fails on a missing stream (actual 'no_stream') and succeeds on an existing one", async () => {
        const s = `${prefix()}session-a`;
        const err = await expectRejects(store.appendToStream(s, [ev()], { expectedRevision: 'stream_exists' }), WrongExpectedRevisionError);
        expect(err.expected).toBe('stream_exists');
        expect(err.actual).toBe('no_stream');
        expect(await store.streamRevision(s)).toBeNull();
        await store.appendToStream(s, [ev()]);
        expect((await store.appendToStream(s, [ev()], { expectedRevision: 'stream_exists' })).nextExpectedRevision).toBe(1n);
      });

      it('an exact revision succeeds when it matches and otherwise raises the typed error', async () => {
        const s = `${prefix()}session-a`;
        const missing = await expectRejects(store.appendToStream(s, [ev()], { expectedRevision: 0n }), WrongExpectedRevisionError);
        expect(missing.expected).toBe(0n);
        expect(missing.actual).toBe('no_stream');
        await store.appendToStream(s, [ev()], { expectedRevision: 'no_stream' });
        expect((await store.appendToStream(s, [ev()], { expectedRevision: 0n })).nextExpectedRevision).toBe(1n);
        const stale = await expectRejects(store.appendToStream(s, [ev()], { expectedRevision: 0n }), WrongExpectedRevisionError);
        expect(stale.expected).toBe(0n);
        expect(stale.actual).toBe(1n);
        const ahead = await expectRejects(store.appendToStream(s, [ev()], { expectedRevision: 5n }), WrongExpectedRevisionError);
        expect(ahead.actual).toBe(1n);
        expect(await store.streamRevision(s)).toBe(1n);
      });
    });

    describe('atomic multi-event appends', () => {
      it('writes every event of one append contiguously and returns the last revision and position', async () => {
        const p = prefix();
        const s = `${p}session-a`;
        const events = [ev('A'), ev('B'), ev('C')];
        const r = await store.appendToStream(s, events, { expectedRevision: 'no_stream' });
        expect(r.nextExpectedRevision).toBe(2n);
        const read = await store.readStream(s);
        expect(read.map((e) => [e.id, e.type, e.revision])).toEqual(events.map((e, i) => [e.id, e.type, BigInt(i)]));
        expect(read.map((e) => e.data)).toEqual(events.map((e) => e.data));
        expect(read[2].position).toBe(r.position);
        expect(read[0].position < read[1].position && read[1].position < read[2].position).toBe(true);
        const all = await store.readAll({ streamPrefix: p });
        expect(all.map((e) => e.id)).toEqual(events.map((e) => e.id));
      });

      it('writes none of the events when the expected revision does not match', async () => {
        const s = `${prefix()}session-a`;
        await store.appendToStream(s, [ev()]);
        const batch = [ev(), ev(), ev()];
        await expectRejects(store.appendToStream(s, batch, { expectedRevision: 'no_stream' }), WrongExpectedRevisionError);
        const read = await store.readStream(s);
        expect(read).toHaveLength(1);
        expect(read.some((e) => batch.some((b) => b.id === e.id))).toBe(false);
      });

      it('writes none of the events when one of them is invalid', async () => {
        const s = `${prefix()}session-a`;
        await expect(store.appendToStream(s, [ev(), { id: 'not-a-uuid', type: 'X', data: {} }])).rejects.toThrow(TypeError);
        await expect(store.appendToStream(s, [ev(), { ...ev(), data: undefined }])).rejects.toThrow(TypeError);
        expect(await store.readStream(s)).toEqual([]);
        expect(await store.streamRevision(s)).toBeNull();
      });
    });

    describe('idempotency', () => {
      it('re-appending the same ids at the same expected revision returns the original result and writes nothing', async () => {
        const p = prefix();
        const s = `${p}session-a`;
        const batch = [ev('A', { a: 1 }), ev('B', { b: [1, 2] })];
        const original = await store.appendToStream(s, batch, { expectedRevision: 'no_stream' });
        const retried = await store.appendToStream(s, batch, { expectedRevision: 'no_stream' });
        expect(retried).toEqual(original);
        const next = [ev('C', 'text')];
        const r2 = await store.appendToStream(s, next, { expectedRevision: original.nextExpectedRevision });
        expect(await store.appendToStream(s, next, { expectedRevision: original.nextExpectedRevision })).toEqual(r2);
        // an old retry after the stream moved on still answers with its original result
        expect(await store.appendToStream(s, batch, { expectedRevision: 'no_stream' })).toEqual(original);
        const read = await store.readStream(s);
        expect(read.map((e) => e.id)).toEqual([...batch, ...next].map((e) => e.id));
        expect(await store.readAll({ streamPrefix: p })).toHaveLength(3);
      });

      it('rejects the same id with other content and keeps the original', async () => {
        const s = `${prefix()}session-a`;
        const original = ev('A', { v: 1 });
        await store.appendToStream(s, [original], { expectedRevision: 'no_stream' });
        const err = await expectRejects(store.appendToStream(s, [{ ...original, data: { v: 2 } }], { expectedRevision: 'no_stream' }), DuplicateEventIdError);
        expect(err.eventId).toBe(original.id);
        await expectRejects(store.appendToStream(s, [{ ...original, type: 'B' }], { expectedRevision: 'no_stream' }), DuplicateEventIdError);
        const read = await store.readStream(s);
        expect(read).toHaveLength(1);
        expect(read[0].data).toEqual({ v: 1 });
        expect(read[0].type).toBe('A');
      });
    });

    describe('reads', () => {
      let s: string;
      let ids: string[];
      beforeAll(async () => {
        s = `${prefix()}session-r`;
        const events = [0, 1, 2, 3, 4].map((i) => ({ ...ev('R', { i }), metadata: { seq: i } }));
        ids = events.map((e) => e.id);
        await store.appendToStream(s, events.slice(0, 2));
        await store.appendToStream(s, events.slice(2));
      });

      it('reads a whole stream forwards with data, metadata, stream and revisions', async () => {
        const read = await store.readStream(s);
        expect(read.map((e) => e.id)).toEqual(ids);
        expect(read.map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n, 4n]);
        expect(read[3]).toMatchObject({ streamId: s, type: 'R', data: { i: 3 }, metadata: { seq: 3 } });
        expect(read[3].created).toBeInstanceOf(Date);
      });

      it('reads forwards from a revision with a limit', async () => {
        const read = await store.readStream(s, { fromRevision: 2n, maxCount: 2 });
        expect(read.map((e) => e.revision)).toEqual([2n, 3n]);
      });

      it('reads backwards from a revision with a limit, and from the end', async () => {
        expect((await store.readStream(s, { direction: 'backwards', fromRevision: 3n, maxCount: 2 })).map((e) => e.revision)).toEqual([3n, 2n]);
        expect((await store.readStream(s, { direction: 'backwards', maxCount: 1 })).map((e) => e.id)).toEqual([ids[4]]);
        expect((await store.readStream(s, { direction: 'backwards' })).map((e) => e.revision)).toEqual([4n, 3n, 2n, 1n, 0n]);
      });

      // Time travel reads backwards from the revision asked, which may be past the end (it then answers out of range).
      it('reads backwards from a revision past the end as from the end', async () => {
        expect((await store.readStream(s, { direction: 'backwards', fromRevision: 9n, maxCount: 2 })).map((e) => e.revision)).toEqual([4n, 3n]);
      });

      it("reads up to toRevision in the read's direction, inclusive", async () => {
        expect((await store.readStream(s, { fromRevision: 1n, toRevision: 3n })).map((e) => e.revision)).toEqual([1n, 2n, 3n]);
        expect((await store.readStream(s, { fromRevision: 1n, toRevision: 3n, maxCount: 2 })).map((e) => e.revision)).toEqual([1n, 2n]);
        expect((await store.readStream(s, { fromRevision: 'start', toRevision: 0n })).map((e) => e.revision)).toEqual([0n]);
        expect((await store.readStream(s, { direction: 'backwards', fromRevision: 3n, toRevision: 2n })).map((e) => e.revision)).toEqual([3n, 2n]);
        expect((await store.readStream(s, { direction: 'backwards', toRevision: 3n, maxCount: 5 })).map((e) => e.revision)).toEqual([4n, 3n]);
        expect(await store.readStream(s, { fromRevision: 3n, toRevision: 2n })).toEqual([]);
      });

      it('reads a missing stream as empty', async () => {
        expect(await store.readStream(`${prefix()}session-none`)).toEqual([]);
        expect(await store.streamRevision(`${prefix()}session-none`)).toBeNull();
      });
    });

    describe('global reads', () => {
      it('reads the global log after a position, in order, filtered by prefix, with a limit', async () => {
        const p = prefix();
        const a = [ev(), ev()];
        const b = [ev()];
        const c = [ev(), ev()];
        const ra = await store.appendToStream(`${p}session-a`, a);
        await store.appendToStream(`${p}session-b`, b);
        await store.appendToStream(`${prefix()}session-other`, [ev()]);
        const rc = await store.appendToStream(`${p}session-a`, c);
        const after = await store.readAll({ fromPosition: ra.position, streamPrefix: p });
        expect(after.map((e) => e.id)).toEqual([...b, ...c].map((e) => e.id));
        expect(after.map((e) => e.streamId)).toEqual([`${p}session-b`, `${p}session-a`, `${p}session-a`]);
        for (let i = 1; i < after.length; i++) expect(after[i].position > after[i - 1].position).toBe(true);
        expect(after[after.length - 1].position).toBe(rc.position);
        expect((await store.readAll({ fromPosition: ra.position, streamPrefix: p, maxCount: 2 })).map((e) => e.id)).toEqual([b[0].id, c[0].id]);
        expect(await store.readAll({ fromPosition: rc.position, streamPrefix: p })).toEqual([]);
        const unfiltered = await store.readAll({ fromPosition: ra.position, maxCount: 100 });
        expect(unfiltered.some((e) => !e.streamId.startsWith(p))).toBe(true);
        expect(await store.headPosition()).toBe(rc.position);
      });

      it('records times that never decrease in position order, under concurrent writers (property): a reader that keeps the newest time it saw misses nothing by asking again "at or after" it', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 2, max: 20 }),
            fc.integer({ min: 1, max: 6 }),
            fc.integer({ min: 1, max: 3 }),
            fc.boolean(),
            async (writers, appendsEach, eventsEach, withIncarnation) => {
              const p = prefix();
              const from = await store.headPosition();
              // Each writer appends one after another to its own stream; the writers run at once.
              await Promise.all(
                Array.from({ length: writers }, async (_, w) => {
                  for (let a = 0; a < appendsEach; a++) {
                    const events = Array.from({ length: eventsEach }, () => ev());
                    await store.appendToStream(`${p}session-${w}`, events, withIncarnation ? { incarnation: 0n } : {});
                  }
                }),
              );
              const log = await store.readAll({ fromPosition: from, streamPrefix: p, maxCount: 10_000 });
              expect(log).toHaveLength(writers * appendsEach * eventsEach);
              const backwards = log
                .slice(1)
                .map((e, i) => ({ previous: log[i], e }))
                .filter(({ previous, e }) => e.created.getTime() < previous.created.getTime())
                .map(({ previous, e }) => `${e.position} at ${e.created.toISOString()} after ${previous.position} at ${previous.created.toISOString()}`);
              expect(backwards).toEqual([]);
            },
          ),
          // The first run is the load that showed it on PostgreSQL (newcomer nctime, F1): 20 writers at once.
          { numRuns: 8, examples: [[20, 6, 2, false]] },
        );
      });

      it('the readable head reaches every answered append and is at most the head; past a deleted tail a reader skips to it when the deleted events are gone (SQLite, PostgreSQL), reads them where they stay (KurrentDB, until a scavenge)', async () => {
        const p = prefix();
        const kept = await store.appendToStream(`${p}session-kept`, [ev()]);
        expect(await store.readableHead()).toBeGreaterThanOrEqual(kept.position);
        const gone = await store.appendToStream(`${p}session-gone`, [ev(), ev()]);
        await store.deleteStream(`${p}session-gone`);
        const readable = await store.readableHead();
        expect(readable).toBe(gone.position);
        expect(await store.headPosition()).toBeGreaterThanOrEqual(readable);
        const left = await store.readAll({ fromPosition: kept.position });
        expect(left.every((e) => e.streamId === `${p}session-gone`)).toBe(true);
        expect(await headToSkipTo(store, kept.position)).toBe(left.length === 0 ? gone.position : null);
        expect(await headToSkipTo(store, gone.position)).toBeNull();
      });

      it('reads the one event at a global position, and null past the head or where a deleted stream was', async () => {
        const p = prefix();
        const a = [ev(), ev()];
        const written = await store.appendToStream(`${p}session-a`, a);
        const [first, second] = await store.readStream(`${p}session-a`);
        const at = await store.eventAt(second.position);
        expect(at).toEqual(second);
        expect(at?.position).toBe(written.position);
        expect((await store.eventAt(first.position))?.id).toBe(a[0].id);
        expect(await store.eventAt((await store.headPosition()) + 1_000_000n)).toBeNull();
        await store.deleteStream(`${p}session-a`);
        // SQLite and PostgreSQL delete the rows; KurrentDB keeps soft-deleted events in $all until a scavenge.
        const deleted = await store.eventAt(second.position);
        if (deleted !== null) expect(deleted.id).toBe(a[1].id);
      });
    });

    describe('subscription to the global log', () => {
      it('from a checkpoint delivers exactly the events after it, in order, then live ones', async () => {
        const p = prefix();
        const r: { position: bigint }[] = [];
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const e = ev('S', { i });
          ids.push(e.id);
          r.push(await store.appendToStream(`${p}session-${i % 2}`, [e]));
        }
        await store.appendToStream(`${prefix()}session-noise`, [ev()]);
        const c = new Collector(store.subscribeToAll({ fromPosition: r[0].position, streamPrefix: p }));
        await c.until(2);
        for (let i = 3; i < 5; i++) {
          const e = ev('S', { i });
          ids.push(e.id);
          await store.appendToStream(`${p}session-${i % 2}`, [e]);
        }
        const last = [ev('S', { i: 5 }), ev('S', { i: 6 })];
        ids.push(...last.map((e) => e.id));
        await store.appendToStream(`${p}session-0`, last);
        await c.until(6);
        await c.sub.close();
        await c.done;
        expect(c.events.map((e) => e.id)).toEqual(ids.slice(1));
        expect(c.events.every((e) => e.streamId.startsWith(p))).toBe(true);
        for (let i = 1; i < c.events.length; i++) expect(c.events[i].position > c.events[i - 1].position).toBe(true);
      });

      it('from the beginning with a prefix delivers the whole category, and resumes from its last checkpoint', async () => {
        const p = prefix();
        const events = [ev(), ev(), ev()];
        await store.appendToStream(`${p}session-x`, events);
        const first = new Collector(store.subscribeToAll({ streamPrefix: p }));
        await first.until(3);
        await first.sub.close();
        await first.done;
        expect(first.events.map((e) => e.id)).toEqual(events.map((e) => e.id));
        const checkpoint = first.events[2].position;
        const more = ev();
        await store.appendToStream(`${p}session-y`, [more]);
        const resumed = new Collector(store.subscribeToAll({ fromPosition: checkpoint, streamPrefix: p }));
        await resumed.until(1);
        const marker = ev();
        await store.appendToStream(`${p}session-y`, [marker]);
        await resumed.until(2);
        await resumed.sub.close();
        await resumed.done;
        expect(resumed.events.map((e) => e.id)).toEqual([more.id, marker.id]);
      });

      it('ends the iteration when closed while waiting for live events', async () => {
        const sub = store.subscribeToAll({ streamPrefix: prefix() });
        const c = new Collector(sub);
        await sub.close();
        await c.done;
        expect(c.events).toEqual([]);
      });
    });

    describe('deleteStream', () => {
      it('removes the stream: reads are empty, the revision is null, and appending again is allowed', async () => {
        const s = `${prefix()}session-d`;
        const kept = `${prefix()}session-k`;
        await store.appendToStream(s, [ev(), ev()]);
        await store.appendToStream(kept, [ev()]);
        await store.deleteStream(s);
        expect(await store.readStream(s)).toEqual([]);
        expect(await store.streamRevision(s)).toBeNull();
        expect(await store.readStream(kept)).toHaveLength(1);
        const again = ev();
        await store.appendToStream(s, [again]);
        expect((await store.readStream(s)).map((e) => e.id)).toEqual([again.id]);
        await store.deleteStream(`${prefix()}session-never-existed`);
      });

      it("never reuses a deleted stream's revisions: appending again continues after its last one, as KurrentDB does after a soft delete", async () => {
        const s = `${prefix()}session-r`;
        await store.appendToStream(s, [ev(), ev(), ev()]);
        await store.deleteStream(s);
        // The stream does not exist, so `no_stream` holds, but its old revisions are not reused:
        // a writer that decided on the deleted stream at revision 2 is refused by the check.
        const again = await store.appendToStream(s, [ev()], { expectedRevision: 'no_stream' });
        expect(again.nextExpectedRevision).toBe(3n);
        expect((await store.readStream(s)).map((e) => e.revision)).toEqual([3n]);
        expect(await store.streamRevision(s)).toBe(3n);
        const stale = await store.appendToStream(s, [ev()], { expectedRevision: 2n }).catch((e: unknown) => e);
        expect(stale).toMatchObject({ expected: 2n, actual: 3n });
        await store.deleteStream(s, { expectedRevision: 3n });
        const stale2 = await store.appendToStream(s, [ev()], { expectedRevision: 3n }).catch((e: unknown) => e);
        expect(stale2).toBeInstanceOf(WrongExpectedRevisionError);
        expect(stale2).toMatchObject({ expected: 3n, actual: 'no_stream' });
        expect((await store.appendToStream(s, [ev(), ev()])).nextExpectedRevision).toBe(5n);
        expect((await store.readStream(s, { direction: 'backwards' })).map((e) => e.revision)).toEqual([5n, 4n]);
      });

      it('answers a resend of the first append to a deleted stream written again with `no_stream` with its original result', async () => {
        const s = `${prefix()}session-rr`;
        await store.appendToStream(s, [ev(), ev()]);
        await store.deleteStream(s);
        const first = [ev(), ev()];
        const original = await store.appendToStream(s, first, { expectedRevision: 'no_stream' });
        expect(original.nextExpectedRevision).toBe(3n);
        await store.appendToStream(s, [ev()]);
        expect(await store.appendToStream(s, first, { expectedRevision: 'no_stream' })).toEqual(original);
        // Not the stream's first events: a conflict, as for any stream.
        const later = await store.appendToStream(s, [ev()]);
        const notFirst = await store.appendToStream(s, [first[1]], { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
        expect(notFirst).toMatchObject({ expected: 'no_stream', actual: later.nextExpectedRevision });
      });

      it("answers that resend also when the new life's revisions gain a decimal digit (9 to 10, 99 to 100): revisions are ordered as numbers, not text", async () => {
        for (const [deleted, written] of [
          [9, 2],
          [8, 3],
          [99, 2],
        ] as const) {
          const s = `${prefix()}session-rd`;
          await store.appendToStream(
            s,
            Array.from({ length: deleted }, () => ev()),
          );
          await store.deleteStream(s);
          const incarnation = await store.streamIncarnation(s);
          const first = Array.from({ length: written }, () => ev());
          const original = await store.appendToStream(s, first, { expectedRevision: 'no_stream' });
          expect(original.nextExpectedRevision).toBe(BigInt(deleted + written - 1));
          expect(await store.appendToStream(s, first, { expectedRevision: 'no_stream' })).toEqual(original);
          expect(await store.appendToStream(s, first, { expectedRevision: 'no_stream', incarnation })).toEqual(original);
        }
      });

      it('answers a resend of the first append after a deletion with its original result, whatever the revisions either side (property)', async () => {
        await fc.assert(
          // Half the runs end the deleted life just before a power of ten, so the new one crosses it.
          fc.asyncProperty(
            fc.oneof(fc.integer({ min: 1, max: 120 }), fc.constantFrom(7, 8, 9, 97, 98, 99)),
            fc.integer({ min: 1, max: 4 }),
            fc.boolean(),
            async (deleted, written, withIncarnation) => {
              const s = `${prefix()}session-rp`;
              await store.appendToStream(
                s,
                Array.from({ length: deleted }, () => ev()),
              );
              await store.deleteStream(s);
              const options = withIncarnation ? { incarnation: await store.streamIncarnation(s) } : {};
              const first = Array.from({ length: written }, () => ev());
              const original = await store.appendToStream(s, first, { expectedRevision: 'no_stream', ...options });
              expect(await store.appendToStream(s, first, { expectedRevision: 'no_stream', ...options })).toEqual(original);
              expect((await store.readStream(s)).map((e) => e.revision)).toEqual(first.map((_, i) => BigInt(deleted + i)));
            },
          ),
          { numRuns: 25 },
        );
      });

      it('names each life of a stream by its incarnation: 0n until a deletion, then the first revision after the deleted ones', async () => {
        const s = `${prefix()}session-i`;
        expect(await store.streamIncarnation(s)).toBe(0n);
        await store.appendToStream(s, [ev(), ev()]);
        expect(await store.streamIncarnation(s)).toBe(0n);
        await store.deleteStream(s);
        // Deleted, not written again yet: the revision its next append gets.
        expect(await store.streamIncarnation(s)).toBe(2n);
        await store.appendToStream(s, [ev()], { expectedRevision: 'no_stream' });
        await store.appendToStream(s, [ev()]);
        expect(await store.streamIncarnation(s)).toBe(2n);
        await store.deleteStream(s, { expectedRevision: 3n });
        expect(await store.streamIncarnation(s)).toBe(4n);
        await store.appendToStream(s, [ev()]);
        expect(await store.streamIncarnation(s)).toBe(4n);
      });

      it("refuses or writes, never silently drops, an append of a deleted stream's event ids to the stream written again", async () => {
        // KurrentDB keeps a soft-deleted stream's ids and takes them for a replay (kurrent-io/KurrentDB#4058):
        // it refuses them (DuplicateEventIdError); SQLite and PostgreSQL removed them and write them.
        const s = `${prefix()}session-j`;
        const erased = [ev(), ev()];
        await store.appendToStream(s, erased);
        await store.deleteStream(s);
        const again = await store.appendToStream(s, erased, { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
        if (again instanceof Error) {
          expect(again).toBeInstanceOf(DuplicateEventIdError);
          expect(await store.streamRevision(s)).toBeNull();
        } else {
          expect((await store.readStream(s)).map((e) => e.id)).toEqual(erased.map((e) => e.id));
        }
      });

      it("refuses an append given a stale incarnation, whatever its expected revision, and writes none of its events; one in the stream's current life is written, and a resend in it answered", async () => {
        const s = `${prefix()}session-life`;
        await store.appendToStream(s, [ev(), ev()]);
        await store.deleteStream(s);
        // deleted, not written again: `no_stream` alone holds, the life of the erased stream does not
        const gone = await expectRejects(store.appendToStream(s, [ev()], { expectedRevision: 'no_stream', incarnation: 0n }), WrongIncarnationError);
        expect(gone).toBeInstanceOf(WrongExpectedRevisionError);
        expect(gone).toMatchObject({ stream: s, expected: 'no_stream', actual: 'no_stream', expectedIncarnation: 0n, actualIncarnation: 2n });
        expect(await store.streamRevision(s)).toBeNull();
        const first = [ev(), ev()];
        const written = await store.appendToStream(s, first, { expectedRevision: 'no_stream', incarnation: 2n });
        expect(written.nextExpectedRevision).toBe(3n);
        const before = await store.readStream(s);
        const head = await store.headPosition();
        for (const expectedRevision of ['any', 'stream_exists', 3n] as const) {
          const stale = await expectRejects(store.appendToStream(s, [ev(), ev(), ev()], { expectedRevision, incarnation: 0n }), WrongIncarnationError);
          expect(stale).toMatchObject({ expected: expectedRevision, actual: 3n, expectedIncarnation: 0n, actualIncarnation: 2n });
        }
        expect(await store.readStream(s)).toEqual(before);
        expect(await store.headPosition()).toBe(head);
        // the current life: a resend is answered as the original, a new append written
        expect(await store.appendToStream(s, first, { expectedRevision: 'no_stream', incarnation: 2n })).toEqual(written);
        expect(await store.appendToStream(s, first, { expectedRevision: 'any', incarnation: 2n })).toEqual(written);
        expect((await store.appendToStream(s, [ev()], { expectedRevision: 'stream_exists', incarnation: 2n })).nextExpectedRevision).toBe(4n);
        await expect(store.appendToStream(s, [ev()], { incarnation: -1n })).rejects.toBeInstanceOf(TypeError);
      });

      it('writes an append given an incarnation exactly when the stream is in that life and at its expected revision; otherwise the log is unchanged (property)', async () => {
        const expectations = fc.constantFrom<ExpectedRevision | 'current'>('any', 'stream_exists', 'no_stream', 'current');
        const given = fc.oneof(fc.constant<'current'>('current'), fc.bigInt({ min: 0n, max: 6n }));
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.boolean(), { maxLength: 5 }),
            given,
            expectations,
            fc.integer({ min: 1, max: 3 }),
            async (ops, life, expectation, count) => {
              const s = `${prefix()}session-lives`;
              for (const append of ops) await (append ? store.appendToStream(s, [ev()]) : store.deleteStream(s));
              const incarnationNow = await store.streamIncarnation(s);
              const revisionNow = await store.streamRevision(s);
              const incarnation = life === 'current' ? incarnationNow : life;
              const expectedRevision = expectation === 'current' ? (revisionNow ?? 'no_stream') : expectation;
              const before = await store.readStream(s);
              const head = await store.headPosition();
              const events = Array.from({ length: count }, () => ev());
              const outcome = await store.appendToStream(s, events, { expectedRevision, incarnation }).catch((e: unknown) => e);
              if (incarnation === incarnationNow && satisfies(expectedRevision, revisionNow)) {
                expect(outcome).not.toBeInstanceOf(Error);
                expect((await store.readStream(s)).map((e) => e.id)).toEqual([...before, ...events].map((e) => e.id));
                return;
              }
              expect(outcome).toBeInstanceOf(incarnation === incarnationNow ? WrongExpectedRevisionError : WrongIncarnationError);
              if (incarnation !== incarnationNow) expect(outcome).toMatchObject({ expectedIncarnation: incarnation, actualIncarnation: incarnationNow });
              expect(await store.readStream(s)).toEqual(before);
              expect(await store.streamIncarnation(s)).toBe(incarnationNow);
              expect(await store.headPosition()).toBe(head);
            },
          ),
          { numRuns: 25 },
        );
      });

      it('checks the incarnation atomically with the write: an append of a life racing its deletion and a re-creation never lands in the next life', async () => {
        for (let round = 0; round < 10; round++) {
          const s = `${prefix()}session-race`;
          await store.appendToStream(s, [ev()]);
          const stale = [ev(), ev()];
          const newLife = ev();
          const erasedAndWrittenAgain = store.deleteStream(s).then(() => store.appendToStream(s, [newLife]));
          const resend = store.appendToStream(s, stale, { expectedRevision: 'any', incarnation: 0n }).catch((e: unknown) => e);
          const [outcome] = await Promise.all([resend, erasedAndWrittenAgain]);
          // written before the deletion (and deleted with its life), or refused: never in the new life
          if (outcome instanceof Error) expect(outcome).toBeInstanceOf(WrongIncarnationError);
          expect((await store.readStream(s)).map((e) => e.id)).toEqual([newLife.id]);
        }
      });

      it('with an expected revision, deletes only a stream still at it: otherwise nothing is deleted and the error names the actual revision', async () => {
        const s = `${prefix()}session-x`;
        await store.appendToStream(s, [ev(), ev()]);
        const moved = await store.deleteStream(s, { expectedRevision: 0n }).catch((e: unknown) => e);
        expect(moved).toBeInstanceOf(WrongExpectedRevisionError);
        expect(moved).toMatchObject({ expected: 0n, actual: 1n });
        expect(await store.readStream(s)).toHaveLength(2);
        await store.deleteStream(s, { expectedRevision: 1n });
        expect(await store.streamRevision(s)).toBeNull();
        const missing = await store.deleteStream(`${prefix()}session-never-existed`, { expectedRevision: 0n }).catch((e: unknown) => e);
        expect(missing).toMatchObject({ expected: 0n, actual: 'no_stream' });
      });
    });
  });
}
