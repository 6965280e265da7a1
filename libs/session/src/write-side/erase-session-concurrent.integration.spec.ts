/**
 * Erasures of one session at once (newcomer report: two DELETEs of one session wrote two
 * `SessionErased` records, one answering `erasedEvents: 0`, and later resends repeated the 0). On
 * one replica, on two replicas sharing one store (one SQLite file, one PostgreSQL database), and
 * at once with the recovery of an interrupted erasure: exactly one record per life of the session,
 * and every caller, at once or later, gets the same answer (`erasedEvents` = the events removed,
 * the record's position).
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventBus } from '@nestjs/cqrs';
import { EventStoreUnavailableError, SqliteEventStore, type EventStore } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../../event-store/test/postgres-test-database';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { getWindow } from '../read-side/queries/window-query';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionCommand, EraseSessionHandler, erasureStream, type EraseAnswer } from './erase-session';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;
/** The record wait of these replicas (ms): short, so that a recovery does not take the default 2 s. */
const RECORD_WAIT_MS = 300;

/** `store` with `hook` run before every call of `method` (a delay, a failure). */
function hooked<K extends 'appendToStream' | 'deleteStream'>(
  store: EventStore,
  method: K,
  hook: (...args: Parameters<EventStore[K]>) => Promise<void>,
): EventStore {
  const original = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
  return Object.assign(Object.create(store) as EventStore, {
    [method]: async (...args: Parameters<EventStore[K]>) => {
      await hook(...args);
      return original(...args);
    },
  });
}

/** One replica: its own write side and read models over `store`. */
function replica(store: EventStore) {
  const projector = new SessionProjector(ReadModelStore.open(':memory:'));
  projector.start(store);
  const cache = new SessionStateCache(store);
  return {
    store,
    projector,
    append: new AppendSessionEventsHandler(store, cache, noBus),
    erase: (sessionId: string, over: EventStore = store) =>
      new EraseSessionHandler(over, new SessionStateCache(over), projector, RECORD_WAIT_MS).execute(new EraseSessionCommand('t', sessionId)),
  };
}
type Replica = ReturnType<typeof replica>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `count` events to `sessionId` through `r`, in one append each, and waits until every replica projected them. */
async function written(r: Replica, replicas: Replica[], sessionId: string, count: number): Promise<void> {
  let position = 0n;
  for (let n = 0; n < count; n++)
    position = BigInt(
      (await r.append.execute(new AppendSessionEventsCommand('t', sessionId, [{ event: { id: `e${n}`, type: 'user', text: `text ${n}` } }]))).position,
    );
  for (const p of replicas) expect(await p.projector.waitForPosition(position, 5000)).toBe(true);
}

/** The erasure records of `sessionId` in the tenant's stream. */
async function recordsOf(store: EventStore, sessionId: string) {
  return (await store.readStream(erasureStream('t'))).filter((e) => (e.data as { sessionId: string }).sessionId === sessionId);
}

/**
 * The flows on a store kind. `open` gives the store of one replica; called twice, two replicas
 * sharing one log (their own connections / file handles).
 */
function concurrentErasures(name: string, open: () => Promise<EventStore>, runs: number) {
  describe(`erasures of one session at once (${name})`, () => {
    let replicas: Replica[];
    let sessions = 0;
    beforeAll(async () => {
      replicas = [replica(await open()), replica(await open())];
    });
    afterAll(async () => {
      for (const r of replicas ?? []) {
        await r.projector.stop();
        await r.store.close();
      }
    });
    const fresh = () => `s${++sessions}-${Date.now()}`;
    const texts = (answers: EraseAnswer[]) => answers.map((a) => JSON.stringify(a));

    it('given N erasures at once on one or two replicas, then one record is written and all N answers, and a later resend, are its answer', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.array(fc.record({ replica: fc.integer({ min: 0, max: 1 }), delayMs: fc.integer({ min: 0, max: 3 }) }), { minLength: 2, maxLength: 5 }),
          async (events, callers) => {
            const sessionId = fresh();
            await written(replicas[0], replicas, sessionId, events);
            const answers = await Promise.all(
              callers.map(async ({ replica: r, delayMs }) => {
                await sleep(delayMs);
                return replicas[r].erase(sessionId);
              }),
            );
            const records = await recordsOf(replicas[0].store, sessionId);
            expect(records).toHaveLength(1);
            const expected: EraseAnswer = {
              sessionId,
              erasedEvents: events,
              erasedAt: (records[0].data as { erasedAt: string }).erasedAt,
              position: records[0].position.toString(),
            };
            expect(texts(answers)).toEqual(callers.map(() => JSON.stringify(expected)));
            const head = await replicas[0].store.headPosition();
            for (const r of replicas) expect(await r.erase(sessionId)).toEqual(expected);
            expect(await replicas[0].store.headPosition()).toBe(head);
            for (const r of replicas) expect(getWindow(r.projector.store, 't', sessionId)).toBeNull();
          },
        ),
        { numRuns: runs },
      );
    });

    it('given an erasure whose record is slow to land, when another erasure of the session runs meanwhile on the other replica, then both answer the count of the events removed and one record is written', async () => {
      const sessionId = fresh();
      await written(replicas[0], replicas, sessionId, 3);
      let release: () => void = () => undefined;
      let deleted: () => void = () => undefined;
      const deletion = new Promise<void>((resolve) => (deleted = resolve));
      const slow = hooked(replicas[0].store, 'appendToStream', async (stream) => {
        if (stream !== erasureStream('t')) return;
        deleted();
        await new Promise<void>((resolve) => (release = resolve));
      });
      const first = replicas[0].erase(sessionId, slow);
      await deletion;
      const second = replicas[1].erase(sessionId);
      await sleep(RECORD_WAIT_MS / 3);
      release();
      const answers = await Promise.all([first, second]);
      expect(answers[0]).toMatchObject({ erasedEvents: 3 });
      expect(answers[1]).toEqual(answers[0]);
      expect(await recordsOf(replicas[0].store, sessionId)).toHaveLength(1);
    });

    it('given an erasure that deleted the stream and stopped before its record, when it is sent again N times at once on both replicas, then one record is written, counting the deleted events, and every answer is its answer', async () => {
      for (const n of [2, 3, 5]) {
        const sessionId = fresh();
        await written(replicas[0], replicas, sessionId, 4);
        const failing = hooked(replicas[0].store, 'appendToStream', async (stream) => {
          if (stream === erasureStream('t')) throw new EventStoreUnavailableError('the store went away');
        });
        await expect(replicas[0].erase(sessionId, failing)).rejects.toBeInstanceOf(EventStoreUnavailableError);
        expect(await replicas[0].store.readStream(sessionStream(sessionKey('t', sessionId)))).toEqual([]);
        const answers = await Promise.all(Array.from({ length: n }, (_, i) => replicas[i % 2].erase(sessionId)));
        const records = await recordsOf(replicas[0].store, sessionId);
        expect(records).toHaveLength(1);
        expect(answers[0]).toMatchObject({ sessionId, erasedEvents: 4, position: records[0].position.toString() });
        for (const answer of answers) expect(answer).toEqual(answers[0]);
        for (const r of replicas) expect(await r.erase(sessionId)).toEqual(answers[0]);
        for (const r of replicas) {
          expect(await r.projector.waitForPosition(records[0].position, 5000)).toBe(true);
          expect(getWindow(r.projector.store, 't', sessionId)).toBeNull();
        }
      }
    });

    it('given an erasure that deleted the stream and stopped before its record, when a replica that had projected part of the life finishes it, then no replica keeps a row of the life', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 6 }).chain((events) => fc.tuple(fc.constant(events), fc.integer({ min: 1, max: events }))),
          async ([events, lag]) => {
            const [lagging, ahead] = replicas;
            const sessionId = fresh();
            const key = sessionKey('t', sessionId);
            await written(ahead, replicas, sessionId, lag);
            // The lagging replica's projector stops after `lag` events of the life; the other one projects all of them.
            await lagging.projector.stop();
            try {
              for (let n = lag; n < events; n++)
                await ahead.append.execute(new AppendSessionEventsCommand('t', sessionId, [{ event: { id: `e${n}`, type: 'user', text: `text ${n}` } }]));
              expect(await ahead.projector.waitForPosition(await ahead.store.headPosition(), 5000)).toBe(true);
              const failing = hooked(ahead.store, 'appendToStream', async (stream) => {
                if (stream === erasureStream('t')) throw new EventStoreUnavailableError('the process ended');
              });
              await expect(ahead.erase(sessionId, failing)).rejects.toBeInstanceOf(EventStoreUnavailableError);
              // The log's head is an event again (it was the last deleted one, which the lagging projector never reads).
              await written(ahead, [ahead], `${sessionId}-other`, 1);
            } finally {
              lagging.projector.start(lagging.store);
            }
            expect(await lagging.projector.waitForPosition(await lagging.store.headPosition(), 5000)).toBe(true);
            const answer = await lagging.erase(sessionId);
            // It counts from the first revision it holds (0) to the last deleted one: every event of the life.
            expect(answer).toMatchObject({ sessionId, erasedEvents: events });
            const [record] = await recordsOf(lagging.store, sessionId);
            expect(record.data).toMatchObject({ lastRevision: String(events - 1) });
            for (const r of replicas) {
              expect(await r.projector.waitForPosition(record.position, 5000)).toBe(true);
              const rows = r.projector.store.db.prepare('SELECT revision FROM session_log WHERE session_key = ?').all(key);
              expect({ replica: replicas.indexOf(r), lag, rows }).toEqual({ replica: replicas.indexOf(r), lag, rows: [] });
              expect(getWindow(r.projector.store, 't', sessionId)).toBeNull();
            }
          },
        ),
        { numRuns: runs },
      );
    });

    it('given a session erased at once, written again and erased at once again, then each life has one record and its own answers', async () => {
      const sessionId = fresh();
      await written(replicas[0], replicas, sessionId, 2);
      const first = await Promise.all([replicas[0].erase(sessionId), replicas[1].erase(sessionId)]);
      const again = await replicas[1].append.execute(new AppendSessionEventsCommand('t', sessionId, [{ event: { id: 'n1', type: 'user', text: 'anew' } }]));
      for (const r of replicas) await r.projector.waitForPosition(BigInt(again.position), 5000);
      const second = await Promise.all([replicas[1].erase(sessionId), replicas[0].erase(sessionId)]);
      expect(first[1]).toEqual(first[0]);
      expect(second[1]).toEqual(second[0]);
      expect([first[0].erasedEvents, second[0].erasedEvents]).toEqual([2, 1]);
      expect(await recordsOf(replicas[0].store, sessionId)).toHaveLength(2);
      // A resend answers the last life's erasure.
      expect(await replicas[0].erase(sessionId)).toEqual(second[0]);
    });
  });
}

describe('on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'erase-concurrent-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // One process: both write sides and projectors on one store (closed once, at the end).
  const shared = SqliteEventStore.open(':memory:');
  afterAll(() => shared.close());
  concurrentErasures('one SQLite store', async () => Object.assign(Object.create(shared) as EventStore, { close: async () => undefined }), 12);
  concurrentErasures('two SQLite stores on one file', async () => SqliteEventStore.open(join(dir, 'events.sqlite'), { pollIntervalMs: 20 }), 12);
});

const pgSkip = postgresUnavailableReason();
describeUnlessSkipped(pgSkip, 'on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('erase_concurrent');
  });
  afterAll(async () => {
    await db?.drop();
  });
  concurrentErasures('two stores on one PostgreSQL database', async () => PostgresEventStore.connect(db.url, { pollIntervalMs: 20 }), 8);
});
