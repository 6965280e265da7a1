import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { HeldClaim } from '../claim.port';
import { EventStoreClosedError, EventStoreUnavailableError } from '../errors';

/** Prefix hashed with every claim name (the lock file's name), as PostgreSQL's lock keys are. */
const CLAIM_FILE_PREFIX = 'session-memory-compaction claim\u0000';

/**
 * The directory of the claims' lock files of the store file `storeFile`: beside it, named after the
 * file without its extension, `-claims` (`events.sqlite` → `events-claims`): not `events.sqlite-…`,
 * which the `events.sqlite*` a restore or a backup script handles (docs/stores.md) would take for one of
 * the store's files. Pure.
 */
export function sqliteClaimsDirectory(storeFile: string): string {
  return join(dirname(storeFile), `${basename(storeFile, extname(storeFile))}-claims`);
}

/**
 * The real path of the store file `storeFile` (symbolic links resolved), where SQLite keeps its
 * `-wal` and `-shm` files and beside which the claims directory is; `storeFile` as given when it does
 * not exist (yet) or cannot be resolved.
 */
export function realStoreFile(storeFile: string): string {
  try {
    return realpathSync(storeFile);
  } catch {
    return storeFile;
  }
}

/**
 * The lock file's name of the claim `name` (in {@link sqliteClaimsDirectory}): the first 128 bits
 * of SHA-256 of a fixed prefix and the name, in hex, and `.lock`. Pure.
 */
export function sqliteClaimFileName(name: string): string {
  return `${createHash('sha256')
    .update(CLAIM_FILE_PREFIX + name)
    .digest('hex')
    .slice(0, 32)}.lock`;
}

/**
 * `EventStore.tryClaim` on SQLite: a claim is SQLite's own exclusive lock on a small lock database
 * of its name, `<store file's directory>/<its name without extension>-claims/<hash of the name>.lock` (an empty file: the lock is taken, no
 * page is ever written, the file stays 0 bytes), held by a connection of its own opened for the
 * claim (`busy_timeout = 0`, `locking_mode = EXCLUSIVE`, `BEGIN EXCLUSIVE`): granted, the claim is
 * held; `SQLITE_BUSY`, another holds it (null, without waiting). `release()` rolls back and closes
 * that connection.
 *
 * Why it meets the port's contract: SQLite's unix VFS locks with POSIX `fcntl` locks, which the
 * kernel drops when the process ends however it ends (SIGKILL, crash): a claim never outlives its
 * process, with no heartbeat. Every process sharing the store file reaches the same lock file (it
 * is named after the store file's path and lives on the same file system; on a network file
 * system, locks are as good as its `fcntl`, as for the store itself). POSIX locks are per process,
 * but SQLite keeps the locks of every connection of the process per inode, so a second connection
 * of this process (of any store instance, any thread) is refused too: a name is held once in the
 * process. Lock files are deleted only when the session they guard is erased (`forget`): unlinking
 * one while another process has it open lets two processes lock two inodes of one name, harmless
 * then (a pass of the erased life is abandoned), not otherwise. There is one per session ever claimed, 0 bytes
 * each (an inode and a directory entry); the directory may be removed while no process uses the store.
 */
export class SqliteClaims {
  private readonly directory: string;
  /** The connections of the claims held now (released on {@link close}). */
  private readonly held = new Set<Database.Database>();
  private closed = false;

  /**
   * `storeFile`: the store file's path; its real path (symbolic links resolved) names the
   * directory, so that replicas reaching one file by different paths (a link to it) share their
   * claims (newcomer ncsqlitereplicas F2: a replica opening the store through a symbolic link had a
   * claims directory of its own, and both called the model for every decision).
   */
  constructor(storeFile: string) {
    this.directory = sqliteClaimsDirectory(realStoreFile(storeFile));
  }

  /**
   * See `EventStore.tryClaim`. Synchronous file work (a directory check, an open, a lock: well
   * under a millisecond on a local disk), never waiting for a lock.
   * @throws EventStoreClosedError after {@link close}.
   * @throws EventStoreUnavailableError when the lock file cannot be created, opened or locked for another reason than another holder.
   */
  async tryClaim(name: string): Promise<HeldClaim | null> {
    if (this.closed) throw new EventStoreClosedError('SQLite');
    const file = join(this.directory, sqliteClaimFileName(name));
    let db: Database.Database | undefined;
    try {
      mkdirSync(this.directory, { recursive: true });
      db = new Database(file);
      db.pragma('busy_timeout = 0');
      // no journal file beside the lock file while it is held (nothing is ever written)
      db.pragma('journal_mode = MEMORY');
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      closeQuietly(db);
      if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return null;
      throw new EventStoreUnavailableError(`SQLite event store: the claim's lock file ${file} could not be locked: ${(error as Error).message}`, error);
    }
    const connection = db;
    this.held.add(connection);
    return {
      release: async () => {
        if (!this.held.delete(connection)) return;
        closeQuietly(connection);
      },
    };
  }

  /**
   * See `EventStore.forgetClaim`: deletes the lock file of the claim `name` (none: nothing to do).
   * A process holding the claim now keeps its lock on the deleted file until it releases it, and a
   * claim of the name meanwhile creates and locks a new file (granted: advisory, see the class
   * doc). Never throws.
   */
  forget(name: string): void {
    try {
      rmSync(join(this.directory, sqliteClaimFileName(name)), { force: true });
    } catch {
      // a file that cannot be deleted now stays (it holds no content: a name's hash)
    }
  }

  /** Gives up every claim still held (their connections closed) and refuses new ones. Idempotent. */
  close(): void {
    this.closed = true;
    for (const connection of this.held) closeQuietly(connection);
    this.held.clear();
  }
}

/** Ends `db`'s transaction, if any, and closes it; never throws (a connection that cannot be closed drops its lock with the process). */
function closeQuietly(db: Database.Database | undefined): void {
  if (!db) return;
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
  } catch {
    // closing below ends the transaction too
  }
  try {
    db.close();
  } catch {
    // nothing more to do
  }
}
