/**
 * Costs of an event under every estimator, computed once when the event is appended and stored
 * with it (DESIGN §3.1): a compaction pass then only adds numbers, whichever estimator it uses.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ESTIMATOR_NAMES, eventCost, eventCostInSteps, getEstimator, type SessionEvent } from '@lib/compaction';
import type { EventCosts } from '../events/session-stream-events';

/** Longest stretch (ms) of counting before {@link computeEventCostsInSlices} lets other work run. */
export const COUNTING_SLICE_MS = 5;

/**
 * Costs of `event` under `cl100k_base`, `o200k_base` (tokens) and `chars` (UTF-16 code units).
 * Synchronous: for texts the service wrote itself (summaries). Near-linear in the text's length;
 * throws only if the tokenizer itself fails (it does not on any JavaScript string).
 */
export function computeEventCosts(event: SessionEvent): EventCosts {
  return {
    cl100k_base: eventCost(event, getEstimator('cl100k_base')),
    o200k_base: eventCost(event, getEstimator('o200k_base')),
    chars: eventCost(event, getEstimator('chars')),
  };
}

/**
 * The costs of each of `events` ({@link computeEventCosts}, same numbers), computed in slices of
 * at most about {@link COUNTING_SLICE_MS} ms with a turn of the event loop between them, so a
 * request carrying megabytes of adversarial text (issue 17) delays other requests by one slice,
 * not by the whole count. Small requests finish in the first slice without waiting.
 */
export async function computeEventCostsInSlices(events: readonly SessionEvent[]): Promise<EventCosts[]> {
  const result: EventCosts[] = [];
  let sliceStart = performance.now();
  for (const event of events) {
    const costs = {} as EventCosts;
    for (const name of ESTIMATOR_NAMES) {
      const steps = eventCostInSteps(event, getEstimator(name));
      for (;;) {
        const next = steps.next();
        if (next.done) {
          costs[name] = next.value;
          break;
        }
        if (performance.now() - sliceStart >= COUNTING_SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
      }
    }
    result.push(costs);
  }
  return result;
}
