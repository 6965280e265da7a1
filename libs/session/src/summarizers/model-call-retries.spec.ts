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

const headers = (values: Record<string, string>) => new Headers(values);

/** A failed attempt's error carrying its answer's headers. */
class Failed extends Error {
  constructor(
    readonly retryable: boolean,
    readonly headers?: Headers,
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
