/**
 * Cross-process claims (an optional part of the event store port, `EventStore.tryClaim`): a
 * name that at most one process sharing the store holds at a time, e.g. "the automatic compaction
 * of session S runs here". A claim is advisory: it guards work that is correct without it (the
 * store's expected-revision check keeps the log right), so that the work is not done twice.
 */

/** A claim this process holds (see `EventStore.tryClaim`). */
export interface HeldClaim {
  /**
   * Gives the claim up. Never rejects: when the store cannot be told, the claim is dropped with
   * the connection that held it. Call it once, when the work is done (in a `finally`).
   */
  release(): Promise<void>;
}
