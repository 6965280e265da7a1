/**
 * Another process holding the read-model file's write lock (a `sqlite3` shell with an open
 * transaction) does not hold the event loop: the projector's batches on the event loop wait
 * {@link EVENT_LOOP_LOCK_WAIT_MS} for the lock, not the connection's 5 s busy timeout, fail with
 * `SQLITE_BUSY` (nothing written), are retried with the projector's backoff, and are applied once
 * the lock is released (newcomer ncsdkuser F7: `/health` took 5 s per try while the lock was held).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '@lib/event-store';
import { getWindow } from './queries/window-query';
import { READ_MODELS_BUSY_TIMEOUT_MS, ReadModelStore } from './read-model-store';
import { EVENT_LOOP_LOCK_WAIT_MS, isReadModelsLocked, SESSION_PROJECTOR_NAME, SessionProjector } from './session-projector';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

/** A second connection (as another process's) holding the write lock of `file` until released. */
function holdWriteLock(file: string): { release: () => void } {
  const other = new Database(file);
  other.exec('BEGIN EXCLUSIVE');
  return {
    release: () => {
      other.exec('COMMIT');
      other.close();
    },
  };
}

/** The time `run` took (ms) and what it threw. */
function timed(run: () => unknown): { ms: number; error: unknown } {
  const started = performance.now();
  try {
    run();
    return { ms: performance.now() - started, error: undefined };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

describe('the read models locked by another connection', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'read-models-locked-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a batch on this thread fails with SQLITE_BUSY after the short wait, writes nothing, and applies once the lock is gone', () => {
    const file = join(dir, 'read-models.sqlite');
    const projector = new SessionProjector(ReadModelStore.open(file));
    const log = new RecordedSessionLog('acme');
    projector.applyBatch([log.append('s1', user('u0', 'before the lock'))]);
    const batch = [log.append('s1', user('u1', 'during the lock')), log.append('s1', user('u2', 'still during'))];

    const lock = holdWriteLock(file);
    const refused = timed(() => projector.applyBatch(batch));
    lock.release();

    expect(isReadModelsLocked(refused.error)).toBe(true);
    // the connection's own busy timeout (5 s) is what it waited before: far under half of it now
    expect(refused.ms).toBeLessThan(READ_MODELS_BUSY_TIMEOUT_MS / 2);
    expect(projector.checkpoint()).toBe(1n);
    expect(projector.store.readCheckpoint(SESSION_PROJECTOR_NAME)).toBe(1n);
    expect(getWindow(projector.store, 'acme', 's1')!.entries.map((e) => e.event.id)).toEqual(['u0']);

    expect(projector.applyBatch(batch)).toBe(3n);
    expect(getWindow(projector.store, 'acme', 's1')!.entries.map((e) => e.event.id)).toEqual(['u0', 'u1', 'u2']);
    // the connection keeps its busy timeout for everything else
    expect(projector.store.db.pragma('busy_timeout', { simple: true })).toBe(READ_MODELS_BUSY_TIMEOUT_MS);
    projector.store.close();
  });

  it("lockWaitMs null waits the connection's busy timeout (the worker thread's batches), longer than the event loop's wait", () => {
    const file = join(dir, 'read-models.sqlite');
    const projector = new SessionProjector(ReadModelStore.open(file), { lockWaitMs: null });
    const other = new Database(file);
    other.pragma('busy_timeout = 0');
    // a lock taken and released by a timer cannot run while this thread waits: check instead that the
    // transaction waits longer than the event loop's wait before giving up, with a short busy timeout
    projector.store.db.pragma('busy_timeout = 300');
    other.exec('BEGIN EXCLUSIVE');
    const refused = timed(() => projector.applyBatch([new RecordedSessionLog('acme').append('s1', user('u0', 'x'))]));
    other.exec('COMMIT');
    other.close();
    expect(isReadModelsLocked(refused.error)).toBe(true);
    expect(refused.ms).toBeGreaterThanOrEqual(300 - 5);
    expect(refused.ms).toBeGreaterThan(EVENT_LOOP_LOCK_WAIT_MS);
    projector.store.close();
  });

  it('following the log live: the event loop keeps serving while the lock is held, /health-style state says why, and the projector catches up after', async () => {
    const eventStore = SqliteEventStore.open(join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
    const file = join(dir, 'read-models.sqlite');
    const projector = new SessionProjector(ReadModelStore.open(file), { retryDelayMs: 20, maxRetryDelayMs: 100 });
    projector.start(eventStore);
    const log = new RecordedSessionLog('acme');
    const append = async (id: string) => {
      const e = log.append('s1', user(id, `text ${id}`));
      return (await eventStore.appendToStream(e.streamId, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }])).position;
    };
    try {
      expect(await projector.waitForPosition(await append('u0'), 5000)).toBe(true);

      const lock = holdWriteLock(file);
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      let last = 0n;
      for (let i = 1; i <= 5; i++) last = await append(`u${i}`);
      // the projector tries (and fails) several times meanwhile
      await new Promise((resolve) => setTimeout(resolve, 600));
      delay.disable();
      expect(projector.checkpoint()).toBeLessThan(last);
      expect(projector.state().lastError).toMatch(/SQLITE_BUSY|locked/);
      // before: one try held the event loop for the 5 s busy timeout
      expect(delay.max / 1e6).toBeLessThan(READ_MODELS_BUSY_TIMEOUT_MS / 2);

      lock.release();
      expect(await projector.waitForPosition(last, 5000)).toBe(true);
      expect(getWindow(projector.store, 'acme', 's1')!.entries.map((e) => e.event.id)).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5']);
      expect(projector.state().lastError).toBeNull();
    } finally {
      await projector.stop();
      projector.store.close();
      await eventStore.close();
    }
  });
});
