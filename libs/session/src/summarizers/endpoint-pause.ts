/**
 * The pause of every call to one model endpoint after it answered HTTP 429 (rate limited).
 *
 * Each model call retried on its own (`withRetries`): with the endpoint answering 429, 20 sessions
 * made 180 calls in 10.9 s, every call and every session backing off by itself (newcomer
 * ncllmfaults F5). A rate limit is the endpoint's, not one call's: once it answers 429, no call of
 * the summarizer (any session, commanded or automatic pass, first attempt or retry) is sent to it
 * until the wait it asked for is over.
 *
 * Rules (all times in milliseconds):
 * - {@link EndpointPause.rateLimited}: an attempt answered 429 at `now` asks for `waitMs` (its
 *   `Retry-After` / `retry-after-ms`, else the backoff its call waits before its next retry); the
 *   pause then ends at `now + min(waitMs, LONGEST_PAUSE_MS)` or later: a later 429 may extend it,
 *   never shorten it. A success does not end it (it ends by time). Only 429 pauses: a 503 with
 *   `Retry-After` is retried by its own call only (an overloaded instance behind a load balancer
 *   says nothing of the others; a rate limit applies to every call made with the key).
 * - {@link EndpointPause.waitOut}: every attempt first waits until the pause has ended; the wait
 *   ends early when the call's signal aborts (rejects with Node's `AbortError`), and a pause with
 *   more than the call's bound left fails the call at once ({@link EndpointPausedError}), no
 *   attempt made.
 *
 * Pure apart from the {@link PauseClock} it is given (the state is one number: the pause's end).
 */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The longest pause (ms) one 429 can set: 1 hour. A longer `Retry-After` (a date next year, a
 * proxy's `Retry-After: 1e12`) pauses the calls for an hour only; the next attempt then asks the
 * endpoint again (and a 429 pauses again), rather than no summary until a restart.
 */
export const LONGEST_PAUSE_MS = 3_600_000;

/** The time source of an {@link EndpointPause}. */
export interface PauseClock {
  /** Now, milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with an `AbortError` when `signal` aborts (or already has). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `Date.now` and a timer (Node's `timers/promises`). */
export const SYSTEM_PAUSE_CLOCK: PauseClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }),
};

/**
 * A call not made: the endpoint's pause had `remainingMs` milliseconds left, over the call's
 * bound `maxWaitMs` (see {@link EndpointPause.waitOut}).
 */
export class EndpointPausedError extends Error {
  constructor(
    readonly remainingMs: number,
    readonly maxWaitMs: number,
  ) {
    super(`the endpoint is paused (rate limited) for ${remainingMs} ms more, over the bound of ${maxWaitMs} ms`);
    this.name = 'EndpointPausedError';
  }
}

/** See the module documentation. One instance per endpoint, shared by all its calls. */
export class EndpointPause {
  /** When the pause ends, ms since the epoch; -Infinity before any 429. */
  private endsAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: PauseClock = SYSTEM_PAUSE_CLOCK) {}

  /**
   * An attempt was answered 429 now, asking to wait `waitMs` milliseconds (negative or NaN: 0):
   * the pause ends at now + `waitMs` (at most {@link LONGEST_PAUSE_MS}), or later when it already
   * did. Never shortens the pause.
   */
  rateLimited(waitMs: number): void {
    const wait = Number.isNaN(waitMs) ? 0 : Math.min(Math.max(0, waitMs), LONGEST_PAUSE_MS);
    this.endsAtMs = Math.max(this.endsAtMs, this.clock.now() + wait);
  }

  /** Milliseconds left of the pause (0 when there is none), rounded up to a whole millisecond. */
  remainingMs(): number {
    return Math.max(0, Math.ceil(this.endsAtMs - this.clock.now()));
  }

  /** When the pause ends (ms since the epoch; in the past once it is over), or null before any 429. */
  endsAt(): number | null {
    return Number.isFinite(this.endsAtMs) ? this.endsAtMs : null;
  }

  /**
   * Resolves once the pause is over (at once when there is none), waiting again when it was
   * extended meanwhile (another call's 429). @throws (rejects with) {@link EndpointPausedError} when
   * more than `maxWaitMs` milliseconds of it are left as it looks (first, or again after a wait);
   * Node's `AbortError` when `signal` aborts during a wait.
   */
  async waitOut(maxWaitMs: number, signal?: AbortSignal): Promise<void> {
    for (let left = this.remainingMs(); left > 0; left = this.remainingMs()) {
      if (left > maxWaitMs) throw new EndpointPausedError(left, maxWaitMs);
      await this.clock.sleep(left, signal);
    }
  }
}
