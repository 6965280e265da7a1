import { ReadModelStore } from '../read-model-store';
import { SessionProjector } from '../session-projector';
import type { RecordedSessionLog } from './recorded-session-log';

/** Test helper: an in-memory read-model store with every event of `log` projected into it, in one batch. */
export function projectedReadModels(log: RecordedSessionLog): ReadModelStore {
  const store = ReadModelStore.open(':memory:');
  new SessionProjector(store).applyBatch(log.events);
  return store;
}
