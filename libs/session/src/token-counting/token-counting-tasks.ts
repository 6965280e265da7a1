/**
 * The work a {@link TokenCountingPool} sends to its worker thread: pure functions of the domain
 * library, run off the request thread. This file is the worker's entry module (its default export
 * is what the pool calls); it must not import anything that needs the application.
 */
import { extractiveSummary, getEstimator, planSummaryChunks, type EstimatorName, type SessionEvent, type SummaryRequest } from '@lib/compaction';
import { isMainThread } from 'node:worker_threads';
import { computeEventCosts } from '../domain/event-costs';
import type { EventCosts } from '../events/session-stream-events';

/** Costs of each event under every estimator ({@link computeEventCosts}). */
export interface EventCostsTask {
  kind: 'eventCosts';
  events: readonly SessionEvent[];
}

/** `planSummaryChunks(request, maxInputTokens, getEstimator(estimator), { summaryReserve })`. */
export interface SummaryChunksTask {
  kind: 'summaryChunks';
  request: SummaryRequest;
  maxInputTokens: number;
  estimator: EstimatorName;
  summaryReserve?: number;
}

/**
 * `extractiveSummary(request, { maxChars, maxLength, estimator })`: the extractive summarizer's text (its
 * patterns read every character); `estimator` names the estimator that keeps the summary within
 * `request.maxSummaryTokens` (absent: no budget).
 */
export interface ExtractiveSummaryTask {
  kind: 'extractiveSummary';
  request: SummaryRequest;
  maxChars?: number;
  maxLength?: number;
  estimator?: EstimatorName;
}

/**
 * Does nothing: answered once the worker has loaded this module (code, both encodings), so the
 * pool knows its thread is up before any task's deadline starts. Answers `true`.
 */
export interface ReadyTask {
  kind: 'ready';
}

/** A task of the token-counting worker. */
export type TokenCountingTask = EventCostsTask | SummaryChunksTask | ExtractiveSummaryTask | ReadyTask;

/** The result of each task kind. */
export type TokenCountingResult<T extends TokenCountingTask> = T extends EventCostsTask
  ? EventCosts[]
  : T extends SummaryChunksTask
    ? SummaryRequest[]
    : T extends ReadyTask
      ? true
      : string;

/**
 * Runs one task. Synchronous and pure; errors thrown by the domain (e.g. `InvalidParameterError`
 * from `planSummaryChunks`) reach the caller as the pool's rejection.
 */
export function runTokenCountingTask(task: TokenCountingTask): EventCosts[] | SummaryRequest[] | string | true {
  switch (task.kind) {
    case 'ready':
      return true;
    case 'eventCosts':
      return task.events.map(computeEventCosts);
    case 'summaryChunks':
      return planSummaryChunks(task.request, task.maxInputTokens, getEstimator(task.estimator), { summaryReserve: task.summaryReserve });
    case 'extractiveSummary':
      return extractiveSummary(task.request, {
        ...(task.maxChars === undefined ? {} : { maxChars: task.maxChars }),
        ...(task.maxLength === undefined ? {} : { maxLength: task.maxLength }),
        ...(task.estimator === undefined ? {} : { estimator: getEstimator(task.estimator) }),
      });
  }
}

/**
 * Added to this worker thread's nice value once its module has loaded (Linux, macOS; through
 * `@napi-rs/nice`, optional): on a busy machine the scheduler then runs the event loop before a
 * large count, so `/health` and small requests do not wait behind it for CPU time.
 *
 * Lowered only after the load (code and both encodings' tables, about 1 s of CPU from TypeScript
 * sources): at the lower priority from its first instruction, as piscina's `niceIncrement` does it,
 * the thread's start-up got ~1% of a core on a machine busy with other processes (load 9 on 2
 * cores, a `nice`d replay: more than the 30 s counting deadline, every large request answered 503).
 */
export const WORKER_NICE_INCREMENT = 10;

/**
 * Loads what every task needs (both encodings, by counting one small event), then lowers this
 * thread's priority by {@link WORKER_NICE_INCREMENT}. Returns the thread's nice value after it, or
 * null where `@napi-rs/nice` is not installed (the priority stays). Called once, when the worker
 * loads this module; never throws.
 */
export function prepareWorkerThread(): number | null {
  computeEventCosts({ id: 'warm-up', type: 'user', text: 'warm up the encodings' });
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { nice } = require('@napi-rs/nice') as typeof import('@napi-rs/nice');
    return nice(WORKER_NICE_INCREMENT);
  } catch {
    return null;
  }
}

// Only in a worker thread: the request thread imports this module for its types and function.
if (!isMainThread) prepareWorkerThread();

export default runTokenCountingTask;
