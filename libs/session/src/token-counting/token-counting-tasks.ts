/**
 * The work a {@link TokenCountingPool} sends to its worker thread: pure functions of the domain
 * library, run off the request thread. This file is the worker's entry module (its default export
 * is what the pool calls); it must not import anything that needs the application.
 */
import { extractiveSummary, getEstimator, planSummaryChunks, type EstimatorName, type SessionEvent, type SummaryRequest } from '@lib/compaction';
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
 * `extractiveSummary(request, { maxChars, estimator })`: the extractive summarizer's text (its
 * patterns read every character); `estimator` names the estimator that keeps the summary within
 * `request.maxSummaryTokens` (absent: no budget).
 */
export interface ExtractiveSummaryTask {
  kind: 'extractiveSummary';
  request: SummaryRequest;
  maxChars?: number;
  estimator?: EstimatorName;
}

/** A task of the token-counting worker. */
export type TokenCountingTask = EventCostsTask | SummaryChunksTask | ExtractiveSummaryTask;

/** The result of each task kind. */
export type TokenCountingResult<T extends TokenCountingTask> = T extends EventCostsTask
  ? EventCosts[]
  : T extends SummaryChunksTask
    ? SummaryRequest[]
    : string;

/**
 * Runs one task. Synchronous and pure; errors thrown by the domain (e.g. `InvalidParameterError`
 * from `planSummaryChunks`) reach the caller as the pool's rejection.
 */
export function runTokenCountingTask(task: TokenCountingTask): EventCosts[] | SummaryRequest[] | string {
  switch (task.kind) {
    case 'eventCosts':
      return task.events.map(computeEventCosts);
    case 'summaryChunks':
      return planSummaryChunks(task.request, task.maxInputTokens, getEstimator(task.estimator), { summaryReserve: task.summaryReserve });
    case 'extractiveSummary':
      return extractiveSummary(task.request, {
        ...(task.maxChars === undefined ? {} : { maxChars: task.maxChars }),
        ...(task.estimator === undefined ? {} : { estimator: getEstimator(task.estimator) }),
      });
  }
}

export default runTokenCountingTask;
