/**
 * The SQLite write probe makes a write (newcomer ncops67 F1): an empty transaction (`BEGIN IMMEDIATE; ROLLBACK`) wrote no
 * page, so a store whose writes failed (`disk I/O error` past a file-size limit or a quota) was probed writable every 5 s.
 * Here a connection that may not write (`PRAGMA query_only`) stands in for such a file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { probeSqliteWrite } from '../src/sqlite/sqlite-write-probe';

describe('the SQLite write probe', () => {
  let dir: string;
  let db: Database.Database;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'write-probe-'));
    db = new Database(path.join(dir, 'events.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('user_version = 3');
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('given a file that takes writes, when probed, then it passes, commits a page and changes nothing', () => {
    const walBefore = fs.statSync(path.join(dir, 'events.sqlite-wal')).size;
    expect(() => probeSqliteWrite(db, 5000)).not.toThrow();
    expect(fs.statSync(path.join(dir, 'events.sqlite-wal')).size).toBeGreaterThan(walBefore);
    expect(db.pragma('user_version', { simple: true })).toBe(3);
    expect(db.inTransaction).toBe(false);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('given a connection whose writes fail, when probed, then it fails with the write error and leaves no transaction open', () => {
    db.pragma('query_only = ON');
    expect(() => probeSqliteWrite(db, 5000)).toThrow(/readonly/);
    expect(db.inTransaction).toBe(false);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('given another connection holding the write lock, when probed, then it fails at once with SQLITE_BUSY', () => {
    const other = new Database(path.join(dir, 'events.sqlite'));
    try {
      other.exec('BEGIN IMMEDIATE');
      const started = Date.now();
      expect(() => probeSqliteWrite(db, 5000)).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      other.close();
    }
  });
});
