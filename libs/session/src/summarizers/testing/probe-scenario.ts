/**
 * The random scenarios of the half-open property specs (`endpoint-pause.spec.ts`,
 * `model-call-retries.spec.ts`): steps in which the endpoint answers one attempt in flight, time
 * moves on, a caller arrives or one aborts, and the run that plays them on a
 * {@link ManualPauseClock}, then answers every attempt until every caller has ended.
 */
import fc from 'fast-check';
import { type ManualPauseClock, settle } from './manual-pause-clock';

/** How the endpoint answers an attempt: 429 (`limited`), success, or another failure. */
export type ProbeOutcome = 'limited' | 'ok' | 'failed';

/** One step of a scenario (`pick`: which attempt in flight or which caller, modulo their count; ms of time). */
export type ProbeStep =
  { kind: 'answer'; pick: number; outcome: ProbeOutcome; waitMs: number } | { kind: 'tick'; ms: number } | { kind: 'arrive' } | { kind: 'abort'; pick: number };

/** Up to 60 steps, answers and ticks the most frequent; waits of 0–6 s. */
export const probeSteps: fc.Arbitrary<ProbeStep[]> = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('answer' as const),
        pick: fc.nat(),
        outcome: fc.constantFrom<ProbeOutcome>('limited', 'limited', 'ok', 'failed'),
        waitMs: fc.oneof(fc.constantFrom(0, 100, 1000), fc.integer({ min: 0, max: 6000 })),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.oneof(fc.constantFrom(0, 100, 1000), fc.integer({ min: 0, max: 3000 })) }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('arrive' as const) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }) },
  ),
  { maxLength: 60 },
);

/** What {@link playProbeScenario} drives: the attempts in flight, the callers' abort controllers, and the spec's own accounts. */
export interface ProbeScenario {
  clock: ManualPauseClock;
  /** The attempts the endpoint has not answered yet, oldest first; `answer` removes its entry. */
  inFlight: ReadonlyArray<{ answer: (outcome: ProbeOutcome, waitMs: number) => void }>;
  /** One per caller that arrived, in order. */
  controllers: readonly AbortController[];
  /** Starts one more caller. */
  arrive: () => void;
  /** The rule broken so far, if any. */
  violation: () => string | null;
  /** Whether every caller has ended (resolved or rejected). */
  allEnded: () => boolean;
}

/**
 * Plays `steps` on `scenario` (settling after each), then answers every attempt `ok` and moves the
 * clock to each next wake until every caller has ended (at most `turns` times). Resolves false as
 * soon as a violation is seen, else whether every caller ended.
 */
export async function playProbeScenario(scenario: ProbeScenario, initialCallers: number, steps: readonly ProbeStep[], turns = 300): Promise<boolean> {
  const { clock, inFlight, controllers, arrive } = scenario;
  for (let i = 0; i < initialCallers; i++) arrive();
  await settle();
  for (const step of steps) {
    if (step.kind === 'answer' && inFlight.length > 0) inFlight[step.pick % inFlight.length].answer(step.outcome, step.waitMs);
    else if (step.kind === 'tick') await clock.advance(step.ms);
    else if (step.kind === 'arrive') arrive();
    else if (step.kind === 'abort') controllers[step.pick % controllers.length].abort();
    await settle();
    if (scenario.violation()) return false;
  }
  for (let turn = 0; turn < turns && !scenario.allEnded(); turn++) {
    if (inFlight.length > 0) inFlight[0].answer('ok', 0);
    else {
      const next = clock.nextWake();
      if (next === null) break;
      await clock.advance(next - clock.time);
    }
    await settle();
  }
  return scenario.violation() === null && scenario.allEnded();
}
