import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyStoreApplicationName, createEventStore, describeCopyMarker, sqliteFileCopyMarker, sqliteFileHeldOpen, type EventStore } from '@lib/event-store';
import { CopyRefusedError, refuseWhileCopyRuns, TargetInUseError } from './copy-errors';

/**
 * Opens the target of `npm run copy-store -- --to <to>`: a PostgreSQL store for a `postgres://` or
 * `postgresql://` URL (schema set up on first use), else a SQLite store at the path `to` (without
 * the writer thread), which must not exist yet (or be an empty file) and must not be the source's
 * file (`sqliteSource`, resolved), unless it holds a partial copy this command marked
 * (`es_copy_in_progress`) and `emptyPartialTarget` is set: that file is removed (told to `say`) and made again.
 * The target accepts the copy's mark (`acceptCopyInProgress`): `copyLog` decides on it. A PostgreSQL target's
 * connections are named as this copy's ({@link copyStoreApplicationName}), so that copyLog tells a service's from them.
 * @throws CopyRefusedError for a KurrentDB connection string, the source's own file, an existing
 *   non-empty file (a partial copy: saying to use `--empty-partial-target`), or a file whose directory does not exist (nothing created);
 *   TargetInUseError for a partial copy to be removed that another connection has open (nothing removed).
 */
export function openCopyTarget(to: string, options: { sqliteSource?: string; emptyPartialTarget?: boolean; say?: (line: string) => void } = {}): EventStore {
  // The copy's own mark (es_copy_in_progress) is accepted on its target: copyLog decides on it.
  // Its connections named as the copy's own (copyStoreApplicationName), told from a service's by copyLog (LogCopy.otherUsers).
  if (/^postgres(ql)?:\/\//i.test(to))
    return createEventStore({ postgresUrl: to, postgres: { acceptCopyInProgress: true, applicationName: copyStoreApplicationName() } });
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
    // Another process holding it open (a service started on it before its mark) would keep writing into the removed file.
    if (sqliteFileHeldOpen(file))
      throw new TargetInUseError(
        `--to ${to}: --empty-partial-target refused: the file holds a partial copy (${describeCopyMarker(partial)}), but another connection has it open (a service or rebuild-read-models on it as SQLITE_EVENTS_FILE, or another program): nothing was removed; stop every service using the file, then run this command again`,
      );
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
