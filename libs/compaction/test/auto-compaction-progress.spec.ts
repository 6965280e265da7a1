/**
 * DESIGN §3.5: automatic compaction makes progress or waits. A simulated policy runs a pass after
 * every append unless `autoPassMayRun` says to wait; over random sessions, strategies and triggers
 * (often below what no strategy can remove), no automatic pass follows a pass that left the
 * trigger firing before the window has grown by a quarter of the threshold / turn limit.
 */
import fc from 'fast-check';
import {
  autoPassMayRun,
  completePlan,
  costEvents,
  eventCost,
  extractiveSummary,
  getEstimator,
  planCompaction,
  triggerFigures,
  type CostedEvent,
  type SessionEvent,
  type Strategy,
  type Trigger,
  type TriggerFigures,
} from '../src';
import { strategyArbs } from './arbitraries';

const estimator = getEstimator('chars');
const RUNS = Number(process.env.FC_RUNS ?? 150);

/** The growth DESIGN §3.5 asks for between two figures, restated from the text for one trigger. */
function grew(trigger: Trigger, from: TriggerFigures, to: TriggerFigures): boolean {
  switch (trigger.type) {
    case 'token-count':
      return to.tokens - from.tokens >= Math.max(1, trigger.threshold / 4);
    case 'turn-count':
      return to.turns - from.turns >= Math.max(1, Math.ceil(trigger.maxTurns / 4));
    default:
      return trigger.triggers.some((t) => grew(t, from, to));
  }
}

const triggerArb: fc.Arbitrary<Trigger> = fc.oneof(
  fc.integer({ min: 0, max: 600 }).map((threshold) => ({ type: 'token-count' as const, threshold })),
  fc.integer({ min: 0, max: 8 }).map((maxTurns) => ({ type: 'turn-count' as const, maxTurns })),
  fc.tuple(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 8 })).map(([threshold, maxTurns]) => ({
    type: 'any-of' as const,
    triggers: [
      { type: 'token-count' as const, threshold },
      { type: 'turn-count' as const, maxTurns },
    ],
  })),
);

const turnArb = fc.record({ user: fc.string({ maxLength: 60 }), assistant: fc.string({ maxLength: 120 }) });

interface Pass {
  before: TriggerFigures;
  after: TriggerFigures;
  stillFires: boolean;
  summarized: boolean;
}

/** Appends the turns one by one to a session with a pinned system message, running the policy after each append. */
function simulate(system: string, turns: Array<{ user: string; assistant: string }>, strategy: Strategy, trigger: Trigger): { passes: Pass[]; grown: number } {
  let window: CostedEvent[] = costEvents([{ id: 's', type: 'system', text: system }], estimator);
  let since: TriggerFigures | null = null;
  const passes: Pass[] = [];
  let grown = 0;
  turns.forEach((t, i) => {
    const added = costEvents(
      [
        { id: `u${i}`, type: 'user', text: t.user },
        { id: `a${i}`, type: 'assistant', text: t.assistant },
      ],
      estimator,
    );
    grown += added.reduce((sum, c) => sum + c.tokens, 0);
    window = [...window, ...added];
    const before = triggerFigures(window);
    if (!autoPassMayRun(trigger, since, before)) return;
    const plan = planCompaction(window, strategy, trigger);
    if (plan.outcome === 'not-triggered') {
      since = null;
      return;
    }
    const reply = plan.summaryRequest ? { text: extractiveSummary(plan.summaryRequest) || 'summary' } : undefined;
    const result = completePlan(plan, { reply, summaryId: `sum${i}`, estimator });
    const byId = new Map(window.map((c) => [c.event.id, c]));
    window = result.keptIds.map((id) => {
      if (id !== result.summary?.id) return byId.get(id)!;
      const event: SessionEvent = { id, type: 'summary', shadowPrompt: result.summary.shadowPrompt, text: result.summary.text };
      return { event, tokens: eventCost(event, estimator) };
    });
    const after = triggerFigures(window);
    const stillFires = planCompaction(window, strategy, trigger).triggerFired;
    passes.push({ before, after, stillFires, summarized: !!result.summary });
    since = stillFires ? after : null;
  });
  return { passes, grown };
}

describe('automatic compaction makes progress or waits (DESIGN §3.5)', () => {
  it('no automatic pass runs twice without the growth', () => {
    const strategyArb = fc.oneof(...Object.values(strategyArbs));
    fc.assert(
      fc.property(fc.string({ maxLength: 700 }), fc.array(turnArb, { maxLength: 30 }), strategyArb, triggerArb, (system, turns, strategy, trigger) => {
        const { passes } = simulate(system, turns, strategy, trigger);
        for (let k = 1; k < passes.length; k++) {
          if (passes[k - 1].stillFires) expect(grew(trigger, passes[k - 1].after, passes[k].before)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('with the pinned prompt over a token threshold, summarizer calls stay within one per quarter-threshold of growth', () => {
    fc.assert(
      fc.property(fc.integer({ min: 40, max: 400 }), fc.array(turnArb, { minLength: 1, maxLength: 30 }), (threshold, turns) => {
        const strategy: Strategy = { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0, shadowPrompt: 'S?', systemPrompt: 'P' };
        const trigger: Trigger = { type: 'token-count', threshold };
        const { passes, grown } = simulate('X'.repeat(threshold + 10), turns, strategy, trigger);
        const calls = passes.filter((p) => p.summarized).length;
        expect(calls).toBeLessThanOrEqual(Math.floor(grown / (threshold / 4)) + 1);
      }),
      { numRuns: RUNS },
    );
  });
});
