import type { EventStore } from '@lib/event-store';
import { copyLog, type CopyLogOptions, type CopySummary } from './copy-log';
import { CopyFailedError, TargetInUseError } from './copy-errors';
import { openCopyTarget, removeSqliteFile, sqliteTargetFile } from './copy-target';

/**
 * Opens the target `to` of `npm run copy-store` ({@link openCopyTarget}: a PostgreSQL URL, or the
 * path of a SQLite file that does not exist yet or is empty) and copies `source` into it
 * ({@link copyLog}), then closes the target. When the copy fails into a SQLite file, that file
 * (which held nothing before: {@link openCopyTarget} refuses any other) is removed with its
 * `-wal`/`-shm` files, so the same command can be run again as the failure's message says; not when
 * another connection has it open (TargetInUseError) or something else wrote into it (`othersWrote`).
 * @returns the copy's summary.
 * @throws CopyRefusedError as {@link openCopyTarget} and {@link copyLog} (nothing written; a SQLite
 *   file the command made is removed too).
 * @throws CopyFailedError as {@link copyLog}; into a SQLite file, with `removedFile` naming it.
 */
export async function copyIntoTarget(
  source: EventStore,
  to: string,
  options: CopyLogOptions & { sqliteSource?: string; onOpened?: () => void } = {},
): Promise<CopySummary> {
  const target = openCopyTarget(to, { sqliteSource: options.sqliteSource, emptyPartialTarget: options.emptyPartialTarget, say: options.say });
  const file = sqliteTargetFile(to);
  let closed = false;
  try {
    options.onOpened?.();
    return await copyLog(source, target, options);
  } catch (error) {
    // Another process uses the file (refused), or wrote into it (kept with the copy's rows): never removed under it.
    if (file === undefined || error instanceof TargetInUseError || (error instanceof CopyFailedError && error.othersWrote !== undefined)) throw error;
    closed = true;
    await target.close().catch(() => undefined);
    removeSqliteFile(file);
    throw error instanceof CopyFailedError ? new CopyFailedError(error.problem, true, file) : error;
  } finally {
    if (!closed) await target.close().catch(() => undefined);
  }
}
