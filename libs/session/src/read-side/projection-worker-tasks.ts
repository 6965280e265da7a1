/**
 * The worker-thread side of {@link SessionProjectorOptions.worker} (issue 14): applies live
 * batches to the read-model file with this thread's own better-sqlite3 connection, through the
 * same {@link SessionProjector.applyBatch} (rows and checkpoint in one transaction, DESIGN §5).
 * Loaded by piscina from its path; nothing else imports it.
 */
import type { RecordedEvent } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';

/** One batch to apply: the read-model file (never `':memory:'`) and the events, in global order. */
export interface ApplyBatchTask {
  file: string;
  events: RecordedEvent[];
}

/**
 * What a task did: the checkpoint reached (bigint global position), and the failure that stopped
 * it, if any (the events before the failing one are applied and counted in `checkpoint`).
 */
export interface ApplyBatchOutcome {
  checkpoint: bigint;
  /** When the last transaction committed: `process.hrtime` in ms (one monotonic clock for every thread of the process). */
  committedAtMs: number;
  error: { name: string; message: string } | null;
}

let opened: { file: string; projector: SessionProjector } | undefined;

/**
 * Applies `task.events` in one transaction; when that fails, one by one up to the failing event
 * (as the projector does on its own thread). Opens the file on first use and keeps it open for
 * the thread's life (the main thread ends the thread when its projector stops).
 */
export default function applyBatchTask(task: ApplyBatchTask): ApplyBatchOutcome {
  if (opened?.file !== task.file) {
    opened?.projector.store.close();
    opened = { file: task.file, projector: new SessionProjector(ReadModelStore.open(task.file)) };
  }
  const projector = opened.projector;
  try {
    projector.applyBatch(task.events);
  } catch {
    try {
      for (const event of task.events) projector.applyBatch([event]);
    } catch (error) {
      const failure = error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };
      return { checkpoint: projector.checkpoint(), committedAtMs: hrtimeMs(), error: failure };
    }
  }
  return { checkpoint: projector.checkpoint(), committedAtMs: hrtimeMs(), error: null };
}

function hrtimeMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
