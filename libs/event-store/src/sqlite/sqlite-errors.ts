/**
 * The one rule classifying SQLite errors of the embedded event store: whether an error concerns
 * the store rather than the operation ({@link isSqliteUnavailable}), whether it says the file is
 * damaged ({@link isSqliteCorrupt}) or its disk full ({@link isSqliteDiskFull}), and the store's
 * error for it ({@link toStoreError}). Every layer (reads, the group commit, the writer thread's
 * answers, opening the file) calls these.
 */
import { DuplicateEventIdError, EventStoreCorruptError, EventStoreUnavailableError, WrongExpectedRevisionError } from '../errors';

const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB|PROTOCOL|NOMEM|PERM|AUTH)/;

/** SQLite's result code of `error` (`SQLITE_…`), or of its `cause` (an error wrapped once, e.g. a writer thread's answer); undefined when none. */
function sqliteCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** True for a SQLite error that concerns the store, not the operation (lock timeout, I/O, full disk, damaged file, …). */
export function isSqliteUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && SQLITE_UNAVAILABLE.test(code);
}

/** True when `error` (or its cause) is SQLite's `SQLITE_CORRUPT…` or `SQLITE_NOTADB`: the database file is damaged or not a database. */
export function isSqliteCorrupt(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/**
 * True when `error` (or its cause) says the disk is full: SQLite's `SQLITE_FULL`, the system's
 * `ENOSPC`, or `cannot rollback - no transaction is active` (what opening a store gives when the
 * hot journal or WAL of a crash cannot be rolled back for want of space).
 */
export function isSqliteDiskFull(error: unknown): boolean {
  const code = sqliteCode(error);
  if (code !== undefined && (/^SQLITE_FULL/.test(code) || code === 'ENOSPC')) return true;
  const message = error instanceof Error ? error.message : String(error);
  return /cannot rollback - no transaction is active|ENOSPC|database or disk is full/.test(message);
}

/**
 * True when `error` (or its cause) says writing a database file failed for a reason of its disk, not of the operation:
 * {@link isSqliteDiskFull}, SQLite's `SQLITE_IOERR…` (`disk I/O error`: a write the system refused, e.g. `EFBIG` past a
 * file-size limit, `EDQUOT` past a quota, `EIO` of a failing disk; newcomer ncops67 F1), or those system codes themselves
 * (also as the message of a batch that failed in a worker thread). A file that cannot be written that way stays so until
 * someone acts: the read models' projector treats it as a full disk (writes refused, `/health` unavailable).
 */
export function isSqliteWriteFailure(error: unknown): boolean {
  if (isSqliteDiskFull(error)) return true;
  const code = sqliteCode(error);
  if (code !== undefined && (/^SQLITE_IOERR/.test(code) || /^(EFBIG|EDQUOT|EIO)$/.test(code))) return true;
  const message = error instanceof Error ? error.message : String(error);
  return /disk I\/O error|\b(EFBIG|EDQUOT)\b/.test(message);
}

/**
 * The store's error for `error`, thrown by an operation on the store file `file`: the store's own
 * errors unchanged; a damaged file ({@link isSqliteCorrupt}) → {@link EventStoreCorruptError}
 * naming `file`; another error concerning the store ({@link isSqliteUnavailable}, a closed
 * connection) → EventStoreUnavailableError; anything else unchanged.
 */
export function toStoreError(error: unknown, file: string): unknown {
  if (error instanceof EventStoreCorruptError || error instanceof WrongExpectedRevisionError || error instanceof DuplicateEventIdError) return error;
  if (isSqliteCorrupt(error)) return new EventStoreCorruptError(file, (error as Error).message, error);
  if (error instanceof EventStoreUnavailableError) return error;
  if (isSqliteUnavailable(error) || (error instanceof TypeError && /not open/.test(error.message))) {
    return new EventStoreUnavailableError(`SQLite event store: ${(error as Error).message}`, error);
  }
  return error;
}
