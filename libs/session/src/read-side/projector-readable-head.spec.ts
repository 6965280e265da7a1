/**
 * The projector passes a deleted log tail by the store's READABLE head, never by its head: on
 * SQLite with the writer thread, the head (sqlite_sequence) counts a batch the thread has
 * committed whose answer has not arrived, while the store's reads of the log stop before it.
 * A projector that took the head there (commit c7b5c96, reverted) jumped over that whole batch
 * and never applied it (the replay e2e spec lost 1 of 32 events; a verifier, 26 of 400 appends).
 * The writer thread's answer is held back here ({@link holdNextWriterAnswer}), so the moment is
 * not left to chance.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { SqliteEventStore } from '@lib/event-store';
import { holdNextWriterAnswer, type HeldWriterAnswer } from '../../../event-store/test/sqlite-writer-answers';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { getWindow } from './queries/window-query';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { conversationEvent, readableHeadCalls, type WatchedReadableHead } from './testing/followed-store';

/** The projector's idle time before it checks the log's tail (ms): short, so that it checks often. */
const TAIL_CHECK_MS = 2;
const WITHIN_MS = 10_000;

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'readable-head-'));
  dirs.push(dir);
  return join(dir, 'events.sqlite');
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const stream = (sessionId: string) => sessionStream(sessionKey('t', sessionId));
const windowIds = (projector: SessionProjector, sessionId: string) => getWindow(projector.store, 't', sessionId)?.entries.map((e) => e.event.id) ?? [];

/**
 * Holds back the answer of the batch that commits next, appends `events` to `sessionId` and waits
 * until the thread has committed it (so `headPosition` counts it) while its answer is held.
 */
async function heldAppend(store: SqliteEventStore, sessionId: string, ids: string[]): Promise<{ held: HeldWriterAnswer; appended: Promise<unknown> }> {
  const held = holdNextWriterAnswer(store);
  const appended = store.appendToStream(
    stream(sessionId),
    ids.map((id) => conversationEvent(id, `text of ${id}`)),
  );
  await held.arrived;
  return { held, appended };
}

/**
 * While a batch is held: waits until the projector has checked the log's tail twice (something
 * waits for `position`, so it checks every {@link TAIL_CHECK_MS}), or its checkpoint moved past
 * `below` (the bug: it passed the batch), or it reached `position`. `reached`: that wait for `position`.
 */
async function twoTailChecks(
  projector: SessionProjector,
  watched: WatchedReadableHead,
  position: bigint,
  below: bigint,
): Promise<{ reached: Promise<boolean> }> {
  const checks = watched.calls(3); // the third starts once two ended
  const reached = projector.waitForPosition(position, 60_000);
  const moved = new Promise<void>((done) => {
    const remove = projector.onCheckpoint((checkpoint) => {
      if (checkpoint > below) {
        remove();
        done();
      }
    });
  });
  // Or it reached `position`, which was readable (a held batch that only deletes).
  await Promise.race([checks, moved, reached]);
  return { reached };
}

describe('SessionProjector and a batch the SQLite writer thread committed but has not answered yet', () => {
  let store: SqliteEventStore;
  let watched: WatchedReadableHead;
  let projector: SessionProjector;
  let held: HeldWriterAnswer | undefined;
  beforeEach(async () => {
    store = SqliteEventStore.open(tempFile(), { writerThread: true, pollIntervalMs: 10 });
    await store.appendToStream(stream('a'), [conversationEvent('a1', 'first')]); // position 1; starts the writer thread
    watched = readableHeadCalls(store);
    projector = new SessionProjector(ReadModelStore.open(':memory:'), { tailCheckIdleMs: TAIL_CHECK_MS });
    held = undefined;
  });
  afterEach(async () => {
    held?.deliver();
    await projector.stop();
    projector.store.close();
    await store.close();
  });

  it('given the projector idle at the readable head, when it checks the tail while the batch is held (something waits for it), then it stays below the batch, and applies all of it once answered', async () => {
    projector.start(watched.store);
    expect(await projector.waitForPosition(1n, WITHIN_MS)).toBe(true);
    let appended: Promise<unknown>;
    ({ held, appended } = await heldAppend(store, 'a', ['a2', 'a3']));
    expect(await store.headPosition()).toBe(3n); // what c7b5c96 took: the batch, committed

    const { reached } = await twoTailChecks(projector, watched, 3n, 1n);
    expect(projector.checkpoint()).toBe(1n);
    held.deliver();
    await appended;
    expect(await reached).toBe(true);
    expect(windowIds(projector, 'a')).toEqual(['a1', 'a2', 'a3']);
  });

  it('given a rebuild while the batch is held, then it ends at the readable head, below the batch, and the projector started after applies the batch', async () => {
    let appended: Promise<unknown>;
    ({ held, appended } = await heldAppend(store, 'b', ['b1']));
    expect(await projector.rebuild(watched.store)).toBe(1n);
    held.deliver();
    await appended;
    projector.start(watched.store);
    expect(await projector.waitForPosition(2n, WITHIN_MS)).toBe(true);
    expect(windowIds(projector, 'b')).toEqual(['b1']);
  });
});

/** One step of the property: an append (awaited or not), a deletion, an idle spell, a held batch, a rebuild. */
type Step =
  | { kind: 'append'; session: string; count: number; awaited: boolean }
  | { kind: 'delete'; session: string }
  | { kind: 'idle'; spells: number }
  | { kind: 'held'; session: string; count: number }
  | { kind: 'rebuild' };

const SESSIONS = ['s1', 's2', 's3'];
const session = fc.constantFrom(...SESSIONS);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), session, count: fc.integer({ min: 1, max: 3 }), awaited: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), session }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('idle' as const), spells: fc.integer({ min: 0, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('held' as const), session, count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rebuild' as const }) },
);

describe('SessionProjector on SQLite with the writer thread: appends, deletions, idle spells and held batches in any order (property)', () => {
  // One store, its writer thread and one projector for every run (a thread takes seconds to start
  // under ts-node); each run writes sessions of its own names.
  let store: SqliteEventStore;
  let watched: WatchedReadableHead;
  let projector: SessionProjector;
  const pending: HeldWriterAnswer[] = [];
  beforeAll(async () => {
    store = SqliteEventStore.open(tempFile(), { writerThread: true, pollIntervalMs: 10 });
    await store.appendToStream('other-start', [conversationEvent('x', 'starts the writer thread')]);
    watched = readableHeadCalls(store);
    projector = new SessionProjector(ReadModelStore.open(':memory:'), { tailCheckIdleMs: TAIL_CHECK_MS });
    projector.start(watched.store);
  });
  afterAll(async () => {
    pending.forEach((h) => h.deliver());
    await projector.stop();
    projector.store.close();
    await store.close();
  });

  it('projects every event that is not deleted, and ends at the readable head (the head once every batch is answered)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        run++;
        const name = (s: string) => `r${run}-${s}`;
        let message = 0;
        const ids = (count: number) => Array.from({ length: count }, () => `m${++message}`);
        const writes: Promise<unknown>[] = [];
        for (const s of steps) {
          if (s.kind === 'append') {
            const written = store.appendToStream(
              stream(name(s.session)),
              ids(s.count).map((id) => conversationEvent(id, `text of ${id}`)),
            );
            if (s.awaited) await written;
            else writes.push(written);
          } else if (s.kind === 'delete') {
            writes.push(store.deleteStream(stream(name(s.session))));
          } else if (s.kind === 'idle') {
            await new Promise((resolve) => setTimeout(resolve, s.spells * TAIL_CHECK_MS));
          } else if (s.kind === 'held') {
            const { held, appended } = await heldAppend(store, name(s.session), ids(s.count));
            pending.push(held);
            const limit = await store.readableHead();
            await twoTailChecks(projector, watched, await store.headPosition(), limit);
            // Never past what the store's reads return while the batch is held.
            expect(projector.checkpoint()).toBeLessThanOrEqual(limit);
            pending.splice(pending.indexOf(held), 1);
            held.deliver();
            writes.push(appended);
          } else {
            await projector.rebuild(watched.store);
          }
        }
        await Promise.all(writes);
        const readable = await store.readableHead();
        expect(readable).toBe(await store.headPosition()); // every batch answered
        expect(await projector.waitForPosition(readable, WITHIN_MS)).toBe(true);
        expect(projector.checkpoint()).toBe(readable);
        for (const s of SESSIONS) {
          const existing = (await store.readStream(stream(name(s)))).map((e) => (e.data as { event: { id: string } }).event.id);
          const projected = new Set(windowIds(projector, name(s)));
          expect(existing.filter((id) => !projected.has(id))).toEqual([]);
        }
      }),
      { numRuns: 100 },
    );
  });
});
