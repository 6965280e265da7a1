/**
 * The SQLite store's write probe (`EventStore.probeWrite`): whether a write would be taken now,
 * without writing. Two checks, both cheap: the write lock (`BEGIN IMMEDIATE; ROLLBACK` with no
 * busy timeout, so a lock another process or the writer thread holds answers `SQLITE_BUSY` at once
 * instead of blocking the caller's thread) and the free space of the file's file system (an empty
 * transaction writes no page, so it cannot tell a full disk: at least {@link PROBE_MIN_FREE_BYTES}
 * must be free).
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { EventStoreUnavailableError } from '../errors';

/** Free bytes the file system of the store's file must have for the probe to say writes would be taken (1 MiB). */
export const PROBE_MIN_FREE_BYTES = 1024 * 1024;

/**
 * Probes `db` (a store's connection, not in a transaction; its busy timeout `busyTimeoutMs`, ms,
 * is set back afterwards). Throws SQLite's error when the write lock cannot be had now, and an
 * {@link EventStoreUnavailableError} (cause code `SQLITE_FULL`) when the file system holding the
 * file has less than {@link PROBE_MIN_FREE_BYTES} free; an in-memory database has no file system to check.
 */
export function probeSqliteWrite(db: Database.Database, busyTimeoutMs: number): void {
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
  } finally {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  }
  if (db.name === ':memory:' || db.name === '') return;
  const { bavail, bsize } = fs.statfsSync(dirname(db.name));
  const free = bavail * bsize;
  if (free < PROBE_MIN_FREE_BYTES)
    throw new EventStoreUnavailableError(
      `SQLite event store: the disk holding ${db.name} is full (${free} bytes free, fewer than ${PROBE_MIN_FREE_BYTES}): free space on its file system`,
      Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }),
    );
}
