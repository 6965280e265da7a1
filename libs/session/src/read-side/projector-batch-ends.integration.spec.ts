import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { MAX_APPEND_COMPLETION_PAGES, SqliteEventStore, type EventStore, type RecordedEvent } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { createTestDatabase, postgresUnavailableReason, type TestDatabase } from '../../../event-store/test/postgres-test-database';

/**
 * DESIGN §4 (a decision is one append, never half-applied): the projector commits its live
 * batches only where an append ends, so no reader of the read models sees part of one (e.g. a
 * compaction's archive without its summary), whatever the store's page size and the projector's
 * batch size.
 */

/** Appends of [stream, event count], interleaved as several writers would. */
const APPENDS: Array<[string, number]> = [
  ['session-t.a', 3],
  ['session-t.b', 1],
  ['session-t.a', 2],
  ['session-t.c', 5],
  ['session-t.b', 3],
  ['other-x', 1],
  ['session-t.a', 4],
  ['session-t.c', 1],
  ['session-t.c', 2],
];

/** The most events written to one stream with no other stream's event in between. */
function longestRun(appends: Array<[string, number]>): number {
  let longest = 0;
  let run = 0;
  appends.forEach(([stream, count], i) => {
    run = i > 0 && appends[i - 1][0] === stream ? run + count : count;
    longest = Math.max(longest, run);
  });
  return longest;
}

/** Writes `appends` (events of an unknown type: the projector only moves its checkpoint over them) and returns each append's last position. */
async function writeAppends(store: EventStore, appends: Array<[string, number]>): Promise<bigint[]> {
  const ends: bigint[] = [];
  for (const [stream, count] of appends) {
    const events = Array.from({ length: count }, (_, i) => ({ id: randomUUID(), type: 'BatchBoundaryProbe', data: { i } }));
    ends.push((await store.appendToStream(stream, events)).position);
  }
  return ends;
}

/**
 * Writes the first half of {@link APPENDS}, starts a projector over `store` (catch-up), writes the
 * rest (live), waits until the projector reached the log's head, and returns each append's last
 * position and the last position of each batch the projector committed.
 */
async function batchEnds(store: EventStore, maxBatchSize: number, appends = APPENDS): Promise<{ ends: bigint[]; committed: bigint[] }> {
  const half = Math.floor(appends.length / 2);
  const ends = await writeAppends(store, appends.slice(0, half));
  const readModels = ReadModelStore.open(':memory:');
  const projector = new SessionProjector(readModels, { maxBatchSize, commitIntervalMs: 0 });
  const committed: bigint[] = [];
  const apply = projector.applyBatch.bind(projector);
  jest.spyOn(projector, 'applyBatch').mockImplementation((events: readonly RecordedEvent[]) => {
    committed.push(events[events.length - 1].position);
    return apply(events);
  });
  projector.start(store);
  try {
    ends.push(...(await writeAppends(store, appends.slice(half))));
    expect(await projector.waitForPosition(ends[ends.length - 1], 10_000)).toBe(true);
  } finally {
    await projector.stop();
    readModels.close();
  }
  return { ends, committed };
}

describe('the projector commits batches only where an append ends', () => {
  it.each([
    ['pages of 2, batches of 2', 2, 2],
    ['pages of 4, batches of 3', 4, 3],
    ['pages of 1, batches of 500', 1, 500],
  ])('SQLite store, %s (catch-up and live)', async (_title, pageSize, maxBatchSize) => {
    const store = SqliteEventStore.open(':memory:', { subscriptionPageSize: pageSize });
    try {
      const { ends, committed } = await batchEnds(store, maxBatchSize);
      expect(committed.filter((p) => !ends.includes(p))).toEqual([]);
      expect(committed[committed.length - 1]).toBe(ends[ends.length - 1]);
    } finally {
      await store.close();
    }
  });

  it(`SQLite store, any appends, page size and batch size, runs of one stream up to ${1 + MAX_APPEND_COMPLETION_PAGES} pages and batches (property)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('session-t.a', 'session-t.b', 'session-t.c', 'other-x'), fc.integer({ min: 1, max: 7 })), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        async (appends, pageSize, maxBatchSize) => {
          // Past this, one stream written with no other in between may be cut inside an append (the documented bound: a page or
          // batch goes on for MAX_APPEND_COMPLETION_PAGES times its size past its own, and the run may start at its last event;
          // with (1 + MAX) × size, a run starting after other events of the batch was cut: seed -1490287292).
          fc.pre(longestRun(appends) <= MAX_APPEND_COMPLETION_PAGES * Math.min(pageSize, maxBatchSize) + 1);
          const store = SqliteEventStore.open(':memory:', { subscriptionPageSize: pageSize });
          try {
            const { ends, committed } = await batchEnds(store, maxBatchSize, appends);
            expect(committed.filter((p) => !ends.includes(p))).toEqual([]);
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  const skip = postgresUnavailableReason();
  (skip ? it.skip : it)(`PostgreSQL store (asynchronous page reads), pages of 2${skip ? ` — skipped: ${skip}` : ''}`, async () => {
    const db: TestDatabase = await createTestDatabase('projector_batch_ends');
    const store = PostgresEventStore.connect(db.url, { pollIntervalMs: 25, subscriptionPageSize: 2 });
    try {
      const { ends, committed } = await batchEnds(store, 500);
      expect(committed.filter((p) => !ends.includes(p))).toEqual([]);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
