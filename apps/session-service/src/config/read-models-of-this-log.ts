/**
 * Start-up check that the read models in DATA_DIR were projected from the event store the service
 * is configured with. Read models of another log (DATA_DIR reused with another DATABASE_URL or
 * SQLITE_EVENTS_FILE, or a store restored from an older backup, and maybe written again since):
 * served as they are, they would answer with another log's sessions, and the projector would skip
 * this log's new events until it passed their checkpoint. Two signs, either refuses: the checkpoint
 * is past the store's head, or the store's event at the checkpoint is not the one the read models
 * recorded there (see `readModelsOffLog`).
 */
import * as path from 'node:path';
import type { EventStore } from '@lib/event-store';
import { SESSION_PROJECTOR_NAME, offLogRemedy, readModelsOffLog, type ReadModelStore } from '@lib/session';
import { ConfigurationError } from './configuration-error';

/**
 * Refuses read models projected from another log than `store`'s (see the module comment). When the
 * store cannot be read now, nothing is checked (it may come up later; the projector checks again
 * before it follows the log, and reads wait for it, see SessionReads). Read models of a release
 * that did not record their checkpoint's event are checked against the head only.
 * @throws ConfigurationError naming DATA_DIR, the positions, and what to do ({@link offLogRemedy}:
 *   an empty log is a missing store, to restore, not read models to delete).
 */
export async function checkReadModelsOfThisLog(dataDir: string, store: EventStore, readModels: ReadModelStore): Promise<void> {
  const checkpoint = readModels.readCheckpointEvent(SESSION_PROJECTOR_NAME);
  if (checkpoint.position === 0n) return;
  const head = await store.headPosition().catch(() => null);
  if (head === null) return;
  const mismatch = await readModelsOffLog(store, checkpoint, head).catch(() => null);
  if (mismatch === null) return;
  const file = path.basename(readModels.file);
  throw new ConfigurationError({
    variable: 'DATA_DIR',
    value: dataDir,
    problem:
      head === 0n
        ? `its read models (${file}) do not match the event store: ${mismatch.problem}`
        : `its read models (${file}) come from another log than the event store's: ${mismatch.problem} (another DATABASE_URL or SQLITE_EVENTS_FILE, or a store restored from a backup)`,
    fix: offLogRemedy(mismatch, file),
  });
}

/**
 * For the read-model rebuild: refuses to rebuild read models that reached a position from a log
 * that is empty (`head` 0n: the store is missing or empty), which would leave them empty.
 * @throws ConfigurationError naming DATA_DIR and what to do ({@link offLogRemedy}).
 */
export function refuseEmptyLogUnder(dataDir: string, head: bigint, readModels: ReadModelStore): void {
  const checkpoint = readModels.readCheckpointEvent(SESSION_PROJECTOR_NAME).position;
  if (head !== 0n || checkpoint === 0n) return;
  const file = path.basename(readModels.file);
  throw new ConfigurationError({
    variable: 'DATA_DIR',
    value: dataDir,
    problem: `its read models (${file}) reached position ${checkpoint}, but the event store's log is empty (head position 0): the event store is missing or empty`,
    fix: offLogRemedy({ head, checkpoint }, file),
  });
}
