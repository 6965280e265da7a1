import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { COPY_MARKER_TABLE } from '../copy-marker';
import { EventStoreSchemaNewerError } from '../errors';
import { SQLITE_SCHEMA_SQL, SQLITE_SCHEMA_VERSION } from './sqlite-schema';

/**
 * Opens a connection to the event store's SQLite file with the store's settings, creating the
 * file, its parent directories and the schema when missing: WAL journal, `synchronous=FULL` (a
 * committed transaction survives a crash or power loss), `secure_delete` on (erased rows are
 * overwritten with zeros), `busy_timeout` = `busyTimeoutMs` (ms a write waits for another
 * connection's write lock). Every connection of the store (the reader and the writer thread's)
 * is opened here, so they cannot differ.
 * @throws Error (better-sqlite3's) when the file cannot be opened or is not a database; EventStoreSchemaNewerError when its
 *   `user_version` is newer than {@link SQLITE_SCHEMA_VERSION} (a newer build set it up: nothing is changed); Error when it
 *   holds tables that are not the store's ({@link STORE_TABLES}: another program's database, a replica's read models).
 */
export function openSqliteDatabase(filePath: string, busyTimeoutMs: number): Database.Database {
  if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true });
  const db = new Database(filePath);
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    enterWalMode(db, busyTimeoutMs);
    db.pragma('synchronous = FULL');
    db.pragma('secure_delete = ON');
    db.exec('BEGIN IMMEDIATE');
    try {
      // Another program's database, or a replica's read models named as the events file (newcomer ncops67 F5: the store's
      // tables were created in it), is refused before anything is created in it, as a PostgreSQL database holding another
      // application's tables is; a file without the store's `events` table is told so whatever version it records (a read
      // models file records its own: newcomer ncrecheck68 N1 was told to start a newer build).
      const foreign = foreignTables(db);
      const foreignFile = () =>
        new Error(
          `it holds tables that are not the event store's (${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? `, … ${foreign.length - 5} more` : ''}): another program's database or a replica's read models (read-models.sqlite), not an events file; nothing was changed`,
        );
      if (foreign.length > 0 && !hasEventsTable(db)) throw foreignFile();
      // A file a newer build set up (its schema may differ): refused untouched, as PostgreSQL's (newcomer ncops67 F5: it was reset to this build's version).
      const recorded = db.pragma('user_version', { simple: true }) as number;
      if (recorded > SQLITE_SCHEMA_VERSION) throw new EventStoreSchemaNewerError(recorded, SQLITE_SCHEMA_VERSION, `the SQLite event store file ${filePath}`);
      if (foreign.length > 0) throw foreignFile();
      db.exec(SQLITE_SCHEMA_SQL);
      db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The tables the event store's file may hold: its schema's and a copy's mark (SQLite's own, `sqlite_…`, aside). */
const STORE_TABLES: ReadonlySet<string> = new Set(['events', 'streams', 'deleted_streams', COPY_MARKER_TABLE]);

/** Whether `db` holds the store's `events` table. */
function hasEventsTable(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get() !== undefined;
}

/** The names of `db`'s tables (and views) that are not {@link STORE_TABLES}, sorted. */
function foreignTables(db: Database.Database): string[] {
  const rows = db
    .prepare(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`)
    .all() as Array<{
    name: string;
  }>;
  return rows.map((row) => row.name).filter((name) => !STORE_TABLES.has(name));
}

/** ms between tries of `journal_mode = WAL` while another connection holds the lock it needs. */
const WAL_SWITCH_RETRY_MS = 10;

/**
 * Sets `db`'s journal mode to WAL, trying again every {@link WAL_SWITCH_RETRY_MS} ms for up to
 * `busyTimeoutMs` ms while SQLite answers `SQLITE_BUSY`: SQLite does not call the busy handler
 * (the `busy_timeout` wait) for this switch, so while another connection holds a write lock on a
 * file still in its rollback journal (two processes opening a new file at once) it failed at once
 * with "database is locked" (seen: 1 in ~150 opens of a new file by three processes at once on a
 * loaded 2-core machine; CI's multi-process spec). Blocks the thread while it waits, as SQLite's
 * own busy wait does.
 * @throws SqliteError `SQLITE_BUSY` when the lock is still held after `busyTimeoutMs`; any other error at once.
 */
function enterWalMode(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      const busy = String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY');
      if (!busy || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, WAL_SWITCH_RETRY_MS);
    }
  }
}
