/**
 * The retries of one model call (`SUMMARIZER_MAX_RETRIES`): which failed attempts are retried, how
 * long each retry waits, and the bound on a wait the endpoint asks for.
 *
 * The `openai` client's own retries (6.x) wait whatever `Retry-After` / `retry-after-ms` says,
 * with no bound (older releases ignored a wait over 60 s), and that wait ignores the call's abort
 * signal: an endpoint answering 429 with `Retry-After: 3600` held a compaction pass, and the
 * session's automatic compaction, for an hour per retry, and a shutdown could not end the pass
 * (newcomer ncllmfaults F1, F2). So the client makes one attempt per request (`maxRetries: 0`) and
 * {@link withRetries} retries as the client did (the same failures, the same backoff, the
 * endpoint's wait honoured), except that a wait the endpoint asks for over `maxWaitMs`
 * (the larger of 60 s and `SUMMARIZER_TIMEOUT_MS`) ends the call at once ({@link RetryWaitTooLongError}), and every wait
 * ends when the call's signal aborts. With `policy.pause` (the endpoint's {@link EndpointPause},
 * shared by all calls of the summarizer), an attempt answered 429 pauses every call, and every
 * attempt waits that pause out first; after it, one attempt probes the endpoint and the others
 * follow once it was not answered 429 (half-open: see {@link EndpointPause}).
 */
import { type AttemptEnded, type EndpointPause, type PauseClock, SYSTEM_PAUSE_CLOCK } from './endpoint-pause';

/** First backoff wait, milliseconds (the `openai` client's: 0.5 s, doubled per retry). */
export const BACKOFF_INITIAL_MS = 500;
/** Longest backoff wait, milliseconds (the `openai` client's: 8 s). */
export const BACKOFF_MAX_MS = 8_000;

/**
 * The wait (milliseconds) the endpoint asks for before a retry, read from an answer's headers:
 * `retry-after-ms` (milliseconds, not standard, sent by OpenAI), else `Retry-After` (RFC 9110
 * §10.2.3: seconds, or an HTTP date, taken relative to `nowMs`); undefined when neither is there
 * or readable, and when the wait is 0 or less (`Retry-After: 0`, a negative number, a date in the
 * past): that asks for no wait, so the backoff applies, as the `openai` client does (newcomer
 * ncmodel71 F1: taken as "retry at once", an endpoint answering 429 with `Retry-After: 0` got 60
 * requests a second, its retries and the endpoint's pause both without a wait). Pure.
 */
export function requestedRetryWaitMs(headers: Pick<Headers, 'get'> | undefined, nowMs: number): number | undefined {
  const positive = (ms: number): number | undefined => (ms > 0 ? ms : undefined);
  const millis = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(millis)) return positive(millis);
  const value = headers?.get('retry-after');
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds)) return positive(seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? positive(date - nowMs) : undefined;
}

/**
 * The backoff wait (milliseconds) before retry number `retry` (0: the first) when the endpoint asks
 * for none: {@link BACKOFF_INITIAL_MS} doubled per retry, at most {@link BACKOFF_MAX_MS}, less a
 * jitter of up to 25% (`random` in [0, 1)), as the `openai` client waits. Pure.
 */
export function backoffMs(retry: number, random: number): number {
  return Math.min(BACKOFF_INITIAL_MS * 2 ** retry, BACKOFF_MAX_MS) * (1 - random * 0.25);
}

/**
 * The header {@link requestedRetryWaitMs} reads its wait from in `headers`: `retry-after-ms` when it
 * holds a number, else `Retry-After`, as a failure's message names it (newcomer ncstrat73 F1: a wait
 * asked in `retry-after-ms` was said to come from `Retry-After`). Pure.
 */
export function retryWaitHeader(headers: Pick<Headers, 'get'> | undefined): 'retry-after-ms' | 'Retry-After' {
  return Number.isFinite(Number.parseFloat(headers?.get('retry-after-ms') ?? '')) ? 'retry-after-ms' : 'Retry-After';
}

/**
 * A retry not made: the endpoint asked to wait `waitMs` milliseconds, over the call's bound
 * `maxWaitMs`, in header `header` ({@link retryWaitHeader}). `failure`: the attempt's error.
 */
export class RetryWaitTooLongError extends Error {
  constructor(
    readonly failure: unknown,
    readonly waitMs: number,
    readonly maxWaitMs: number,
    readonly header: 'retry-after-ms' | 'Retry-After' = 'Retry-After',
  ) {
    super(`the endpoint asked to wait ${waitMs} ms before a retry, over the bound of ${maxWaitMs} ms`);
    this.name = 'RetryWaitTooLongError';
  }
}

/** How {@link withRetries} retries. */
export interface RetryPolicy {
  /** Retries after the first attempt, integer ≥ 0. */
  maxRetries: number;
  /** Longest wait (milliseconds) the endpoint may ask for; a longer one ends the call ({@link RetryWaitTooLongError}). */
  maxWaitMs: number;
  /** Whether a failed attempt is retried (its error). */
  retryable: (error: unknown) => boolean;
  /** The headers of the answer that failed the attempt, if it had one. */
  headersOf: (error: unknown) => Pick<Headers, 'get'> | undefined;
  /** Ends a wait between attempts (or for the pause, or for the probe after it): the wait rejects with Node's `AbortError`. */
  signal?: AbortSignal;
  /**
   * The endpoint's pause, shared by every call to it: each attempt first waits it out, and after a
   * 429 for the probe ({@link EndpointPause.waitOut}, bound `maxWaitMs`), and reports its end to it;
   * a failure `rateLimited` accepts extends it.
   */
  pause?: EndpointPause;
  /** Whether a failed attempt was answered HTTP 429 (rate limited): it extends `pause`. Default: never. */
  rateLimited?: (error: unknown) => boolean;
  /** The jitter's source, [0, 1) (default `Math.random`). */
  random?: () => number;
  /** The time source of the waits between attempts and of a `Retry-After` date (default {@link SYSTEM_PAUSE_CLOCK}). */
  clock?: PauseClock;
}

/**
 * Runs `attempt`, and again after each failure `policy.retryable` accepts, up to `policy.maxRetries`
 * times, waiting before each retry what the failed answer's headers ask for
 * ({@link requestedRetryWaitMs}), else the backoff ({@link backoffMs}). With `policy.pause`, every
 * attempt (the first too) waits the pause out first (and, after a 429, for the probe, or is the
 * probe: {@link EndpointPause.waitOut}), a failure `policy.rateLimited` accepts (retried or not)
 * extends the pause by that same wait, and the attempt's end is reported to the pause on every path
 * (after that extension, before any wait for a retry). Resolves with the first attempt that
 * succeeds. @throws (rejects with) the last attempt's error when it is not retryable or no retry is
 * left; {@link RetryWaitTooLongError} when the endpoint asks to wait over `policy.maxWaitMs` (no
 * retry made); `EndpointPausedError` when the pause has more than `policy.maxWaitMs` left before an
 * attempt (that attempt not made); Node's `AbortError` when `policy.signal` aborts during a wait.
 */
export async function withRetries<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const random = policy.random ?? Math.random;
  const clock = policy.clock ?? SYSTEM_PAUSE_CLOCK;
  for (let retry = 0; ; retry++) {
    const ended: AttemptEnded | undefined = await policy.pause?.waitOut(policy.maxWaitMs, policy.signal);
    let failure: unknown;
    let asked: number | undefined;
    let backoff: number | undefined;
    const waitMs = (): number => (asked !== undefined ? Math.max(0, asked) : (backoff ??= backoffMs(retry, random())));
    try {
      return await attempt();
    } catch (error) {
      failure = error;
      asked = requestedRetryWaitMs(policy.headersOf(error), clock.now());
      // a rate limit is the endpoint's: every call waits (a wait over the bound too: the other calls then fail at once)
      if (policy.pause && policy.rateLimited?.(error)) policy.pause.rateLimited(waitMs());
    } finally {
      // after rateLimited: a probe answered 429 keeps the endpoint half-open; any other end opens it
      ended?.();
    }
    if (retry >= policy.maxRetries || !policy.retryable(failure)) throw failure;
    if (asked !== undefined && asked > policy.maxWaitMs)
      throw new RetryWaitTooLongError(failure, Math.round(asked), policy.maxWaitMs, retryWaitHeader(policy.headersOf(failure)));
    await clock.sleep(waitMs(), policy.signal);
  }
}
