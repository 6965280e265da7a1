import fc from 'fast-check';
import {
  BACKOFF_INITIAL_MS,
  BACKOFF_MAX_MS,
  backoffMs,
  requestedRetryWaitMs,
  RetryWaitTooLongError,
  withRetries,
  type RetryPolicy,
} from './model-call-retries';
import { EndpointPause, EndpointPausedError } from './endpoint-pause';

const headers = (values: Record<string, string>) => new Headers(values);

/** A failed attempt's error carrying its answer's headers. */
class Failed extends Error {
  constructor(
    readonly retryable: boolean,
    readonly headers?: Headers,
    readonly status?: number,
  ) {
    super('failed');
  }
}

const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({
  maxRetries: 2,
  maxWaitMs: 1_000,
  retryable: (error) => error instanceof Failed && error.retryable,
  headersOf: (error) => (error instanceof Failed ? error.headers : undefined),
  random: () => 0,
  ...overrides,
});

/** An attempt function failing with `failures` in turn, then resolving 'done'; `calls` counts the attempts. */
function attempts(...failures: Failed[]): { attempt: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    attempt: async () => {
      const failure = failures[calls++];
      if (failure) throw failure;
      return 'done';
    },
    calls: () => calls,
  };
}

describe('requestedRetryWaitMs: the wait an answer asks for before a retry', () => {
  const now = Date.parse('2026-12-04T12:00:00Z');
  it('reads retry-after-ms first, then Retry-After in seconds or as an HTTP date', () => {
    expect(requestedRetryWaitMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(requestedRetryWaitMs(headers({ 'retry-after': '1.5' }), now)).toBe(1500);
    expect(requestedRetryWaitMs(headers({ 'retry-after': 'Fri, 04 Dec 2026 12:01:00 GMT' }), now)).toBe(60_000);
    expect(requestedRetryWaitMs(headers({ 'retry-after': 'Fri, 04 Dec 2026 11:59:00 GMT' }), now)).toBe(-60_000);
  });
  it('is undefined without a readable header', () => {
    expect(requestedRetryWaitMs(undefined, now)).toBeUndefined();
    expect(requestedRetryWaitMs(headers({}), now)).toBeUndefined();
    expect(requestedRetryWaitMs(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(requestedRetryWaitMs(headers({ 'retry-after-ms': 'x' }), now)).toBeUndefined();
  });
});

describe('backoffMs', () => {
  it('doubles from 0.5 s per retry up to 8 s, less at most a quarter of jitter', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (retry, random) => {
        const full = Math.min(BACKOFF_INITIAL_MS * 2 ** retry, BACKOFF_MAX_MS);
        const wait = backoffMs(retry, random);
        return wait <= full && wait > full * 0.75 - 1e-9;
      }),
    );
    expect([0, 1, 2, 3, 4, 5].map((retry) => backoffMs(retry, 0))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });
});

describe('withRetries', () => {
  it('retries a retryable failure up to maxRetries times, then rejects with the last failure', async () => {
    const wait = headers({ 'retry-after-ms': '0' });
    const last = new Failed(true, wait);
    const run = attempts(new Failed(true, wait), new Failed(true, wait), last);
    await expect(withRetries(run.attempt, policy())).rejects.toBe(last);
    expect(run.calls()).toBe(3);
  });

  it('resolves with the first attempt that succeeds', async () => {
    const run = attempts(new Failed(true, headers({ 'retry-after': '0' })));
    await expect(withRetries(run.attempt, policy())).resolves.toBe('done');
    expect(run.calls()).toBe(2);
  });

  it('does not retry a failure that is not retryable', async () => {
    const failure = new Failed(false);
    const run = attempts(failure);
    await expect(withRetries(run.attempt, policy())).rejects.toBe(failure);
    expect(run.calls()).toBe(1);
  });

  it('makes no retry when the answer asks to wait longer than maxWaitMs', async () => {
    const failure = new Failed(true, headers({ 'retry-after': '3600' }));
    const run = attempts(failure);
    const rejected = await withRetries(run.attempt, policy({ maxWaitMs: 60_000 })).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(RetryWaitTooLongError);
    expect(rejected).toMatchObject({ failure, waitMs: 3_600_000, maxWaitMs: 60_000 });
    expect(run.calls()).toBe(1);
  });

  it('waits the backoff when the answer asks for nothing, and an abort ends the wait', async () => {
    const run = attempts(new Failed(true));
    const controller = new AbortController();
    // the first backoff is 0.5 s (random 0): abort well before it ends
    const pending = withRetries(run.attempt, policy({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    const startedAt = Date.now();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - startedAt).toBeLessThan(400);
    expect(run.calls()).toBe(1);
  });
});

// Newcomer ncllmfaults F5: with the endpoint answering 429, every call and session backed off on its own (20 sessions, 180 calls in 10.9 s).
describe('withRetries with the endpoint pause: a 429 pauses every call', () => {
  const rateLimited = (error: unknown) => error instanceof Failed && error.status === 429;
  /** An attempt function that notes when it started, failing with `failures` in turn, then resolving 'done'. */
  function timedAttempts(...failures: Failed[]): { attempt: () => Promise<string>; startedAt: number[] } {
    const startedAt: number[] = [];
    return {
      attempt: async () => {
        const failure = failures[startedAt.length];
        startedAt.push(Date.now());
        if (failure) throw failure;
        return 'done';
      },
      startedAt,
    };
  }

  it.each([
    ['retry-after-ms', headers({ 'retry-after-ms': '300' }), 300],
    ['Retry-After', headers({ 'retry-after': '0.3' }), 300],
    ['no header (the backoff: 0.5 s)', undefined, 500],
  ])("a 429 (%s), even one not retried, makes another call's first attempt wait that long", async (_what, asked, waitMs) => {
    const pause = new EndpointPause();
    const limited = timedAttempts(new Failed(true, asked, 429));
    await expect(withRetries(limited.attempt, policy({ maxRetries: 0, pause, rateLimited }))).rejects.toBeInstanceOf(Failed);
    const other = timedAttempts();
    await expect(withRetries(other.attempt, policy({ pause, rateLimited }))).resolves.toBe('done');
    // the 429 was answered after the first attempt started
    expect(other.startedAt[0]).toBeGreaterThanOrEqual(limited.startedAt[0] + waitMs);
  });

  it("a retry waits for the pause another call's 429 extended", async () => {
    const pause = new EndpointPause();
    const first = timedAttempts(new Failed(true, headers({ 'retry-after-ms': '100' }), 429));
    const pending = withRetries(first.attempt, policy({ pause, rateLimited }));
    while (first.startedAt.length === 0) await new Promise((resolve) => setImmediate(resolve));
    // another call is answered 429 asking for 400 ms while the first one waits its 100 ms before its retry
    const extendedAt = Date.now();
    pause.rateLimited(400);
    await expect(pending).resolves.toBe('done');
    expect(first.startedAt[1]).toBeGreaterThanOrEqual(extendedAt + 400);
  });

  it('an answer other than 429 pauses nothing, whatever it asks for', async () => {
    const pause = new EndpointPause();
    const failed = timedAttempts(new Failed(true, headers({ 'retry-after': '30' }), 503));
    await expect(withRetries(failed.attempt, policy({ maxRetries: 0, pause, rateLimited }))).rejects.toBeInstanceOf(Failed);
    expect(pause.remainingMs()).toBe(0);
  });

  it('a pause over maxWaitMs fails the call at once, no attempt made; one asked over it by a 429 pauses the other calls too', async () => {
    const pause = new EndpointPause();
    const limited = timedAttempts(new Failed(true, headers({ 'retry-after': '3600' }), 429));
    await expect(withRetries(limited.attempt, policy({ maxWaitMs: 60_000, pause, rateLimited }))).rejects.toBeInstanceOf(RetryWaitTooLongError);
    const other = timedAttempts();
    const rejected = await withRetries(other.attempt, policy({ maxWaitMs: 60_000, pause, rateLimited })).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(EndpointPausedError);
    expect((rejected as EndpointPausedError).remainingMs).toBeGreaterThan(3_590_000);
    expect(other.startedAt).toEqual([]);
  });
});
