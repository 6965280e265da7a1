import Database from 'better-sqlite3';
import { COPY_MARKER_TABLE, UNKNOWN_COPY_MARKER, markerOfRow, type CopyMarker } from '../copy-marker';

/** The SQL creating the marker table in SQLite (`started`: ms since the epoch; `pid`, `host`: the copying process's, see {@link CopyMarker}). */
export const SQLITE_COPY_MARKER_SQL = `CREATE TABLE IF NOT EXISTS ${COPY_MARKER_TABLE} (started INTEGER NOT NULL, source TEXT NOT NULL, pid INTEGER, host TEXT)`;

/**
 * The copy's mark in the SQLite database `db` ({@link CopyMarker}; {@link UNKNOWN_COPY_MARKER} for a
 * marker table without its row), `undefined` when it has no marker table (not a copy's target, or a finished one).
 */
export function readSqliteCopyMarker(db: Database.Database): CopyMarker | undefined {
  const table = db.prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(COPY_MARKER_TABLE);
  if (!table) return undefined;
  // SELECT *: a mark an older copy left has no pid and host columns.
  const row = db
    .prepare<[], { started: number; source: string; pid?: number | null; host?: string | null }>(`SELECT * FROM ${COPY_MARKER_TABLE} LIMIT 1`)
    .get();
  return row ? markerOfRow({ ...row, started: new Date(Number(row.started)) }) : UNKNOWN_COPY_MARKER;
}

/**
 * The copy's mark in the existing SQLite file `file` (read without creating or changing any table),
 * as {@link readSqliteCopyMarker}; `undefined` too for a file that is not a SQLite database.
 */
export function sqliteFileCopyMarker(file: string): CopyMarker | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    return readSqliteCopyMarker(db);
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

/**
 * Whether another connection (of any process) has the existing SQLite file `file` open: a connection of
 * its own takes the file's EXCLUSIVE lock without waiting (`locking_mode = EXCLUSIVE`, an empty IMMEDIATE
 * transaction), which every other open connection in WAL mode refuses (it holds a SHARED lock while open),
 * then closes. False for a file that is not a SQLite database (nothing holds it as one).
 */
export function sqliteFileHeldOpen(file: string): boolean {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN IMMEDIATE; COMMIT');
    return false;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
  } finally {
    db?.close();
  }
}
