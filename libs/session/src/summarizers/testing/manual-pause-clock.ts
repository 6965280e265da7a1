/**
 * A {@link PauseClock} whose time moves only when a test says so, for the specs of
 * `EndpointPause` and `withRetries` (no real timer, no real wait).
 *
 * ```ts
 * const clock = new ManualPauseClock();
 * const pause = new EndpointPause(clock);
 * pause.rateLimited(1000);
 * const waiting = pause.waitOut(60_000);
 * await clock.advance(1000); // the sleep of 1000 ms resolves
 * ```
 */
import type { PauseClock } from '../endpoint-pause';

/** A sleep not over yet: when it ends (ms since the epoch) and how to end it. */
interface Sleeper {
  until: number;
  wake: () => void;
}

/** Lets every promise job queued so far run, and those they queue (one macrotask turn). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** See the module documentation. */
export class ManualPauseClock implements PauseClock {
  /** Now, ms since the epoch. */
  time = 1_000_000;
  /** Each sleep asked for (ms), in order. */
  readonly sleeps: number[] = [];
  private sleepers: Sleeper[] = [];

  now(): number {
    return this.time;
  }

  /** Ends once {@link advance} reaches now + `ms` (at once for `ms` ≤ 0); rejects with an `AbortError` when `signal` aborts (or already has). */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(abortError());
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = {
        until: this.time + ms,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(abortError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** When the earliest sleep not over ends (ms since the epoch), or null when none is. */
  nextWake(): number | null {
    return this.sleepers.length === 0 ? null : Math.min(...this.sleepers.map((s) => s.until));
  }

  /** Lets what is queued run (at the time it is now), then moves time forward `ms` milliseconds, ending on its way (in time order) each sleep due, and lets what they started run. */
  async advance(ms: number): Promise<void> {
    await settle();
    const until = this.time + ms;
    for (let next = this.nextWake(); next !== null && next <= until; next = this.nextWake()) {
      this.time = Math.max(this.time, next);
      const due = this.sleepers.filter((s) => s.until <= this.time);
      this.sleepers = this.sleepers.filter((s) => s.until > this.time);
      for (const sleeper of due) sleeper.wake();
      await settle();
    }
    this.time = until;
    await settle();
  }
}

/** An error named as Node's (`timers/promises`) for an aborted wait. */
function abortError(): Error {
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  return error;
}
