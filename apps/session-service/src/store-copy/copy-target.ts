import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEventStore, describeCopyMarker, sqliteFileCopyMarker, type EventStore } from '@lib/event-store';
import { CopyRefusedError, refuseWhileCopyRuns } from './copy-errors';

/**
 * Opens the target of `npm run copy-store -- --to <to>`: a PostgreSQL store for a `postgres://` or
 * `postgresql://` URL (schema set up on first use), else a SQLite store at the path `to` (without
 * the writer thread), which must not exist yet (or be an empty file) and must not be the source's
 * file (`sqliteSource`, resolved), unless it holds a partial copy this command marked
 * (`es_copy_in_progress`) and `emptyPartialTarget` is set: that file is removed (told to `say`) and made again.
 * The target accepts the copy's mark (`acceptCopyInProgress`): `copyLog` decides on it.
 * @throws CopyRefusedError for a KurrentDB connection string, the source's own file, an existing
 *   non-empty file (a partial copy: saying to use `--empty-partial-target`), or a file whose directory does not exist (nothing created).
 */
export function openCopyTarget(to: string, options: { sqliteSource?: string; emptyPartialTarget?: boolean; say?: (line: string) => void } = {}): EventStore {
  // The copy's own mark (es_copy_in_progress) is accepted on its target: copyLog decides on it.
  if (/^postgres(ql)?:\/\//i.test(to)) return createEventStore({ postgresUrl: to, postgres: { acceptCopyInProgress: true } });
  if (/^(kurrentdb|kurrent|esdb)(\+discover)?:\/\//i.test(to))
    throw new CopyRefusedError(
      '--to is a KurrentDB connection string: a log cannot be copied into KurrentDB by this command (its positions, times and deleted streams are its own)',
    );
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(to)) throw new CopyRefusedError(`--to ${to}: use a PostgreSQL URL (postgres://…) or the path of a new SQLite file`);
  const file = path.resolve(to);
  if (options.sqliteSource !== undefined && file === options.sqliteSource) throw new CopyRefusedError(`--to ${to} is the source's own file`);
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  const partial = stat?.isFile() && stat.size > 0 ? sqliteFileCopyMarker(file) : undefined;
  if (partial !== undefined && options.emptyPartialTarget) {
    refuseWhileCopyRuns(partial, `--to ${to}`);
    // A file this command made and marked, never finished: removed (with its -wal and -shm), then made again.
    removeSqliteFile(file);
    options.say?.(`removed the partial copy ${file} (${describeCopyMarker(partial)} and never finished); copying again`);
  } else if (partial !== undefined)
    throw new CopyRefusedError(
      `--to ${to}: the file holds a partial copy: its table es_copy_in_progress says ${describeCopyMarker(partial)} and never finished and verified it (killed?); run the same command with --empty-partial-target to remove it and copy again (only once that copy has ended), or delete the file (and its -wal and -shm files)`,
    );
  else if (stat && (!stat.isFile() || stat.size > 0))
    throw new CopyRefusedError(
      `--to ${to}: ${stat.isFile() ? 'the file exists' : 'is not a file'}: give the path of a SQLite file that does not exist yet${options.emptyPartialTarget && stat.isFile() ? ' (--empty-partial-target removes only a partial copy this command marked, es_copy_in_progress, and this file has no such mark)' : ''}`,
    );
  if (!fs.statSync(path.dirname(file), { throwIfNoEntry: false })?.isDirectory())
    throw new CopyRefusedError(`--to ${to}: its directory ${path.dirname(file)} does not exist`);
  return createEventStore({ sqliteFile: file, sqlite: { writerThread: false, acceptCopyInProgress: true } });
}

/** The SQLite file `to` names as a copy target (resolved), or undefined for a URL (`postgres://…`). */
export function sqliteTargetFile(to: string): string | undefined {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(to) ? undefined : path.resolve(to);
}

/** Removes the SQLite file `file` and its `-wal`, `-shm` and `-journal` files, those that exist. */
export function removeSqliteFile(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
}
