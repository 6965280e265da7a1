/**
 * What `/health` logs, so that a load balancer probing every few seconds does not fill the log:
 * one line at warn when the store state it reports changes (`ok` → `unavailable`: the store
 * stopped answering; back to `ok`: it answers again), nothing for the probes in between (their
 * request lines are at debug). The service starts out counted as `ok`, so a first probe that
 * finds the store unavailable logs the change too. Durations are between probes: the first that
 * found the store unavailable and the first that found it back (the outage itself may be shorter).
 */
import { OutageTransitions } from './outage-transitions';
import { truncatedForLog } from './request-log';

/** Longest store error message repeated in a transition line, in UTF-16 code units. */
export const MAX_LOGGED_STORE_ERROR_LENGTH = 200;

/** Tracks `/health`'s answers; see the module doc. */
export class HealthTransitions {
  private readonly outages = new OutageTransitions();

  /**
   * Records one probe: `storeError` null when the store answered (`status: "ok"`), else the
   * store's error message (`status: "unavailable"`), `refusedForGood` when that error is a damaged
   * or replaced file's (`EventStoreCorruptError`: 503 `store_corrupt` until a restart). `nowMs` is the time in ms (Date.now()).
   * Returns the line to log at warn when the state changed, else null.
   */
  observe(storeError: string | null, nowMs: number, refusedForGood = false): string | null {
    const change = this.outages.observe(storeError, nowMs);
    if (change === null) return null;
    if (change.kind === 'started')
      return refusedForGood
        ? `/health: the store refuses every operation (${truncatedForLog(change.error, MAX_LOGGED_STORE_ERROR_LENGTH)}); /health says unavailable (still 200), writes answer 503 store_corrupt until the service is restarted`
        : `/health: the store does not answer (${truncatedForLog(change.error, MAX_LOGGED_STORE_ERROR_LENGTH)}); /health says unavailable (still 200), writes answer 503 store_unavailable; the next probes log at debug until it answers again`;
    const probes = change.failures;
    return `/health: the store answers again (unavailable at ${probes} probe${probes === 1 ? '' : 's'} over ${change.seconds.toFixed(1)} s, from the first that found it down to this one)`;
  }
}
