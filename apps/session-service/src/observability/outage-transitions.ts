/**
 * The start and the end of an outage seen through repeated observations (a `/health` probe reading
 * the store's head, a write to the store): what decides that one line is logged when a thing stops
 * working and one when it works again, and nothing for the failures in between.
 */

/** What {@link OutageTransitions.observe} saw change: the outage started (with its first error) or ended. */
export type OutageChange =
  | { kind: 'started'; error: string }
  | {
      kind: 'ended';
      /** Failed observations of the outage. */
      failures: number;
      /** Seconds from its first failed observation to the first successful one (the outage itself may be shorter). */
      seconds: number;
    };

/** Tracks one thing's outages; starts out counted as working. */
export class OutageTransitions {
  private since: number | null = null;
  private failures = 0;

  /** Whether the last observation failed. */
  get down(): boolean {
    return this.since !== null;
  }

  /**
   * Records one observation at `nowMs` (ms, Date.now()): `error` null when it succeeded, else its
   * error message. Returns the change it made (the first failure after a success, or the first
   * success after failures), else null.
   */
  observe(error: string | null, nowMs: number): OutageChange | null {
    if (error !== null) {
      this.failures++;
      if (this.since !== null) return null;
      this.since = nowMs;
      return { kind: 'started', error };
    }
    if (this.since === null) return null;
    const change: OutageChange = { kind: 'ended', failures: this.failures, seconds: (nowMs - this.since) / 1000 };
    this.since = null;
    this.failures = 0;
    return change;
  }
}
