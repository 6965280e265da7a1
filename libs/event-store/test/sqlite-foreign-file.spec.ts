/**
 * An SQLite file holding other tables than the event store's is refused, untouched (newcomer ncops67 F5: SQLITE_EVENTS_FILE
 * naming another replica's read-models.sqlite was accepted and the store's tables created inside it), as a PostgreSQL
 * database holding another application's tables of the store's names is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../src';

describe('an SQLite file of another program given as the events file', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'foreign-file-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const tablesOf = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name").all() as Array<{ name: string }>).map(
        (r) => r.name,
      );
    } finally {
      db.close();
    }
  };

  it('given a file holding tables of its own (a replica’s read models), when the store opens it, then it is refused naming them and nothing is created', () => {
    const file = path.join(dir, 'read-models.sqlite');
    const db = new Database(file);
    db.exec('CREATE TABLE session_log (x); CREATE TABLE window_entries (y)');
    // A read models file records its own schema version (24 here): not taken for an events file of a newer build (ncrecheck68 N1).
    db.pragma('user_version = 24');
    db.close();
    expect(() => SqliteEventStore.open(file, { writerThread: false })).toThrow(
      /^cannot open SQLite event store at .*read-models\.sqlite: it holds tables that are not the event store's \(session_log, window_entries\): another program's database or a replica's read models/,
    );
    expect(tablesOf(file)).toEqual(['session_log', 'window_entries']);
  });

  it('given an events file of the store (or a new one), when the store opens it again, then it opens', async () => {
    const file = path.join(dir, 'events.sqlite');
    await SqliteEventStore.open(file, { writerThread: false }).close();
    const store = SqliteEventStore.open(file, { writerThread: false });
    await store.close();
    expect(tablesOf(file)).toEqual(['deleted_streams', 'events', 'streams']);
  });
});
