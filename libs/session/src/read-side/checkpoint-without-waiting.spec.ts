/**
 * `ReadModelStore.tryWriteCheckpoint` (newcomer ncretry F5): the decision feed checkpoints each
 * decision on the event loop, erasure records included, while the projector's worker thread may
 * hold the read models' write lock applying that very erasure. A write waiting for the lock held
 * the event loop for the busy timeout (5 s: `/health` answered in 5.1 s) and then failed
 * (`database is locked`, the feed paused). This one answers false at once instead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ReadModelStore } from './read-model-store';

const dir = mkdtempSync(join(tmpdir(), 'checkpoint-without-waiting-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('writes nothing and answers false at once while another connection holds the write lock, then writes', () => {
  const file = join(dir, 'read-models.sqlite');
  const store = ReadModelStore.open(file);
  const other = new Database(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    const started = process.hrtime.bigint();
    expect(store.tryWriteCheckpoint('feed', 7n, 'e7')).toBe(false);
    // Without waiting: far below the connection's busy timeout (5,000 ms), whatever the machine's load.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1000);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    other.exec('COMMIT');
    expect(store.readCheckpointEvent('feed')).toEqual({ position: 0n, event: null });
    expect(store.tryWriteCheckpoint('feed', 7n, 'e7')).toBe(true);
    expect(store.readCheckpointEvent('feed')).toEqual({ position: 7n, event: 'e7' });
  } finally {
    other.close();
    store.close();
  }
});
