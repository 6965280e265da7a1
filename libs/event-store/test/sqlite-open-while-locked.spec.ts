/**
 * Opening the SQLite store while another connection holds a write lock on a file still in its
 * rollback journal (as when several processes open a new file at once): the switch to WAL waits
 * for the lock like any other write, up to the busy timeout, instead of failing at once.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { EventStoreUnavailableError, SqliteEventStore } from '../src';
import { SQLITE_SCHEMA_SQL } from '../src/sqlite/sqlite-schema';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'es-open-locked-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A worker thread that opens `file` in the rollback journal, sets the store's tables up (a file of other tables is
 * refused), takes the write lock (BEGIN IMMEDIATE and an insert) and holds it for `holdMs` ms; resolves once the lock is held.
 */
async function holdWriteLock(file: string, holdMs: number): Promise<Worker> {
  const worker = new Worker(
    `const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
     const { parentPort, workerData } = require('node:worker_threads');
     const db = new Database(workerData.file);
     db.exec(workerData.schema);
     db.exec('BEGIN IMMEDIATE');
     db.exec("INSERT INTO deleted_streams VALUES ('held', 0)");
     parentPort.postMessage('held');
     setTimeout(() => { db.exec('COMMIT'); db.close(); }, workerData.holdMs);`,
    { eval: true, workerData: { file, holdMs, schema: SQLITE_SCHEMA_SQL } },
  );
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return worker;
}

it('waits for the lock, then opens the store in WAL mode', async () => {
  const file = join(dir, 'events.sqlite');
  const worker = await holdWriteLock(file, 400);
  const store = SqliteEventStore.open(file, { busyTimeoutMs: 5000 }); // (it failed at once before)
  try {
    await store.appendToStream('s', [{ id: '0f8fad5b-d9cb-469f-a165-70867728950e', type: 'T', data: {} }]);
    expect((await store.readStream('s')).map((e) => e.type)).toEqual(['T']);
  } finally {
    await store.close();
    await worker.terminate();
  }
  const check = new Database(file, { readonly: true });
  expect(check.pragma('journal_mode', { simple: true })).toBe('wal');
  check.close();
});

it('a lock held past the busy timeout fails the open with the store unavailable, after the timeout', async () => {
  const file = join(dir, 'events.sqlite');
  const worker = await holdWriteLock(file, 3000);
  const started = Date.now();
  try {
    expect(() => SqliteEventStore.open(file, { busyTimeoutMs: 300 })).toThrow(EventStoreUnavailableError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  } finally {
    await worker.terminate();
  }
});
