/**
 * `npm run rebuild-read-models`: rebuilds every read model (active windows, recall, compaction
 * history, full log) from an empty database by replaying the event log. Uses the same
 * configuration as the service (DATA_DIR, KURRENTDB_CONNECTION_STRING or DATABASE_URL); stop the
 * service first (with PostgreSQL: only the replica whose DATA_DIR it rebuilds): it takes the same
 * DATA_DIR lock as the service, so it refuses (exit code 2) while a service process runs there.
 * With the embedded store, DATA_DIR and its events file (SQLITE_EVENTS_FILE) must exist: a mistyped
 * DATA_DIR is refused (exit code 2, naming it) instead of rebuilding from a new, empty store.
 * A damaged read-models file is moved aside as `read-models.sqlite.damaged-<time>` (one line says
 * so) and a new one built. Refused (exit code 2) when the store's log is empty (head 0) while the
 * read models reached a position: the store is missing, and the read models may be the last copy.
 * Prints one line naming the event store it reads (`reading the event store /srv/events.sqlite
 * (SQLITE_EVENTS_FILE)`, PostgreSQL's DATABASE_URL with its credentials masked: `eventStoreNamed`),
 * then a progress line at most every 2 s (`REBUILD_PROGRESS_MS`), with the embedded store too, and the final checkpoint;
 * reads the log 1000 events at a time (`REBUILD_PAGE_SIZE`): both checked like the service's numbers (`rebuild-settings.ts`).
 * Takes no arguments but `--help` (rebuild-read-models-command-line.ts): any other is refused (exit code 2), nothing opened.
 * Refused up front on a full disk by the start's rule (`refuseFullDisk`: less than 1 MiB free where DATA_DIR or the
 * embedded store's file is; exit code 1, as the start's refusal, `rebuild failed: the disk is full: …`), nothing opened.
 */
// First: --help and a bad argument end the process here, before the store modules load.
import './rebuild-read-models-command-line';
import * as path from 'node:path';
import { READ_MODEL_FILE_NAME, SessionProjector, type ReadModelStore } from '@lib/session';
import { openReadModelsSettingDamageAside } from './config/damaged-read-models';
import { refuseEmptyLogUnder } from './config/read-models-of-this-log';
import { loadServiceConfig } from './config/service-config';
import { loadRebuildSettings } from './config/rebuild-settings';
import { eventStoreKind, eventStoreNamed, openEventStore } from './config/event-store-config';
import { holdSchemaCreation, releaseSchemaCreation } from './config/schema-creation-hold';
import { refuseCopyInProgress } from './config/copy-in-progress-refusal';
import { ensureDataDir, refuseFullDisk, requireExistingSqliteStore, withholdModeBitsFromServiceFiles } from './config/data-dir';
import { lockDataDir } from './config/data-dir-lock';
import { asConfigurationError } from './config/configuration-error';
import { modesWithheldLine, withholdModeBitsFromNewFiles } from './config/data-dir-modes';

async function main(): Promise<void> {
  // What it writes is not readable by other local users, as the service's files (data-dir-modes.ts).
  withholdModeBitsFromNewFiles();
  const config = loadServiceConfig();
  // Events per read of the log and the least time between two progress lines (ms): REBUILD_PAGE_SIZE, REBUILD_PROGRESS_MS, checked like the service's numbers.
  const { pageSize, progressMs } = loadRebuildSettings();
  // A mistyped DATA_DIR must not become an empty store "rebuilt up to position 0".
  if (eventStoreKind(config) === 'sqlite') requireExistingSqliteStore(config);
  else ensureDataDir(config.dataDir);
  // The start's rule (1 MiB free where the read models and the embedded store are), before anything is opened or locked.
  refuseFullDisk(eventStoreKind(config) === 'sqlite' ? [config.dataDir, path.dirname(config.sqliteEventsFile)] : [config.dataDir], 'rebuild');
  const lock = lockDataDir(config.dataDir, 'rebuild-read-models');
  // Files an earlier release left readable by other users (the read models it rebuilds in place among them): no longer, as at the service's start.
  const withheld = withholdModeBitsFromServiceFiles(config);
  if (withheld.length > 0) process.stdout.write(`${modesWithheldLine(withheld)}\n`);
  const store = openEventStore(config);
  // PostgreSQL: a new database is not set up before the empty-log check below (a refused rebuild leaves it as found).
  holdSchemaCreation(store);
  let readModels: ReadModelStore;
  try {
    // A partial copy (copy-store's mark) is refused before its log is read (SQLite: at open).
    await refuseCopyInProgress(config, store);
    // A damaged file is moved aside (one line) and the rebuild builds a new one: the rebuild starts from an empty database anyway.
    readModels = await openReadModelsSettingDamageAside(config.dataDir, path.join(config.dataDir, READ_MODEL_FILE_NAME), store, {
      quickCheck: config.sqliteQuickCheck,
      say: (line) => process.stdout.write(`${line}\n`),
    });
  } catch (err) {
    await store.close();
    lock.release();
    throw err;
  }
  const started = Date.now();
  try {
    const head = await store.headPosition();
    // An empty log under read models at N > 0: the store is missing; rebuilding would empty the read models, perhaps the last copy of the events.
    refuseEmptyLogUnder(config.dataDir, head, readModels);
    releaseSchemaCreation(store);
    // Which store was read: SQLITE_EVENTS_FILE may put it outside DATA_DIR, and a rebuild from another store than meant must show.
    process.stdout.write(`reading the event store ${eventStoreNamed(config)}\n`);
    process.stdout.write(`rebuilding read models in ${readModels.file} from the log (head position ${head})\n`);
    // No request waits on this thread: a page may wait SQLite's whole busy timeout for another connection's lock.
    const projector = new SessionProjector(readModels, { rebuildPageSize: pageSize, lockWaitMs: null });
    // Told after every page, on this thread: an interval timer never fires while the embedded
    // store's reads resolve at once (the loop never yields to timers), so SQLite's rebuild was silent.
    let lineAt = Date.now();
    const stopProgress = projector.onCheckpoint((checkpoint) => {
      if (Date.now() - lineAt < progressMs) return;
      lineAt = Date.now();
      process.stdout.write(`  … at position ${checkpoint} of ${head}\n`);
    });
    try {
      const checkpoint = await projector.rebuild(store);
      process.stdout.write(`rebuilt up to position ${checkpoint} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    } finally {
      stopProgress();
    }
  } finally {
    readModels.close();
    await store.close();
    lock.release();
  }
}

main().catch((err: Error) => {
  process.stderr.write(`rebuild failed: ${err.message}\n`);
  process.exit(asConfigurationError(err) ? 2 : 1);
});
