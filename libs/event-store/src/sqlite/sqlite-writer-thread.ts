/**
 * Entry of the SQLite store's writer thread ({@link SqliteEventStoreOptions.writerThread}): owns
 * the store's write connection, so that transactions and their fsyncs never block the event loop
 * of the process that serves requests.
 *
 * Protocol (messages on `parentPort`):
 * - in `{ batch: number, writes: SqliteWrite[] }`: writes to run; every batch that arrived before
 *   the thread gets to run them shares one group commit (up to `maxBatchSize` writes, each in its
 *   own SAVEPOINT); out `{ batch, outcomes: Array<{ok: true, value} | {ok: false, error: TransferredError}>, stats }`
 *   once COMMIT returned, or `{ batch, failed: TransferredError, stats }` when the transaction
 *   itself failed (nothing of it was written);
 * - in `{ close: true }`: runs what is queued, purges the WAL if a deletion asks for it, closes the
 *   connection and ends the thread.
 *
 * workerData: `{ filePath: string, busyTimeoutMs: number, maxBatchSize: number }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteAppender } from './sqlite-append';
import { openSqliteDatabase } from './sqlite-database';
import { SqliteGroupCommit } from './sqlite-group-commit';
import { commitSqliteWrites, errorToTransfer, type SqliteWrite } from './sqlite-writes';
import { SqliteWalPurge } from './sqlite-wal-purge';

interface WriterData {
  filePath: string;
  busyTimeoutMs: number;
  maxBatchSize: number;
}

const port = parentPort;
if (!port) throw new Error('sqlite-writer-thread runs only as a worker thread');
const { filePath, busyTimeoutMs, maxBatchSize } = workerData as WriterData;
const db = openSqliteDatabase(filePath, busyTimeoutMs);
const appender = new SqliteAppender(db);
const group = new SqliteGroupCommit(db);
// Retried on this thread's timer without blocking it; the store's own connection checks and retries too (and tells /health).
const walPurge = new SqliteWalPurge(db, {});
const queue: Array<{ batch: number; writes: SqliteWrite[] }> = [];
let drainScheduled = false;
let closing = false;

port.on('message', (message: { batch: number; writes: SqliteWrite[] } | { close: true }) => {
  if ('close' in message) closing = true;
  else queue.push(message);
  if (!drainScheduled) {
    drainScheduled = true;
    setImmediate(drain);
  }
});

function drain(): void {
  drainScheduled = false;
  while (queue.length > 0) commitNext();
  if (closing) {
    walPurge.stop();
    walPurge.tryPurge();
    db.close();
    port!.close();
  }
}

/** One transaction: the queued batches, whole, up to `maxBatchSize` writes (at least one batch). */
function commitNext(): void {
  const taken: Array<{ batch: number; writes: SqliteWrite[] }> = [];
  let count = 0;
  while (queue.length > 0 && (taken.length === 0 || count + queue[0].writes.length <= maxBatchSize)) {
    const next = queue.shift()!;
    taken.push(next);
    count += next.writes.length;
  }
  const writes = taken.flatMap((t) => t.writes);
  let outcomes;
  try {
    outcomes = commitSqliteWrites(group, appender, walPurge, writes);
  } catch (error) {
    const failed = errorToTransfer(error);
    for (const t of taken) port!.postMessage({ batch: t.batch, failed, stats: group.stats });
    return;
  }
  let i = 0;
  for (const t of taken) {
    const mine = outcomes.slice(i, i + t.writes.length).map((o) => (o.ok ? o : { ok: false, error: errorToTransfer(o.error) }));
    i += t.writes.length;
    port!.postMessage({ batch: t.batch, outcomes: mine, stats: group.stats });
  }
}
