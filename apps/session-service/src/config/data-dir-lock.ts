/**
 * One service process per `DATA_DIR`: the read models under it are written by that process's
 * projector alone (two projectors on one read-model file lose acknowledged events from the read
 * models). Replicas each have their own `DATA_DIR`; they may share `SQLITE_EVENTS_FILE` or
 * `DATABASE_URL`.
 *
 * The lock is an operating-system file lock: an exclusive SQLite lock (`fcntl` on POSIX) held on
 * `DATA_DIR/service.lock` by an open connection for the life of the service. The kernel drops it
 * when the process ends in any way (SIGKILL, crash), so a killed service never blocks the next
 * start; SQLite also keeps the lock between connections of one process (two services started
 * in-process on the same directory are refused too). Who holds it (pid, host, since when) is
 * written next to it in `service.lock.json`, for the refusal's message.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigurationError } from './configuration-error';
import { fileSystemCause, readOnlyDataDir } from './data-dir';

export { ConfigurationError } from './configuration-error';

/** Who holds a data directory's lock, as its holder recorded it (`service.lock.json`). */
export interface DataDirHolder {
  pid: number;
  hostname: string;
  /** ISO 8601 time the holder took the lock. */
  since: string;
  /** What holds it: the service, `rebuild-read-models` or `copy-store` (absent in records written before it was kept: the service). */
  command?: DataDirCommand;
}

/** The commands that take a data directory's lock, as named in the refusal a second one gets. */
export type DataDirCommand = 'service' | 'rebuild-read-models' | 'copy-store';

/** A held lock on a data directory. `release()` is idempotent. */
export interface DataDirLock {
  readonly dataDir: string;
  release(): void;
}

/** File names under `DATA_DIR`. */
export const LOCK_FILE_NAME = 'service.lock';
export const LOCK_HOLDER_FILE_NAME = 'service.lock.json';

/** Locks held by this process: the open connection is the lock, so it must not be garbage-collected (closing it releases the lock). */
const held = new Set<Database.Database>();

function readHolder(file: string): DataDirHolder | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DataDirHolder>;
    if (typeof parsed.pid !== 'number') return undefined;
    const command = parsed.command === 'rebuild-read-models' || parsed.command === 'copy-store' ? parsed.command : undefined;
    return { pid: parsed.pid, hostname: String(parsed.hostname ?? '?'), since: String(parsed.since ?? '?'), ...(command ? { command } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * True when `err`, met writing under `dataDir`, comes from a read-only file system: `EROFS`, or
 * SQLite's `SQLITE_READONLY…` / `SQLITE_CANTOPEN` where the directory is on one ({@link fileSystemCause}).
 */
export function isReadOnly(err: unknown, dataDir: string): boolean {
  const code = (err as { code?: unknown }).code;
  if (code === 'EROFS') return true;
  return typeof code === 'string' && /^SQLITE_(READONLY|CANTOPEN)/.test(code) && fileSystemCause(dataDir, code) === 'EROFS';
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

/**
 * Takes the lock on `dataDir` (an existing directory) for this process, without waiting, recording
 * `command` (what this process is: the service by default) for the refusal another process gets.
 * @throws ConfigurationError naming `DATA_DIR`, the holder (which command, pid, host, since when) when it is known,
 *   and what to do, when another service process (or another service in this process) holds it;
 *   {@link readOnlyDataDir} on a read-only file system; the file system's other errors.
 */
export function lockDataDir(dataDir: string, command: DataDirCommand = 'service'): DataDirLock {
  const lockFile = path.join(dataDir, LOCK_FILE_NAME);
  const holderFile = path.join(dataDir, LOCK_HOLDER_FILE_NAME);
  // timeout 0: a held lock is answered at once (SQLITE_BUSY), not after better-sqlite3's 5 s default.
  let db: Database.Database;
  try {
    db = new Database(lockFile, { timeout: 0 });
  } catch (err) {
    throw isReadOnly(err, dataDir) ? readOnlyDataDir(dataDir) : err;
  }
  try {
    db.pragma('journal_mode = MEMORY');
    // EXCLUSIVE locking mode keeps the lock the transaction takes until the connection closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if (isReadOnly(err, dataDir)) throw readOnlyDataDir(dataDir);
    if (!isBusy(err)) throw err;
    const holder = readHolder(holderFile);
    const kind = holder?.command && holder.command !== 'service' ? `${holder.command} process` : 'service process';
    const who = holder ? `another ${kind} (pid ${holder.pid} on ${holder.hostname}, since ${holder.since})` : 'another service process';
    throw new ConfigurationError({
      variable: 'DATA_DIR',
      value: dataDir,
      problem: `in use by ${who}; two processes on one DATA_DIR corrupt its read models`,
      fix: 'give each replica its own DATA_DIR (replicas may share SQLITE_EVENTS_FILE or DATABASE_URL), or stop the other process first',
    });
  }
  const holder: DataDirHolder = { pid: process.pid, hostname: os.hostname(), since: new Date().toISOString(), command };
  held.add(db);
  try {
    fs.writeFileSync(holderFile, JSON.stringify(holder) + '\n');
  } catch (err) {
    held.delete(db);
    db.close();
    throw isReadOnly(err, dataDir) ? readOnlyDataDir(dataDir) : err;
  }
  let released = false;
  return {
    dataDir,
    release() {
      if (released) return;
      released = true;
      // Remove the holder record first (while still holding the lock), if it is still ours.
      const recorded = readHolder(holderFile);
      if (recorded?.pid === holder.pid && recorded.since === holder.since) fs.rmSync(holderFile, { force: true });
      held.delete(db);
      db.close();
    },
  };
}
