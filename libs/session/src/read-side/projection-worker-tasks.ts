/**
 * The worker-thread side of {@link SessionProjectorOptions.worker} (issue 14): applies live
 * batches to the read-model file with this thread's own better-sqlite3 connection, through the
 * same {@link SessionProjector.applyBatch} (rows and checkpoint in one transaction, DESIGN §5).
 * Loaded by piscina from its path; nothing else imports it.
 */
import type { RecordedEvent } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { isReadModelsLocked, SessionProjector } from './session-projector';
import { isReadModelsDamage } from './read-models-damage-rule';

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
  error: ApplyBatchFailure | null;
}

/**
 * The failure that stopped a task, as the main thread gets it (an error's own fields do not cross
 * the thread boundary): the error's name, message and SQLite code, and the verdict of {@link isReadModelsDamage}
 * on it here, which the main thread reports as the read models found damaged.
 */
export interface ApplyBatchFailure {
  name: string;
  message: string;
  /** True when the error is the read models file found damaged (also when opening it failed so). */
  readModelsDamaged: boolean;
  /** SQLite's error code when it has one (`SQLITE_BUSY`: another connection held the file's lock). */
  code?: string;
}

let opened: { file: string; projector: SessionProjector } | undefined;

/**
 * Applies `task.events` in one transaction; when that fails, one by one up to the failing event
 * (as the projector does on its own thread). Opens the file on first use and keeps it open for
 * the thread's life (the main thread ends the thread when its projector stops). Never throws: a
 * failure, opening the file included, is the outcome's `error` ({@link ApplyBatchFailure}).
 */
export default function applyBatchTask(task: ApplyBatchTask): ApplyBatchOutcome {
  let projector: SessionProjector;
  try {
    if (opened?.file !== task.file) {
      opened?.projector.store.close();
      opened = undefined;
      // Off the event loop: a batch may wait the connection's whole busy timeout for another connection's lock.
      opened = { file: task.file, projector: new SessionProjector(ReadModelStore.open(task.file), { lockWaitMs: null }) };
    }
    projector = opened.projector;
  } catch (error) {
    // Nothing applied: the main thread's checkpoint stays where it is.
    return { checkpoint: 0n, committedAtMs: hrtimeMs(), error: failureOf(error) };
  }
  try {
    projector.applyBatch(task.events);
  } catch (error) {
    // A lock held by another connection would fail each event again, after its wait.
    if (isReadModelsLocked(error)) return { checkpoint: projector.checkpoint(), committedAtMs: hrtimeMs(), error: failureOf(error) };
    try {
      for (const event of task.events) projector.applyBatch([event]);
    } catch (error) {
      return { checkpoint: projector.checkpoint(), committedAtMs: hrtimeMs(), error: failureOf(error) };
    }
  }
  return { checkpoint: projector.checkpoint(), committedAtMs: hrtimeMs(), error: null };
}

/** What the main thread gets of `error` (see {@link ApplyBatchFailure}). */
function failureOf(error: unknown): ApplyBatchFailure {
  // not `instanceof Error`: an error made in another realm (a native module's, under a test runner's
  // sandbox) is not one of this realm's, yet has its name and message
  const { name, message, code } = error !== null && typeof error === 'object' ? (error as { name?: unknown; message?: unknown; code?: unknown }) : {};
  return {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : String(error),
    readModelsDamaged: isReadModelsDamage(error),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

function hrtimeMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
