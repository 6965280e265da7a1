/**
 * Costs of an event under every estimator, computed once when the event is appended and stored
 * with it (DESIGN §3.1): a compaction pass then only adds numbers, whichever estimator it uses.
 */
import { eventCost, getEstimator, type SessionEvent } from '@lib/compaction';
import type { EventCosts } from '../events/session-stream-events';

/**
 * Costs of `event` under `cl100k_base`, `o200k_base` (tokens) and `chars` (UTF-16 code units).
 * Synchronous and near-linear in the text's length (about 1 µs per code unit at worst for both
 * encodings); the append path counts large requests off the request thread with it
 * (`TokenCountingPool`). Throws only if the tokenizer itself fails (it does not on any string).
 */
export function computeEventCosts(event: SessionEvent): EventCosts {
  return {
    cl100k_base: eventCost(event, getEstimator('cl100k_base')),
    o200k_base: eventCost(event, getEstimator('o200k_base')),
    chars: eventCost(event, getEstimator('chars')),
  };
}
