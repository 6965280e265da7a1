import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SQLITE_SCHEMA_SQL, SQLITE_SCHEMA_VERSION } from './sqlite-schema';

/**
 * Opens a connection to the event store's SQLite file with the store's settings, creating the
 * file, its parent directories and the schema when missing: WAL journal, `synchronous=FULL` (a
 * committed transaction survives a crash or power loss), `secure_delete` on (erased rows are
 * overwritten with zeros), `busy_timeout` = `busyTimeoutMs` (ms a write waits for another
 * connection's write lock). Every connection of the store (the reader and the writer thread's)
 * is opened here, so they cannot differ.
 * @throws Error (better-sqlite3's) when the file cannot be opened or is not a database.
 */
export function openSqliteDatabase(filePath: string, busyTimeoutMs: number): Database.Database {
  if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true });
  const db = new Database(filePath);
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('secure_delete = ON');
    db.exec('BEGIN IMMEDIATE');
    try {
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
