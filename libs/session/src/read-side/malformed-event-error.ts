/**
 * A stored session event lacks a field the projection needs (e.g. a conversation event with no
 * `event.id`). The projector never skips an event: the batch holding it is rolled back, the
 * checkpoint stays before it, and the error shows in the projector's `lastError` until the log
 * (or the projection code) is fixed.
 */
export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
  constructor(
    /** Stream of the event. */
    readonly streamId: string,
    /** Global position of the event (bigint). */
    readonly position: bigint,
    reason: string,
  ) {
    super(`cannot project event at position ${position} of ${streamId}: ${reason}`);
  }
}
