/**
 * `npm run copy-store -- --to <target>`: copies the configured event store (the source: DATA_DIR's
 * SQLite file, or DATABASE_URL) into an empty target (a PostgreSQL database, or a new SQLite file)
 * verbatim, and verifies it (`store-copy/copy-log.ts`). With the embedded store as source it takes
 * DATA_DIR's lock (refused, exit code 2, while a service runs there); with PostgreSQL, stop every
 * replica first: a source written during the copy fails it (exit code 1, the target emptied again).
 * A source that cannot be read is refused (exit code 2) before the target is touched. The target is
 * marked (`es_copy_in_progress`) until the copy is verified, and refused (exit code 2, the mark taken
 * back) when a service uses it (connected to the PostgreSQL database; the SQLite file held open); a
 * failed copy removes only what it wrote, and nothing when something else wrote into the target; `--empty-partial-target` empties a target
 * so marked by a copy that was killed, and copies again.
 * Prints a progress line every 10,000 events or 10 s and a summary with the digest both logs have.
 */
// First: --help and a bad argument end the process here, before the store modules load.
import { copyStoreArguments } from './copy-store-command-line';
import * as path from 'node:path';
import { createEventStore, withoutCredentials, type EventStore } from '@lib/event-store';
import { loadServiceConfig } from './config/service-config';
import { eventStoreConfig, eventStoreKind } from './config/event-store-config';
import { requireExistingSqliteStore } from './config/data-dir';
import { lockDataDir, type DataDirLock } from './config/data-dir-lock';
import { asConfigurationError } from './config/configuration-error';
import { withholdModeBitsFromNewFiles } from './config/data-dir-modes';
import { copyIntoTarget } from './store-copy/copy-into-target';
import { CopyRefusedError } from './store-copy/copy-errors';

async function main(): Promise<void> {
  // What it writes is not readable by other local users, as the service's files (data-dir-modes.ts).
  withholdModeBitsFromNewFiles();
  const config = loadServiceConfig();
  const kind = eventStoreKind(config);
  if (kind === 'kurrentdb')
    throw new CopyRefusedError("KURRENTDB_CONNECTION_STRING is set: a KurrentDB log cannot be copied by this command (use KurrentDB's own backup and restore)");
  let lock: DataDirLock | undefined;
  if (kind === 'sqlite') {
    requireExistingSqliteStore(config);
    lock = lockDataDir(config.dataDir, 'copy-store');
  }
  const sourceName = kind === 'sqlite' ? config.sqliteEventsFile : withoutCredentials(config.databaseUrl!);
  let source: EventStore | undefined;
  try {
    // Without the writer thread: the copy reads on this thread and nothing else writes.
    const base = eventStoreConfig(config);
    try {
      // The driver's own message for a source it cannot reach (the service's names a retry the copy does not make).
      source = createEventStore({
        ...base,
        sqlite: { ...base.sqlite, writerThread: false },
        ...(base.postgres ? { postgres: { ...base.postgres, describeUnavailable: undefined } } : {}),
      });
    } catch (error) {
      // The SQLite source opens here (PostgreSQL on first use, refused the same way by copyLog).
      throw new CopyRefusedError(`the source ${sourceName} cannot be read (nothing was copied): ${(error as Error).message}`);
    }
    // A failed copy into a SQLite file removes that file again, so the same command can be rerun.
    const summary = await copyIntoTarget(source, copyStoreArguments.to, {
      sqliteSource: kind === 'sqlite' ? path.resolve(config.sqliteEventsFile) : undefined,
      onOpened: () => process.stdout.write(`copying the event store ${sourceName} into ${describeTarget(copyStoreArguments.to)}\n`),
      pageSize: copyStoreArguments.pageSize,
      sourceName,
      emptyPartialTarget: copyStoreArguments.emptyPartialTarget === true,
      say: (line) => process.stdout.write(`${line}\n`),
    });
    const seconds = summary.copyMs / 1000;
    process.stdout.write(
      `copied ${summary.events} events of ${summary.streams} streams and ${summary.deletedStreams} deleted streams (erasures), head position ${summary.head}, in ${seconds.toFixed(1)} s (${Math.round(summary.events / Math.max(seconds, 0.001))} events/s; verified in ${((summary.ms - summary.copyMs) / 1000).toFixed(1)} s more)\n` +
        `verified: both logs hold the same events per stream, the same digest (sha256 ${summary.sha256} of stream, revision, id, type, data, metadata and time recorded), the same head and deleted streams\n` +
        'next: point every replica at the target (DATABASE_URL, or SQLITE_EVENTS_FILE), see docs/stores.md, "Switching stores"\n',
    );
  } finally {
    await source?.close().catch(() => undefined);
    lock?.release();
  }
}

/** The target as the lines name it (a URL's password masked). */
function describeTarget(to: string): string {
  return /^postgres(ql)?:\/\//i.test(to) ? withoutCredentials(to) : path.resolve(to);
}

main().catch((err: Error) => {
  process.stderr.write(`copy-store failed: ${err.message}\n`);
  process.exit(err instanceof CopyRefusedError || asConfigurationError(err) ? 2 : 1);
});
