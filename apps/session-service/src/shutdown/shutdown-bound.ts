/**
 * The shutdown's bound (`SHUTDOWN_TIMEOUT_MS`, docs/configuration.md: Logs, shutdown): what a SIGTERM/SIGINT/SIGHUP shutdown
 * waits for, and for how long. Timeline from the signal: the drain (1 s), then in-flight requests, automatic
 * compactions and the NATS drain finish; at half the bound, model calls still running are aborted (their
 * passes fail as any summarizer failure does, recorded, nothing half-written) and NATS is closed without
 * draining; at the bound the process ends whatever it still waits for (a store that does not answer: a
 * frozen server or a network partition), one warn line naming it.
 */
import type { ReadModelStore, SessionProjector, SummarizeOptions, Summarizer, SummarizerOutcome } from '@lib/session';
import type { SummaryRequest } from '@lib/compaction';

/** The reason a pass records when the shutdown aborted its model call (see {@link abortedAtShutdown}). */
export const SHUTDOWN_ABORT_REASON =
  'aborted: the service was shutting down (model call, or its wait before a retry or for the end of a rate-limit pause, still running at half of SHUTDOWN_TIMEOUT_MS)';

/**
 * `summarizer`, whose calls are also aborted once `shutdown` fires: the call resolves `ok: false` with
 * {@link SHUTDOWN_ABORT_REASON} and `interrupted: 'shutdown'` (a model call aborted by the caller's own signal
 * keeps its own reason), so the pass fails as any summarizer failure does (a `CompactionFailed` decision, with
 * the calls made counted), except that the session's auto-compaction backoff does not count it: the model did
 * not fail.
 * Identity, input bound and rate-limit pause (`pauseRemainingMs`) are the summarizer's own.
 */
export function abortedAtShutdown(summarizer: Summarizer, shutdown: AbortSignal): Summarizer {
  return {
    identity: summarizer.identity,
    inputBound: summarizer.inputBound,
    ...(summarizer.pauseRemainingMs ? { pauseRemainingMs: () => summarizer.pauseRemainingMs!() } : {}),
    ...(summarizer.plannedCalls ? { plannedCalls: (request, options) => summarizer.plannedCalls!(request, options) } : {}),
    async summarize(request: SummaryRequest, options: SummarizeOptions = {}): Promise<SummarizerOutcome> {
      const signal = options.signal ? AbortSignal.any([options.signal, shutdown]) : shutdown;
      const outcome = await summarizer.summarize(request, { ...options, signal });
      if (!outcome.ok && shutdown.aborted && !options.signal?.aborted)
        return { ...outcome, reason: SHUTDOWN_ABORT_REASON, failureKind: 'aborted', interrupted: 'shutdown' };
      return outcome;
    },
  };
}

/** Longest wait (ms) for the projector's worker threads to end once the shutdown reached its bound. */
export const READ_MODELS_CLOSE_GRACE_MS = 1000;

/**
 * At the shutdown's bound, when the application did not close (work still waits for a store that does not
 * answer): the read models' SQLite file is closed all the same, best effort, so the next start finds it closed
 * (its WAL checkpointed and removed: nothing to recover). The projector's worker threads, if any, are ended
 * first (waited for at most {@link READ_MODELS_CLOSE_GRACE_MS}; a batch one was applying is rolled back), then
 * this thread's connection is closed: synchronous, a checkpoint of the WAL, which SQLite keeps near its
 * 1,000-page autocheckpoint (~4 MiB). No batch runs on this thread meanwhile (better-sqlite3 writes
 * synchronously); one resuming afterwards fails on the closed connection, as the process ends. Never throws:
 * what cannot be closed is left to SQLite's recovery at the next start, as before.
 */
export async function closeReadModelsAtBound(projector: Pick<SessionProjector, 'endWorkers'>, readModels: Pick<ReadModelStore, 'close'>): Promise<void> {
  await settlesWithin(
    projector.endWorkers().catch(() => undefined),
    READ_MODELS_CLOSE_GRACE_MS,
  );
  try {
    readModels.close();
  } catch {
    // best effort: SQLite recovers the file at the next start
  }
}

/**
 * Whether `work` settles (resolves or rejects) within `ms` milliseconds (0: only if it has settled already,
 * at the next turn). `work` itself is not stopped: the caller goes on without it.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
