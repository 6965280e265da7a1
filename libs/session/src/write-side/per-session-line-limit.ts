/**
 * At most one log line of a kind per session per interval (newcomer ncrace74: a policy whose trigger its strategy
 * cannot meet, on a session appended to several times a second, ran an automatic pass after nearly every append and
 * wrote up to 482 identical `warn` lines per session in 45 s). The first line of a session is written at once; those
 * within the interval after it are counted, not written; the next one written after it says how many were not.
 * Bounded: past `maxSessions` sessions remembered, it forgets them all (their next line is written at once).
 */
export class PerSessionLineLimit {
  private readonly last = new Map<string, { at: number; withheld: number }>();

  /**
   * `intervalMs`: least time (ms) between two lines of one session. `now`: the clock (ms; tests pass their own).
   * `maxSessions`: sessions remembered before all are forgotten.
   */
  constructor(
    private readonly intervalMs = 60_000,
    private readonly now: () => number = Date.now,
    private readonly maxSessions = 10_000,
  ) {}

  /**
   * Whether a line of session `key` is written now: null when it is withheld (one was written less than the interval
   * ago: it is counted); else how many of the session's lines were withheld since the last one written (0 when none).
   */
  admit(key: string): number | null {
    const at = this.now();
    const seen = this.last.get(key);
    if (seen && at - seen.at < this.intervalMs) {
      seen.withheld++;
      return null;
    }
    if (!seen && this.last.size >= this.maxSessions) this.last.clear();
    this.last.set(key, { at, withheld: 0 });
    return seen?.withheld ?? 0;
  }
}
