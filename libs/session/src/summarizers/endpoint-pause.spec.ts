import fc from 'fast-check';
import { EndpointPause, EndpointPausedError, LONGEST_PAUSE_MS, SYSTEM_PAUSE_CLOCK, type PauseClock } from './endpoint-pause';

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
    await pause.waitOut(1000);
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
