/**
 * The SQLite store's write probe (`EventStore.probeWrite`): whether a write is taken now, by making one that changes
 * nothing. Two checks, both cheap: a write transaction that rewrites the file's `user_version` with its own value and
 * commits (one page to the WAL, then its sync; no busy timeout, so a lock another process or the writer thread holds
 * answers `SQLITE_BUSY` at once instead of blocking the caller's thread). Until 2026-12-06 the transaction was empty
 * (`BEGIN IMMEDIATE; ROLLBACK`), which wrote nothing: a store whose writes failed with `disk I/O error` (past a file-size
 * limit or a quota) was probed "writable" every 5 s while every write failed (newcomer ncops67 F1). And the free space
 * of the file's file system: at least {@link PROBE_MIN_FREE_BYTES} must be free, as a one-page write may still fit a
 * disk that the next append does not.
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { EventStoreUnavailableError } from '../errors';

/** Free bytes the file system of the store's file must have for the probe to say writes would be taken (1 MiB). */
export const PROBE_MIN_FREE_BYTES = 1024 * 1024;

/**
 * The free bytes (a number) of the file system holding directory `dir` when they are fewer than
 * {@link PROBE_MIN_FREE_BYTES}, the least a write of the service needs (the write probe's rule, also
 * the start-up's refusal of a full disk); null when there are enough. One `statfs` call.
 * @throws what `statfsSync` throws (e.g. ENOENT for a directory that does not exist).
 */
export function freeBytesShort(dir: string): number | null {
  const { bavail, bsize } = fs.statfsSync(dir);
  const free = bavail * bsize;
  return free < PROBE_MIN_FREE_BYTES ? free : null;
}

/**
 * Probes `db` (a store's connection, not in a transaction; its busy timeout `busyTimeoutMs`, ms,
 * is set back afterwards). Throws SQLite's error when the write lock cannot be had now or the
 * write fails (`SQLITE_IOERR…`, `SQLITE_FULL`, `SQLITE_READONLY`; the transaction is rolled back), and an
 * {@link EventStoreUnavailableError} (cause code `SQLITE_FULL`) when the file system holding the
 * file has less than {@link PROBE_MIN_FREE_BYTES} free; an in-memory database has no file system to check.
 */
export function probeSqliteWrite(db: Database.Database, busyTimeoutMs: number): void {
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
    try {
      const version = db.pragma('user_version', { simple: true }) as number;
      db.pragma(`user_version = ${Math.floor(version)}`);
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  } finally {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  }
  if (db.name === ':memory:' || db.name === '') return;
  const free = freeBytesShort(dirname(db.name));
  if (free !== null)
    throw new EventStoreUnavailableError(
      `SQLite event store: the disk holding ${db.name} is full (${free} bytes free, fewer than ${PROBE_MIN_FREE_BYTES}): free space on its file system`,
      Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }),
    );
}
