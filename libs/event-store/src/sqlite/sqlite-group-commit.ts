import type Database from 'better-sqlite3';
import { isSqliteUnavailable } from './sqlite-errors';

/** What one operation of a group commit gave: its value, or the error it alone was rolled back for. */
export type OperationOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit on one connection: runs several write operations in one `BEGIN IMMEDIATE … COMMIT`
 * (one fsync), each inside its own SAVEPOINT, so a failing operation is rolled back alone and
 * gets its own error while the others commit. Used by the store on its own connection and by its
 * writer thread ({@link SqliteEventStoreOptions.writerThread}).
 */
export class SqliteGroupCommit {
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  private committedTransactions = 0;
  private committedOperations = 0;

  constructor(private readonly db: Database.Database) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.savepoint = db.prepare('SAVEPOINT op');
    this.release = db.prepare('RELEASE op');
    this.rollbackTo = db.prepare('ROLLBACK TO op');
  }

  /** Committed write transactions and the operations (including rejected ones) they carried, since construction. */
  get stats(): { transactions: number; operations: number } {
    return { transactions: this.committedTransactions, operations: this.committedOperations };
  }

  /**
   * Runs `operations` in one transaction and returns each one's outcome, in order, once COMMIT
   * returned (the transaction is durable).
   * @throws the transaction's own error (lock timeout, I/O error: see {@link isSqliteUnavailable})
   *   after rolling everything back: then nothing of the batch is written.
   */
  run(operations: ReadonlyArray<() => unknown>): OperationOutcome[] {
    const outcomes: OperationOutcome[] = [];
    this.begin.run();
    try {
      for (const operation of operations) {
        this.savepoint.run();
        try {
          const value = operation();
          this.release.run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          if (isSqliteUnavailable(error)) throw error;
          this.rollbackTo.run();
          this.release.run();
          outcomes.push({ ok: false, error });
        }
      }
      this.commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
    this.committedTransactions += 1;
    this.committedOperations += operations.length;
    return outcomes;
  }
}
