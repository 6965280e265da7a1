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
import { ManualPauseClock, settle } from './testing/manual-pause-clock';
import { playProbeScenario, probeSteps, type ProbeOutcome } from './testing/probe-scenario';

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
    // no wait asked (0, negative, a date in the past): the backoff applies (newcomer ncmodel71 F1: retried at once, 60 a second)
    expect(requestedRetryWaitMs(headers({ 'retry-after': 'Fri, 04 Dec 2026 11:59:00 GMT' }), now)).toBeUndefined();
    for (const asked of <Array<Record<string, string>>>[
      { 'retry-after': '0' },
      { 'retry-after': '-5' },
      { 'retry-after-ms': '0' },
      { 'retry-after-ms': '-100' },
      { 'retry-after-ms': '0', 'retry-after': '9' },
    ])
      expect(requestedRetryWaitMs(headers(asked), now)).toBeUndefined();
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
    const wait = headers({ 'retry-after-ms': '1' });
    const last = new Failed(true, wait);
    const run = attempts(new Failed(true, wait), new Failed(true, wait), last);
    await expect(withRetries(run.attempt, policy())).rejects.toBe(last);
    expect(run.calls()).toBe(3);
  });

  it('resolves with the first attempt that succeeds', async () => {
    const run = attempts(new Failed(true, headers({ 'retry-after-ms': '1' })));
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

describe('withRetries with the endpoint pause: after the pause one attempt probes the endpoint, the others follow once it was not answered 429', () => {
  const rateLimited = (error: unknown) => error instanceof Failed && error.status === 429;
  const limited = (waitMs: number, retryable = true) => new Failed(retryable, headers({ 'retry-after-ms': String(waitMs) }), 429);
  type Answer = 'ok' | Failed | Error;

  /** An endpoint whose attempts stay in flight until the test answers them; `started` lists the callers in the order their attempts were sent. */
  class GatedEndpoint {
    readonly started: number[] = [];
    readonly inFlight: Array<{ caller: number; answer: (answer: Answer) => void }> = [];
    attempt(caller: number, signal?: AbortSignal): () => Promise<string> {
      return () =>
        new Promise<string>((resolve, reject) => {
          this.started.push(caller);
          const entry = {
            caller,
            answer: (answer: Answer) => {
              this.inFlight.splice(this.inFlight.indexOf(entry), 1);
              if (answer === 'ok') resolve(`done ${caller}`);
              else reject(answer);
            },
          };
          this.inFlight.push(entry);
          // as the SDK: an abort ends the attempt (AbortError)
          signal?.addEventListener('abort', () => entry.answer(Object.assign(new Error('aborted'), { name: 'AbortError' })), { once: true });
        });
    }
    /** Answers the attempt in flight of `caller`. */
    answer(caller: number, answer: Answer): void {
      const entry = this.inFlight.find((e) => e.caller === caller);
      if (!entry) throw new Error(`no attempt of caller ${caller} in flight`);
      entry.answer(answer);
    }
  }

  /** Caller 0's attempt answered 429 asking for `waitMs` (not retryable): the pause is set, then `n` more callers (1..n) start; the outcome of each. */
  async function afterA429(waitMs: number, n: number, overrides: Partial<RetryPolicy> = {}) {
    const clock = new ManualPauseClock();
    const pause = new EndpointPause(clock);
    const endpoint = new GatedEndpoint();
    const policyOf = (more: Partial<RetryPolicy> = {}) => policy({ maxWaitMs: 60_000, maxRetries: 0, pause, rateLimited, clock, ...overrides, ...more });
    const first = withRetries(endpoint.attempt(0), policyOf()).catch((error: unknown) => error);
    await settle();
    endpoint.answer(0, limited(waitMs, false));
    expect(await first).toBeInstanceOf(Failed);
    const outcomes: unknown[] = [];
    const controllers = Array.from({ length: n + 1 }, () => new AbortController());
    const calls = Array.from({ length: n }, (_, k) =>
      withRetries(endpoint.attempt(k + 1, controllers[k + 1].signal), policyOf({ signal: controllers[k + 1].signal })).then(
        (value) => (outcomes[k + 1] = value),
        (error: unknown) => (outcomes[k + 1] = error),
      ),
    );
    await settle();
    return { clock, pause, endpoint, outcomes, controllers, calls: Promise.all(calls), policyOf };
  }

  it('of 5 calls waiting out a 429 pause, exactly one attempt is sent until it has its answer, then the other 4 at once', async () => {
    const { clock, endpoint, outcomes, calls, pause } = await afterA429(1000, 5);
    expect(endpoint.started).toEqual([0]);
    await clock.advance(1000);
    expect(endpoint.started).toHaveLength(2);
    await clock.advance(60_000);
    expect(endpoint.started).toHaveLength(2);
    const probe = endpoint.started[1];
    endpoint.answer(probe, 'ok');
    await settle();
    expect(endpoint.started).toHaveLength(6);
    expect(pause.probing()).toBe(false);
    for (const caller of endpoint.started.slice(2)) endpoint.answer(caller, 'ok');
    await calls;
    expect(outcomes.slice(1)).toEqual([1, 2, 3, 4, 5].map((caller) => `done ${caller}`));
  });

  it.each([0, -5000])(
    'a 429 asking for a wait of %i ms pauses the other calls for the backoff, not for nothing (newcomer ncmodel71 F1: 60 requests a second)',
    async (asked) => {
      const { clock, endpoint, calls } = await afterA429(asked, 3);
      expect(endpoint.started).toEqual([0]);
      await clock.advance(499); // the first backoff is 0.5 s (random 0)
      expect(endpoint.started).toEqual([0]);
      await clock.advance(1);
      expect(endpoint.started).toHaveLength(2);
      for (const caller of endpoint.started.slice(1)) endpoint.answer(caller, 'ok');
      await settle();
      for (const caller of endpoint.started.slice(2)) endpoint.answer(caller, 'ok');
      await calls;
    },
  );

  it('a probe answered 429 pauses the others again for the wait it asked for, then one new probe is sent', async () => {
    const { clock, endpoint, calls, outcomes } = await afterA429(1000, 4);
    await clock.advance(1000);
    const [, probe] = endpoint.started;
    endpoint.answer(probe, limited(3000));
    await clock.advance(2999);
    expect(endpoint.started).toHaveLength(2);
    await clock.advance(1);
    expect(endpoint.started).toHaveLength(3);
    const next = endpoint.started[2];
    endpoint.answer(next, 'ok');
    await settle();
    expect(endpoint.started).toHaveLength(5);
    for (const caller of endpoint.started.slice(3)) endpoint.answer(caller, 'ok');
    await calls;
    expect(outcomes[probe]).toBeInstanceOf(Failed);
    expect(outcomes.filter((o) => typeof o === 'string')).toHaveLength(3);
  });

  it.each<[string, () => Answer]>([
    ['an HTTP 500', () => new Failed(false, undefined, 500)],
    ['a network error', () => Object.assign(new Error('ECONNRESET'), { name: 'APIConnectionError' })],
    ['an abort', () => Object.assign(new Error('aborted'), { name: 'AbortError' })],
  ])('a probe failing with %s (no 429) opens the endpoint: the others are sent at once', async (_what, failure) => {
    const { clock, endpoint, calls, outcomes } = await afterA429(500, 3);
    await clock.advance(500);
    const [, probe] = endpoint.started;
    endpoint.answer(probe, failure());
    await settle();
    expect(endpoint.started).toHaveLength(4);
    for (const caller of endpoint.started.slice(2)) endpoint.answer(caller, 'ok');
    await calls;
    expect(outcomes.filter((o) => typeof o === 'string')).toHaveLength(2);
  });

  it("a probe failing with a retried 503 opens the endpoint before its own backoff: the others do not wait for the probe's retry", async () => {
    const { clock, endpoint, calls } = await afterA429(500, 3, { maxRetries: 1, retryable: (error) => error instanceof Failed && error.retryable });
    await clock.advance(500);
    const [, probe] = endpoint.started;
    endpoint.answer(probe, new Failed(true, headers({ 'retry-after': '5' }), 503));
    await settle();
    expect(endpoint.started).toHaveLength(4);
    expect(endpoint.started.slice(2)).not.toContain(probe);
    for (const caller of endpoint.started.slice(2)) endpoint.answer(caller, 'ok');
    await clock.advance(5000);
    expect(endpoint.started.at(-1)).toBe(probe);
    endpoint.answer(probe, 'ok');
    await calls;
  });

  it('an abort while waiting for the probe rejects that call (AbortError), no attempt made; the others still follow the probe', async () => {
    const { clock, endpoint, calls, outcomes, controllers } = await afterA429(1000, 3);
    await clock.advance(1000);
    const [, probe] = endpoint.started;
    const waiter = [1, 2, 3].find((caller) => caller !== probe)!;
    controllers[waiter].abort();
    await settle();
    expect(outcomes[waiter]).toMatchObject({ name: 'AbortError' });
    expect(endpoint.started).toHaveLength(2);
    endpoint.answer(probe, 'ok');
    await settle();
    expect(endpoint.started).toHaveLength(3);
    expect(endpoint.started).not.toContain(waiter);
    endpoint.answer(endpoint.started[2], 'ok');
    await calls;
    expect(outcomes.filter((o) => typeof o === 'string')).toHaveLength(2);
  });

  it('a pause with more left than maxWaitMs fails the call at once (EndpointPausedError), no attempt made, the probe in flight or not', async () => {
    const { clock, endpoint, calls, outcomes, policyOf } = await afterA429(1000, 2);
    await clock.advance(1000);
    const [, probe] = endpoint.started;
    const waiter = probe === 1 ? 2 : 1;
    endpoint.answer(probe, limited(90_000, false));
    await settle();
    expect(outcomes[waiter]).toBeInstanceOf(EndpointPausedError);
    expect(outcomes[waiter]).toMatchObject({ remainingMs: 90_000, maxWaitMs: 60_000 });
    await calls;
    const late = new GatedEndpoint();
    await expect(withRetries(late.attempt(9), policyOf())).rejects.toMatchObject({ name: 'EndpointPausedError', remainingMs: 90_000 });
    expect(late.started).toEqual([]);
    expect(clock.sleeps.every((ms) => ms <= 60_000)).toBe(true);
  });

  it('property: while a probe after a 429 is in flight no other attempt is sent; every call ends (succeeds or fails), none hangs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 500, max: 5000 }),
        probeSteps,
        async (initialCallers, maxRetries, maxWaitMs, steps) => {
          const clock = new ManualPauseClock();
          const pause = new EndpointPause(clock);
          // the test's own account of the rule: half-open from a 429 until an attempt sent half-open ends with no 429 answered meanwhile
          let halfOpen = false;
          let limits = 0;
          let violation: string | null = null;
          const inFlight: Array<{ answer: (outcome: ProbeOutcome, waitMs: number) => void; probe: boolean }> = [];
          const attempt = (signal: AbortSignal) => (): Promise<string> => {
            if (pause.remainingMs() > 0) violation ??= 'an attempt was sent during the pause';
            if (halfOpen && inFlight.some((a) => a.probe)) violation ??= 'a second attempt was sent while a probe was in flight';
            const limitsAtStart = limits;
            const probe = halfOpen;
            return new Promise<string>((resolve, reject) => {
              const entry = {
                probe,
                answer: (o: ProbeOutcome, waitMs: number) => {
                  if (!inFlight.includes(entry)) return;
                  inFlight.splice(inFlight.indexOf(entry), 1);
                  if (o === 'limited') {
                    limits++;
                    halfOpen = true;
                    reject(limited(waitMs));
                  } else {
                    if (probe && limits === limitsAtStart) halfOpen = false;
                    if (o === 'ok') resolve('done');
                    else reject(new Failed(true, headers({ 'retry-after-ms': String(waitMs) }), 500));
                  }
                },
              };
              inFlight.push(entry);
              // as the SDK: an abort ends the attempt (not a 429)
              signal.addEventListener('abort', () => entry.answer('failed', 0), { once: true });
            });
          };
          const controllers: AbortController[] = [];
          let ended = 0;
          const expected = (error: unknown): boolean =>
            error instanceof Failed || error instanceof EndpointPausedError || error instanceof RetryWaitTooLongError || (error as Error).name === 'AbortError';
          const arrive = (): void => {
            const controller = new AbortController();
            controllers.push(controller);
            withRetries(
              attempt(controller.signal),
              policy({ maxRetries, maxWaitMs, pause, rateLimited, clock, signal: controller.signal, retryable: (e) => e instanceof Failed }),
            ).then(
              () => ended++,
              (error: unknown) => {
                if (!expected(error)) violation ??= `unexpected ${String(error)}`;
                ended++;
              },
            );
          };
          const scenario = { clock, inFlight, controllers, arrive, violation: () => violation, allEnded: () => ended === controllers.length };
          return (await playProbeScenario(scenario, initialCallers, steps)) && !pause.probing();
        },
      ),
      { numRuns: 200 },
    );
  });
});
