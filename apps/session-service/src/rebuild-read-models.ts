/**
 * `npm run rebuild-read-models`: rebuilds every read model (active windows, recall, compaction
 * history, full log) from an empty database by replaying the event log. Uses the same
 * configuration as the service (DATA_DIR, KURRENTDB_CONNECTION_STRING or DATABASE_URL); stop the
 * service first (with PostgreSQL: only the replica whose DATA_DIR it rebuilds): it takes the same
 * DATA_DIR lock as the service, so it refuses (exit code 2) while a service process runs there.
 * Prints a progress line per page and the final checkpoint.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEventStore } from '@lib/event-store';
import { READ_MODEL_FILE_NAME, ReadModelStore, SessionProjector } from '@lib/session';
import { loadServiceConfig } from './config/service-config';
import { eventStoreConfig } from './config/event-store-config';
import { ConfigurationError, lockDataDir } from './config/data-dir-lock';

async function main(): Promise<void> {
  const config = loadServiceConfig();
  fs.mkdirSync(config.dataDir, { recursive: true });
  const lock = lockDataDir(config.dataDir);
  const store = createEventStore(eventStoreConfig(config));
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
  process.exit(err instanceof ConfigurationError ? 2 : 1);
});
