import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEventStore, type EventStore } from '@lib/event-store';
import { CopyRefusedError } from './copy-errors';

/**
 * Opens the target of `npm run copy-store -- --to <to>`: a PostgreSQL store for a `postgres://` or
 * `postgresql://` URL (schema set up on first use), else a SQLite store at the path `to` (without
 * the writer thread), which must not exist yet (or be an empty file) and must not be the source's
 * file (`sqliteSource`, resolved).
 * @throws CopyRefusedError for a KurrentDB connection string, the source's own file, an existing
 *   non-empty file, or a file whose directory does not exist (nothing created).
 */
export function openCopyTarget(to: string, options: { sqliteSource?: string } = {}): EventStore {
  if (/^postgres(ql)?:\/\//i.test(to)) return createEventStore({ postgresUrl: to });
  if (/^(kurrentdb|kurrent|esdb)(\+discover)?:\/\//i.test(to))
    throw new CopyRefusedError(
      '--to is a KurrentDB connection string: a log cannot be copied into KurrentDB by this command (its positions, times and deleted streams are its own)',
    );
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(to)) throw new CopyRefusedError(`--to ${to}: use a PostgreSQL URL (postgres://…) or the path of a new SQLite file`);
  const file = path.resolve(to);
  if (options.sqliteSource !== undefined && file === options.sqliteSource) throw new CopyRefusedError(`--to ${to} is the source's own file`);
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (stat && (!stat.isFile() || stat.size > 0))
    throw new CopyRefusedError(`--to ${to}: ${stat.isFile() ? 'the file exists' : 'is not a file'}: give the path of a SQLite file that does not exist yet`);
  if (!fs.statSync(path.dirname(file), { throwIfNoEntry: false })?.isDirectory())
    throw new CopyRefusedError(`--to ${to}: its directory ${path.dirname(file)} does not exist`);
  return createEventStore({ sqliteFile: file, sqlite: { writerThread: false } });
}

/** The SQLite file `to` names as a copy target (resolved), or undefined for a URL (`postgres://…`). */
export function sqliteTargetFile(to: string): string | undefined {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(to) ? undefined : path.resolve(to);
}

/** Removes the SQLite file `file` and its `-wal`, `-shm` and `-journal` files, those that exist. */
export function removeSqliteFile(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
}
