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
 *   never shorten it; a success does not end it (it ends by time). Only 429 pauses: a 503 with `Retry-After` is retried by its own call only (an
 *   overloaded instance behind a load balancer says nothing of the others; a rate limit applies to
 *   every call made with the key).
 * - Half-open after the pause: once a 429's pause has run out, the endpoint is not open to every
 *   call at once (a rate-limited endpoint then answers a wave of 429s). The first attempt to wait
 *   the pause out becomes the probe and goes to the endpoint; every other attempt (arriving, or
 *   waiting already) waits for the probe's outcome. When the probe's attempt ends without a 429
 *   (success, or any other failure: 5xx, network error, abort, timeout), the endpoint is open again:
 *   the waiting attempts all go at once, and no later attempt waits. When a 429 is answered during
 *   the probe (its own, or one of an attempt sent before), the pause is set again (as above) and the
 *   cycle repeats: wait it out, one probe. Before any 429 no attempt waits and none probes.
 * - {@link EndpointPause.waitOut}: every attempt first waits until the pause has ended and, while
 *   half-open, until a probe ended without a 429 (or becomes the probe itself); it resolves with the
 *   function to call once the attempt has its answer (or failed), which must be called on every
 *   path (`try` / `finally`), after any {@link EndpointPause.rateLimited} for that answer. Every wait
 *   (for the pause, for the probe) ends early when the call's signal aborts (rejects with Node's
 *   `AbortError`), and a pause with more than the call's bound left fails the call at once
 *   ({@link EndpointPausedError}), no attempt made; the wait for a probe is not bounded (the probe is
 *   one attempt, bounded by its own timeout).
 *
 * Pure apart from the {@link PauseClock} it is given (the state: the pause's end, whether the
 * endpoint is half-open, the probe in flight if any).
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
  /**
   * `remainingMs`: what is left of the pause (ms); `maxWaitMs`: the longest a call waits; `endsAtMs`:
   * when the pause ends (ms since the epoch), the same for every call it refuses (a reason that
   * names it stays one reason: newcomer ncsumm62 F2, a countdown made one reason per second).
   */
  constructor(
    readonly remainingMs: number,
    readonly maxWaitMs: number,
    readonly endsAtMs: number,
  ) {
    super(`the endpoint is paused (rate limited) for ${remainingMs} ms more, over the bound of ${maxWaitMs} ms`);
    this.name = 'EndpointPausedError';
  }
}

/**
 * Reports that the attempt a {@link EndpointPause.waitOut} let through has ended (it has its
 * answer, or failed, or was aborted): call it once, on every path, after
 * {@link EndpointPause.rateLimited} when the answer was 429. For the probe, this ends the half-open
 * wait of the other attempts; otherwise it does nothing. Later calls do nothing.
 */
export type AttemptEnded = () => void;

/** The {@link AttemptEnded} of an attempt that is not the probe. */
const NOT_THE_PROBE: AttemptEnded = () => undefined;

/** Node's `AbortError` (as `timers/promises` rejects with): `name` 'AbortError', `code` 'ABORT_ERR', the signal's reason as `cause`. */
function abortError(signal: AbortSignal): Error {
  const error = new Error('The operation was aborted', { cause: signal.reason });
  error.name = 'AbortError';
  (error as Error & { code: string }).code = 'ABORT_ERR';
  return error;
}

/** Resolves when `settled` does; rejects with an `AbortError` when `signal` aborts first (or already has). */
function settledOrAborted(settled: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return settled;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void settled.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** See the module documentation. One instance per endpoint, shared by all its calls. */
export class EndpointPause {
  /** When the pause ends, ms since the epoch; -Infinity before any 429. */
  private endsAtMs = Number.NEGATIVE_INFINITY;
  /** How many times {@link rateLimited} was called (a probe answered 429 is one that saw it change). */
  private limitedCount = 0;
  /** Whether a 429 was answered and no probe has ended without one since: attempts go one at a time. */
  private halfOpen = false;
  /** The probe in flight, if any: `ended` resolves when its attempt has ended. */
  private probe: { ended: Promise<void> } | null = null;

  constructor(private readonly clock: PauseClock = SYSTEM_PAUSE_CLOCK) {}

  /**
   * An attempt was answered 429 now, asking to wait `waitMs` milliseconds (negative or NaN: 0):
   * the pause ends at now + `waitMs` (at most {@link LONGEST_PAUSE_MS}), or later when it already
   * did. Never shortens the pause. The endpoint is half-open once it is over (one probe first); a
   * probe in flight now ends without opening it.
   */
  rateLimited(waitMs: number): void {
    const wait = Number.isNaN(waitMs) ? 0 : Math.min(Math.max(0, waitMs), LONGEST_PAUSE_MS);
    this.endsAtMs = Math.max(this.endsAtMs, this.clock.now() + wait);
    this.limitedCount++;
    this.halfOpen = true;
  }

  /** Milliseconds left of the pause (0 when there is none), rounded up to a whole millisecond. */
  remainingMs(): number {
    return Math.max(0, Math.ceil(this.endsAtMs - this.clock.now()));
  }

  /** When the pause ends (ms since the epoch; in the past once it is over), or null before any 429. */
  endsAt(): number | null {
    return Number.isFinite(this.endsAtMs) ? this.endsAtMs : null;
  }

  /** Whether a probe's attempt is in flight (the pause of a 429 is over, and the others wait for its outcome). */
  probing(): boolean {
    return this.probe !== null;
  }

  /**
   * Waits until an attempt may be sent: once the pause is over (at once when there is none),
   * waiting again when it was extended meanwhile (another call's 429); then, while half-open (a 429
   * answered, no probe ended without one since), until the probe in flight has ended, or at once as
   * the probe when none is. Resolves with the {@link AttemptEnded} to call once the attempt has
   * ended (on every path, after {@link rateLimited} for a 429; the probe's ends the half-open wait
   * of the others, and opens the endpoint unless a 429 was answered during it).
   * @throws (rejects with) {@link EndpointPausedError} when more than `maxWaitMs` milliseconds of
   * the pause are left as it looks (first, or again after a wait); Node's `AbortError` when
   * `signal` aborts during a wait (for the pause or for the probe).
   */
  async waitOut(maxWaitMs: number, signal?: AbortSignal): Promise<AttemptEnded> {
    for (;;) {
      const left = this.remainingMs();
      if (left > 0) {
        if (left > maxWaitMs) throw new EndpointPausedError(left, maxWaitMs, this.endsAtMs);
        await this.clock.sleep(left, signal);
      } else if (!this.halfOpen) {
        return NOT_THE_PROBE;
      } else if (this.probe) {
        await settledOrAborted(this.probe.ended, signal);
      } else {
        return this.startProbe();
      }
    }
  }

  /** Makes the caller the probe: its {@link AttemptEnded} opens the endpoint unless a 429 was answered meanwhile, and wakes the waiting attempts. */
  private startProbe(): AttemptEnded {
    const limitedAtStart = this.limitedCount;
    let wake!: () => void;
    const probe = { ended: new Promise<void>((resolve) => (wake = resolve)) };
    this.probe = probe;
    let reported = false;
    return () => {
      if (reported) return;
      reported = true;
      if (this.probe === probe) this.probe = null;
      if (this.limitedCount === limitedAtStart) this.halfOpen = false;
      wake();
    };
  }
}
