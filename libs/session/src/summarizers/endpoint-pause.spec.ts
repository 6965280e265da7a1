import fc from 'fast-check';
import { type AttemptEnded, EndpointPause, EndpointPausedError, LONGEST_PAUSE_MS, SYSTEM_PAUSE_CLOCK, type PauseClock } from './endpoint-pause';
import { ManualPauseClock, settle } from './testing/manual-pause-clock';
import { playProbeScenario, probeSteps, type ProbeOutcome } from './testing/probe-scenario';

/**
 * A virtual clock: `sleep` moves time forward, running on its way the 429s other calls receive
 * (`at`: when, `waitMs`: the wait each asks for), in time order, on `pause`.
 */
class VirtualClock implements PauseClock {
  time = 1_000_000;
  readonly sleeps: number[] = [];
  readonly pause: EndpointPause = new EndpointPause(this);
  private readonly pending: Array<{ at: number; waitMs: number }>;

  constructor(others: Array<{ at: number; waitMs: number }> = []) {
    this.pending = [...others].sort((a, b) => a.at - b.at);
  }

  now(): number {
    return this.time;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    const until = this.time + ms;
    while (this.pending.length > 0 && this.pending[0].at <= until) {
      const next = this.pending.shift()!;
      this.time = Math.max(this.time, next.at);
      this.pause.rateLimited(next.waitMs);
    }
    this.time = until;
  }
}

describe('EndpointPause: every call to an endpoint waits once it answered 429', () => {
  it('lasts the wait a 429 asked for, from when it was answered; none before any 429', () => {
    const clock = new VirtualClock();
    const pause = clock.pause;
    expect(pause.remainingMs()).toBe(0);
    expect(pause.endsAt()).toBeNull();
    pause.rateLimited(1000);
    expect(pause.endsAt()).toBe(clock.time + 1000);
    clock.time += 400;
    expect(pause.remainingMs()).toBe(600);
    clock.time += 600;
    expect(pause.remainingMs()).toBe(0);
    clock.time += 5000;
    expect(pause.remainingMs()).toBe(0);
  });

  it('lasts at most an hour, and a negative or unreadable wait sets none', () => {
    const clock = new VirtualClock();
    const pause = clock.pause;
    pause.rateLimited(-5000);
    pause.rateLimited(Number.NaN);
    expect(pause.remainingMs()).toBe(0);
    pause.rateLimited(1e15);
    expect(pause.remainingMs()).toBe(LONGEST_PAUSE_MS);
  });

  it('never shortens: its end is the latest of every 429 answered + the wait it asked for (at most an hour)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ advanceMs: fc.integer({ min: 0, max: 10_000 }), waitMs: fc.integer({ min: -2000, max: 2 * LONGEST_PAUSE_MS }) }), {
          minLength: 1,
          maxLength: 30,
        }),
        (answers) => {
          const clock = new VirtualClock();
          const pause = clock.pause;
          let latest = Number.NEGATIVE_INFINITY;
          for (const { advanceMs, waitMs } of answers) {
            const before = pause.endsAt() ?? Number.NEGATIVE_INFINITY;
            clock.time += advanceMs;
            pause.rateLimited(waitMs);
            latest = Math.max(latest, clock.time + Math.min(Math.max(0, waitMs), LONGEST_PAUSE_MS));
            const after = pause.endsAt()!;
            if (after < before || after !== latest) return false;
            if (pause.remainingMs() !== Math.max(0, latest - clock.time)) return false;
          }
          return true;
        },
      ),
    );
  });

  it('waitOut: an attempt never starts before the pause ends, however other calls extend it meanwhile; a pause over the bound fails at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 5000 }),
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 20_000 }), waitMs: fc.integer({ min: 0, max: 30_000 }) }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 20_000 }),
        async (firstWaitMs, others, maxWaitMs) => {
          const start = 1_000_000;
          const clock = new VirtualClock(others.map((o) => ({ at: start + o.at, waitMs: o.waitMs })));
          const pause = clock.pause;
          pause.rateLimited(firstWaitMs);
          const waited = await pause.waitOut(maxWaitMs).then(
            () => null,
            (error: unknown) => error,
          );
          if (waited === null) {
            // the attempt starts now: the pause, as extended by every 429 received so far, is over
            return clock.time >= pause.endsAt()! && pause.remainingMs() === 0 && clock.sleeps.every((ms) => ms <= maxWaitMs);
          }
          // refused: more than the bound was left when it looked, and it never slept past the bound
          return (
            waited instanceof EndpointPausedError &&
            waited.remainingMs > maxWaitMs &&
            waited.remainingMs === pause.remainingMs() &&
            waited.maxWaitMs === maxWaitMs &&
            clock.sleeps.every((ms) => ms <= maxWaitMs)
          );
        },
      ),
    );
  });

  it('waitOut: resolves at once without a pause; refuses a pause over the bound without waiting', async () => {
    const clock = new VirtualClock();
    const pause = clock.pause;
    await pause.waitOut(1000);
    pause.rateLimited(0);
    // the probe after the (empty) pause: its end, without a 429, opens the endpoint
    (await pause.waitOut(1000))();
    expect(clock.sleeps).toEqual([]);
    pause.rateLimited(60_001);
    await expect(pause.waitOut(60_000)).rejects.toMatchObject({ name: 'EndpointPausedError', remainingMs: 60_001, maxWaitMs: 60_000 });
    expect(clock.sleeps).toEqual([]);
    await pause.waitOut(60_001);
    expect(clock.sleeps).toEqual([60_001]);
  });

  it("waitOut: the call's signal ends the wait (Node's AbortError), before the pause is over", async () => {
    const pause = new EndpointPause(SYSTEM_PAUSE_CLOCK);
    pause.rateLimited(30_000);
    const controller = new AbortController();
    const waiting = pause.waitOut(60_000, controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(pause.remainingMs()).toBeGreaterThan(0);
    // already aborted: no wait at all
    await expect(pause.waitOut(60_000, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });
});

/** `n` attempts waiting the pause out at once; `started` lists (in order) those let through, `ended[i]` reports attempt i's end, `failed[i]` its wait's rejection. */
function waiting(pause: EndpointPause, n: number, maxWaitMs = 60_000, signals: Array<AbortSignal | undefined> = []) {
  const started: number[] = [];
  const ended: AttemptEnded[] = [];
  const failed: unknown[] = [];
  const all = Array.from({ length: n }, (_, i) =>
    pause.waitOut(maxWaitMs, signals[i]).then(
      (end) => {
        started.push(i);
        ended[i] = end;
      },
      (error: unknown) => {
        failed[i] = error;
      },
    ),
  );
  return { started, ended, failed, all: Promise.all(all) };
}

describe('EndpointPause: half-open after a pause, one attempt probes the endpoint and the others follow once it was not answered 429', () => {
  it('before any 429 no attempt waits and none probes', async () => {
    const clock = new ManualPauseClock();
    const pause = new EndpointPause(clock);
    const calls = waiting(pause, 5);
    await settle();
    expect(calls.started).toHaveLength(5);
    expect(pause.probing()).toBe(false);
    expect(clock.sleeps).toEqual([]);
  });

  it('of 5 attempts waiting the pause out, exactly one goes once it is over, until it ends; then all the others at once, and later ones wait for nothing', async () => {
    const clock = new ManualPauseClock();
    const pause = new EndpointPause(clock);
    pause.rateLimited(1000);
    const calls = waiting(pause, 5);
    await clock.advance(999);
    expect(calls.started).toEqual([]);
    await clock.advance(1);
    expect(calls.started).toHaveLength(1);
    expect(pause.probing()).toBe(true);
    // time alone does not let the others go, nor one arriving meanwhile
    const late = waiting(pause, 1);
    await clock.advance(30_000);
    expect(calls.started).toHaveLength(1);
    expect(late.started).toEqual([]);
    const probe = calls.started[0];
    calls.ended[probe]();
    await settle();
    expect(calls.started).toHaveLength(5);
    expect(late.started).toEqual([0]);
    expect(pause.probing()).toBe(false);
    // the other attempts' ends change nothing; a later attempt goes at once
    for (const i of calls.started) calls.ended[i]();
    calls.ended[probe]();
    const later = waiting(pause, 3);
    await settle();
    expect(later.started).toHaveLength(3);
    expect(pause.probing()).toBe(false);
  });

  it('a probe answered 429 sets the pause again: the others wait it out, then one new probe goes', async () => {
    const clock = new ManualPauseClock();
    const pause = new EndpointPause(clock);
    pause.rateLimited(1000);
    const calls = waiting(pause, 4);
    await clock.advance(1000);
    expect(calls.started).toHaveLength(1);
    const first = calls.started[0];
    // answered 429 asking for 2 s: rateLimited, then its end
    pause.rateLimited(2000);
    calls.ended[first]();
    await clock.advance(1999);
    expect(calls.started).toEqual([first]);
    expect(pause.remainingMs()).toBe(1);
    await clock.advance(1);
    expect(calls.started).toHaveLength(2);
    expect(pause.probing()).toBe(true);
    const second = calls.started[1];
    expect(second).not.toBe(first);
    await clock.advance(5000);
    expect(calls.started).toHaveLength(2);
    calls.ended[second]();
    await settle();
    expect(calls.started).toHaveLength(4);
  });

  it('a 429 answered to an attempt sent before the pause, while the probe is in flight, keeps the endpoint half-open', async () => {
    const clock = new ManualPauseClock();
    const pause = new EndpointPause(clock);
    pause.rateLimited(100);
    const calls = waiting(pause, 3);
    await clock.advance(100);
    const probe = calls.started[0];
    pause.rateLimited(500); // another attempt's (sent before the first 429) answer
    calls.ended[probe]();
    await clock.advance(499);
    expect(calls.started).toEqual([probe]);
    await clock.advance(1);
    expect(calls.started).toHaveLength(2);
  });

  it('an abort while waiting for the probe rejects that wait only (AbortError); the others go when the probe ends', async () => {
    const clock = new ManualPauseClock();
    const pause = new EndpointPause(clock);
    pause.rateLimited(1000);
    const controller = new AbortController();
    const calls = waiting(pause, 4, 60_000, [undefined, controller.signal]);
    await clock.advance(1000);
    expect(calls.started).toEqual([0]);
    controller.abort();
    await settle();
    expect(calls.failed[1]).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' });
    expect(calls.started).toEqual([0]);
    expect(pause.probing()).toBe(true);
    calls.ended[0]();
    await calls.all;
    expect(calls.started.sort()).toEqual([0, 2, 3]);
    // already aborted: rejected at once while the probe is in flight
    pause.rateLimited(0);
    const probe = await pause.waitOut(60_000);
    await expect(pause.waitOut(60_000, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    probe();
  });

  it('the bound applies to the pause left: one waiting for a probe answered 429 over its bound fails at once (EndpointPausedError), no sleep', async () => {
    const clock = new ManualPauseClock();
    const pause = new EndpointPause(clock);
    pause.rateLimited(1000);
    const calls = waiting(pause, 3, 10_000);
    await clock.advance(1000);
    expect(calls.started).toHaveLength(1);
    const sleepsBefore = clock.sleeps.length;
    pause.rateLimited(90_000);
    calls.ended[calls.started[0]]();
    await calls.all;
    expect(calls.started).toHaveLength(1);
    const others = [0, 1, 2].filter((i) => i !== calls.started[0]);
    for (const i of others) expect(calls.failed[i]).toMatchObject({ name: 'EndpointPausedError', remainingMs: 90_000, maxWaitMs: 10_000 });
    expect(clock.sleeps.length).toBe(sleepsBefore);
    // the wait for a probe itself is not bounded: a probe in flight past a call's bound does not fail it
    await clock.advance(90_000);
    const probe = await pause.waitOut(10);
    const patient = waiting(pause, 1, 10);
    await clock.advance(60_000);
    expect(patient.failed).toEqual([]);
    probe();
    await patient.all;
    expect(patient.started).toEqual([0]);
  });

  it('property: after a 429, attempts go one at a time until one ends without a 429; every caller ends (goes, or fails)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), probeSteps, fc.integer({ min: 500, max: 5000 }), async (initialCallers, steps, maxWaitMs) => {
        const clock = new ManualPauseClock();
        const pause = new EndpointPause(clock);
        // the test's own account of the rule: half-open from a 429 until an attempt started half-open ends with no 429 answered meanwhile
        let halfOpen = false;
        let limits = 0;
        let violation: string | null = null;
        const inFlight: Array<{ answer: (outcome: ProbeOutcome, waitMs: number) => void; probe: boolean }> = [];
        const controllers: AbortController[] = [];
        let ended = 0;
        const run = async (signal: AbortSignal): Promise<void> => {
          // a caller retries after a 429 (up to 3 attempts), not after another failure
          for (let attempt = 0; attempt < 3; attempt++) {
            const attemptEnded = await pause.waitOut(maxWaitMs, signal);
            if (pause.remainingMs() > 0) violation ??= 'an attempt went during the pause';
            if (halfOpen && inFlight.some((a) => a.probe)) violation ??= 'a second attempt went while a probe was in flight';
            const limitsAtStart = limits;
            const probe = halfOpen;
            const outcome = await new Promise<ProbeOutcome>((resolve) => {
              const entry = {
                probe,
                answer: (o: ProbeOutcome, waitMs: number) => {
                  inFlight.splice(inFlight.indexOf(entry), 1);
                  if (o === 'limited') {
                    limits++;
                    halfOpen = true;
                    pause.rateLimited(waitMs);
                  } else if (probe && limits === limitsAtStart) halfOpen = false;
                  attemptEnded();
                  resolve(o);
                },
              };
              inFlight.push(entry);
            });
            if (outcome !== 'limited') return;
          }
        };
        const all: Array<Promise<unknown>> = [];
        const arrive = (): void => {
          const controller = new AbortController();
          controllers.push(controller);
          all.push(
            run(controller.signal).then(
              () => ended++,
              (error: unknown) => {
                if (!(error instanceof EndpointPausedError) && (error as Error).name !== 'AbortError') violation ??= `unexpected ${String(error)}`;
                ended++;
              },
            ),
          );
        };
        const scenario = { clock, inFlight, controllers, arrive, violation: () => violation, allEnded: () => ended === all.length };
        return (await playProbeScenario(scenario, initialCallers, steps, 200)) && !pause.probing();
      }),
      { numRuns: 200 },
    );
  });
});
