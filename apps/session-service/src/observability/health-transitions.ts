/**
 * What `/health` logs, so that a load balancer probing every few seconds does not fill the log:
 * one line at warn when its answer changes (200 → 503: the store stopped answering; 503 → 200: it
 * answers again), nothing for the probes in between (their request lines are at debug). The
 * service starts out counted as healthy, so a first probe answered 503 logs the change too.
 */
import { truncatedForLog } from './request-log';

/** Longest store error message repeated in a transition line, in UTF-16 code units. */
export const MAX_LOGGED_STORE_ERROR_LENGTH = 200;

/** Tracks `/health`'s answers; see the module doc. */
export class HealthTransitions {
  private unavailableSince: number | null = null;
  private failedProbes = 0;

  /**
   * Records one answer: `storeError` null for 200 (the store answered), else the store's error
   * message (503). `nowMs` is the time in ms (Date.now()). Returns the line to log at warn when
   * the answer changed, else null.
   */
  observe(storeError: string | null, nowMs: number): string | null {
    if (storeError !== null) {
      this.failedProbes++;
      if (this.unavailableSince !== null) return null;
      this.unavailableSince = nowMs;
      return `/health answers 503 from now on: the store does not answer (${truncatedForLog(storeError, MAX_LOGGED_STORE_ERROR_LENGTH)}); the next probes log at debug until it answers again`;
    }
    if (this.unavailableSince === null) return null;
    const seconds = ((nowMs - this.unavailableSince) / 1000).toFixed(1);
    const probes = this.failedProbes;
    this.unavailableSince = null;
    this.failedProbes = 0;
    return `/health answers 200 again: the store answers (it did not for ${seconds} s; ${probes} probe${probes === 1 ? '' : 's'} answered 503)`;
  }
}
