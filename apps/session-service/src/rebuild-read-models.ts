/**
 * `npm run rebuild-read-models`: rebuilds every read model (active windows, recall, compaction
 * history, full log) from an empty database by replaying the event log. Uses the same
 * configuration as the service (DATA_DIR, KURRENTDB_CONNECTION_STRING or DATABASE_URL); stop the
 * service first (with PostgreSQL: only the replica whose DATA_DIR it rebuilds): it takes the same
 * DATA_DIR lock as the service, so it refuses (exit code 2) while a service process runs there.
 * With the embedded store, DATA_DIR and its events file (SQLITE_EVENTS_FILE) must exist: a mistyped
 * DATA_DIR is refused (exit code 2, naming it) instead of rebuilding from a new, empty store.
 * Prints a progress line per page and the final checkpoint.
 */
import * as path from 'node:path';
import { READ_MODEL_FILE_NAME, ReadModelStore, SessionProjector } from '@lib/session';
import { loadServiceConfig } from './config/service-config';
import { eventStoreKind, openEventStore } from './config/event-store-config';
import { ensureDataDir, requireExistingSqliteStore } from './config/data-dir';
import { lockDataDir } from './config/data-dir-lock';
import { asConfigurationError } from './config/configuration-error';

async function main(): Promise<void> {
  const config = loadServiceConfig();
  // A mistyped DATA_DIR must not become an empty store "rebuilt up to position 0".
  if (eventStoreKind(config) === 'sqlite') requireExistingSqliteStore(config);
  else ensureDataDir(config.dataDir);
  const lock = lockDataDir(config.dataDir);
  const store = openEventStore(config);
  const readModels = ReadModelStore.open(path.join(config.dataDir, READ_MODEL_FILE_NAME));
  const started = Date.now();
  try {
    const head = await store.headPosition();
    process.stdout.write(`rebuilding read models in ${readModels.file} from the log (head position ${head})\n`);
    const projector = new SessionProjector(readModels);
    const timer = setInterval(() => process.stdout.write(`  … at position ${projector.checkpoint()} of ${head}\n`), 2000);
    try {
      const checkpoint = await projector.rebuild(store);
      process.stdout.write(`rebuilt up to position ${checkpoint} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    } finally {
      clearInterval(timer);
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
