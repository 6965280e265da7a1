import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { EventStoreUnavailableError } from '../errors';
import type { OperationOutcome } from './sqlite-group-commit';
import { errorFromTransfer, type SqliteWrite, type TransferredError } from './sqlite-writes';

/** The writer thread's module, next to this file (`.ts` under ts-node and jest, `.js` once built). */
const WRITER_FILE = path.join(__dirname, `sqlite-writer-thread${path.extname(__filename)}`);

/** Node flags of the thread: from sources (ts-node, jest) the hooks that load TypeScript; none once built. */
function writerExecArgv(): string[] | undefined {
  return path.extname(__filename) === '.ts' ? ['-r', 'ts-node/register/transpile-only'] : undefined;
}

type Reply =
  | { batch: number; outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: TransferredError }>; stats: Stats }
  | { batch: number; failed: TransferredError; stats: Stats };

interface Stats {
  transactions: number;
  operations: number;
}

interface Waiting {
  resolve: (outcomes: OperationOutcome[]) => void;
  reject: (error: unknown) => void;
}

/**
 * The main thread's side of the store's writer thread (`sqlite-writer-thread`): hands it batches
 * of writes and resolves each batch with its outcomes once the thread's transaction committed.
 * Batches are committed in the order they were submitted. The thread does not keep the process
 * alive while no batch is in flight.
 */
export class SqliteWriterThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextBatch = 1;
  private failure: Error | undefined;
  private lastStats: Stats = { transactions: 0, operations: 0 };
  private readonly exited: Promise<void>;

  /**
   * Starts the thread on the store file `filePath` (opened with `openSqliteDatabase`: the schema
   * already exists); `busyTimeoutMs` as the store's, `maxBatchSize` writes at most per transaction;
   * `statsBefore`: counts of a thread this one replaces, added to this one's {@link stats}.
   */
  constructor(
    filePath: string,
    busyTimeoutMs: number,
    maxBatchSize: number,
    private readonly statsBefore: Stats = { transactions: 0, operations: 0 },
  ) {
    this.worker = new Worker(WRITER_FILE, { workerData: { filePath, busyTimeoutMs, maxBatchSize }, execArgv: writerExecArgv() });
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.settle(reply));
    this.worker.on('error', (error) => this.fail(new EventStoreUnavailableError(`SQLite writer thread failed: ${describeThreadError(error)}`, error)));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', () => {
        this.fail(new EventStoreUnavailableError('the SQLite writer thread has stopped'));
        resolve();
      }),
    );
  }

  /** True once the thread failed or ended: it takes no more writes (the store starts another). */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Committed transactions and operations of the thread, as of its latest answer. */
  get stats(): Stats {
    return { transactions: this.statsBefore.transactions + this.lastStats.transactions, operations: this.statsBefore.operations + this.lastStats.operations };
  }

  /**
   * Runs `writes` in the thread's next group commit.
   * @returns each write's outcome, in order, once the transaction committed (durable)
   * @throws EventStoreUnavailableError (rejects) when the transaction failed (nothing of it was
   *   written) or the thread is gone
   */
  submit(writes: SqliteWrite[]): Promise<OperationOutcome[]> {
    if (this.failure) return Promise.reject(this.failure);
    const batch = this.nextBatch++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(batch, { resolve, reject });
      this.worker.postMessage({ batch, writes });
    });
  }

  /** Lets the thread commit what it holds, close its connection and end; resolves when it has. */
  async close(): Promise<void> {
    if (!this.failure) {
      this.worker.ref();
      this.worker.postMessage({ close: true });
    }
    await this.exited;
  }

  private settle(reply: Reply): void {
    const waiting = this.waiting.get(reply.batch);
    this.lastStats = reply.stats;
    if (!waiting) return;
    this.waiting.delete(reply.batch);
    if (this.waiting.size === 0) this.worker.unref();
    if ('failed' in reply) {
      const error = errorFromTransfer(reply.failed);
      waiting.reject(error instanceof EventStoreUnavailableError ? error : new EventStoreUnavailableError(`SQLite event store: ${error.message}`, error));
    } else {
      waiting.resolve(reply.outcomes.map((o) => (o.ok ? o : { ok: false, error: errorFromTransfer(o.error) })));
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.values()) waiting.reject(this.failure);
    this.waiting.clear();
  }
}

/**
 * What a worker thread's uncaught error says: its message, with SQLite's code when it carries one
 * (`SQLITE_BUSY: database is locked`). Errors of other classes reach the parent as plain objects
 * (structured clone), at times without a message: then their code, name or text, never `undefined`.
 */
export function describeThreadError(error: unknown): string {
  const e = (error ?? {}) as { message?: unknown; code?: unknown; name?: unknown };
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : null;
  const code = typeof e.code === 'string' && e.code !== '' ? e.code : null;
  if (message && code && !message.includes(code)) return `${code}: ${message}`;
  if (message) return message;
  if (code) return code;
  if (typeof e.name === 'string' && e.name !== '' && e.name !== 'Error') return e.name;
  const text = typeof error === 'string' ? error : error === undefined ? '' : JSON.stringify(error);
  return text && text !== '{}' ? text : 'an error without a message';
}
