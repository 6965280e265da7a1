import type Database from 'better-sqlite3';

/**
 * Erasure in the WAL: after a transaction that deleted events, the WAL still holds older copies
 * of their pages until it is checkpointed. `wal_checkpoint(TRUNCATE)` copies it into the database
 * file and truncates it to zero bytes. Another connection's open read or write can prevent a full
 * checkpoint: the purge then stays pending and is retried after the next transaction and on close.
 */
export class SqliteWalPurge {
  /** A committed deletion still has older page copies in the WAL. */
  pending = false;

  constructor(private readonly db: Database.Database) {}

  /**
   * Checkpoints (TRUNCATE) now. Returns false when another connection prevented a full
   * checkpoint (it stays pending).
   * @throws better-sqlite3's error when the checkpoint itself fails.
   */
  purge(): boolean {
    const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    const complete = result === undefined || result.busy === 0;
    this.pending = !complete;
    return complete;
  }

  /** Purges when pending; a failure leaves it pending (the deletion is committed either way). */
  tryPurge(): void {
    if (!this.pending) return;
    try {
      this.purge();
    } catch {
      // stays pending: retried after the next transaction and on close
    }
  }
}
