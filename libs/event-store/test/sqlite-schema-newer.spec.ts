/**
 * An events file a newer build set up is refused, untouched (newcomer ncops67 F5): its `user_version` was reset to this
 * build's version without a word, where a PostgreSQL database of a newer schema is refused (EventStoreSchemaNewerError).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EventStoreSchemaNewerError, SqliteEventStore } from '../src';
import { SQLITE_SCHEMA_VERSION } from '../src/sqlite/sqlite-schema';

describe('an SQLite events file of a newer schema version', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'schema-newer-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const fileAt = (version: number) => {
    const file = path.join(dir, 'events.sqlite');
    const db = new Database(file);
    db.pragma(`user_version = ${version}`);
    db.close();
    return file;
  };
  const versionOf = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.pragma('user_version', { simple: true });
    } finally {
      db.close();
    }
  };

  it('given a file a newer build set up, when the store opens it, then it is refused naming both versions and left as it was', () => {
    const file = fileAt(SQLITE_SCHEMA_VERSION + 6);
    expect(() => SqliteEventStore.open(file, { writerThread: false })).toThrow(EventStoreSchemaNewerError);
    expect(() => SqliteEventStore.open(file, { writerThread: false })).toThrow(
      new RegExp(`events\\.sqlite holds event store schema version ${SQLITE_SCHEMA_VERSION + 6}, newer than this build knows \\(${SQLITE_SCHEMA_VERSION}\\)`),
    );
    expect(versionOf(file)).toBe(SQLITE_SCHEMA_VERSION + 6);
  });

  it("given a file of this build's version or older, when the store opens it, then it opens and records this build's version", async () => {
    for (const version of [0, SQLITE_SCHEMA_VERSION]) {
      const file = fileAt(version);
      const store = SqliteEventStore.open(file, { writerThread: false });
      await store.close();
      expect(versionOf(file)).toBe(SQLITE_SCHEMA_VERSION);
      rmSync(file);
      rmSync(`${file}-wal`, { force: true });
      rmSync(`${file}-shm`, { force: true });
    }
  });
});
