/**
 * The one rule of how a session write sent without `expectedRevision` (an append, a policy PUT)
 * retries when the store refused it because the stream moved on since it was loaded: reload and
 * decide again, up to {@link MAX_WRITE_ATTEMPTS} attempts in all, pausing {@link conflictBackoffMs}
 * before each retry; then 409 `RevisionConflictError.exhausted` (expected `any`). Within one
 * process such writes of a session queue instead (`PerSessionQueue`): only other processes'
 * writers, and compactions, make them retry.
 */

/** How many times a session write is decided and tried in all before it gives up on a stream that keeps moving on (with a client's `expectedRevision`: while it still holds). */
export const MAX_WRITE_ATTEMPTS = 32;

/**
 * Pause (ms) before attempt `attempt` + 1 after a revision conflict: none after the first, then a
 * random wait of up to `attempt` ms (at most 10), so writers racing on one hot session (several
 * replicas, auto-compaction) stop colliding in lockstep.
 */
export function conflictBackoffMs(attempt: number): number {
  return attempt < 2 ? 0 : Math.random() * Math.min(attempt, 10);
}

/** Waits {@link conflictBackoffMs}(`attempt`) ms (`attempt`: the attempt just refused, from 1); resolves at once when that is 0. */
export async function pauseAfterConflict(attempt: number): Promise<void> {
  const pause = conflictBackoffMs(attempt);
  if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
}
