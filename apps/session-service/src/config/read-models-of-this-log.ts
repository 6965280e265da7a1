/**
 * Start-up check that the read models in DATA_DIR were projected from the event store the service
 * is configured with. Read models projected further than the store's log reaches come from
 * another log (DATA_DIR reused with another DATABASE_URL or SQLITE_EVENTS_FILE, or a store
 * restored from an older backup): served as they are, they would answer with another log's
 * sessions, and the projector would skip this log's new events until it passed their checkpoint.
 */
import * as path from 'node:path';
import type { EventStore } from '@lib/event-store';
import { SESSION_PROJECTOR_NAME, type ReadModelStore } from '@lib/session';
import { ConfigurationError } from './configuration-error';

/**
 * Refuses read models whose checkpoint (a global position) is past the head of `store`'s log.
 * When the store cannot be read now, nothing is checked (it may come up later; reads then wait
 * for it, see SessionReads).
 * @throws ConfigurationError naming DATA_DIR, both positions, and what to do.
 */
export async function checkReadModelsOfThisLog(dataDir: string, store: EventStore, readModels: ReadModelStore): Promise<void> {
  const checkpoint = readModels.readCheckpoint(SESSION_PROJECTOR_NAME);
  if (checkpoint === 0n) return;
  const head = await store.headPosition().catch(() => null);
  if (head === null || checkpoint <= head) return;
  throw new ConfigurationError({
    variable: 'DATA_DIR',
    value: dataDir,
    problem: `its read models (${path.basename(readModels.file)}) were projected up to position ${checkpoint}, but the event store's log ends at ${head}: they come from another log (another DATABASE_URL or SQLITE_EVENTS_FILE, or a store restored from an older backup)`,
    fix: 'start with an empty DATA_DIR, or rebuild them from this store with npm run rebuild-read-models',
  });
}
