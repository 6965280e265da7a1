/**
 * A noop that followed discarded summarizer calls is recorded with them (newcomer ncauditor F2):
 * given the session's past events and the usage of the calls a pass discarded in its earlier
 * attempts (the handler's ledger), when the pass plans again and finds nothing to archive, then one
 * `CompactionCompleted` (outcome `noop`, its reason) carries those calls as its `summarizer`, so the
 * audit (the compaction history, the session's spend) shows them. The wait of DESIGN §3.5 is as the
 * noop alone would leave it.
 */
import fc from 'fast-check';
import type { EventData } from '@lib/event-store';
import { COMPACTION_COMPLETED, type CompactionCompletedData } from '../events/session-stream-events';
import type { SummarizerUsage } from '../summarizers/summarizer';
import { autoPassBaseline, autoPassDue, compactionIdentity, recordsSpentNoop } from './compaction-decider';
import { given, stateOf, type GivenEvent } from './testing/decider-spec';
import { compact, compactCommand } from './testing/compaction-spec';
import { answers, calls, reply, system, user } from './testing/session-events';

const recorded = (events: readonly EventData[]): GivenEvent[] => events.map((e) => ({ type: e.type, data: e.data }));
const completed = (events: readonly EventData[]) => events.find((e) => e.type === COMPACTION_COMPLETED)?.data as CompactionCompletedData | undefined;

/** Two calls discarded (planned again twice), 3,000 prompt and 59 completion tokens. */
const discarded: SummarizerUsage = { calls: 2, promptTokens: 3000, completionTokens: 59, retries: 0, unreportedUsageCalls: 0, answeredModels: ['m-1'] };
const fullUsage = { ...discarded };
const threeTurns = [user('u1'), reply('a1'), user('u2'), reply('a2'), user('u3'), reply('a3')];
const withinLimit = { type: 'sliding-window', maxEvents: 10 };

describe('a noop after discarded summarizer calls is recorded with them (ncauditor F2)', () => {
  it('a commanded noop with discarded calls: one CompactionCompleted, outcome noop, its reason, the calls as its summarizer (all discarded)', () => {
    given(...threeTurns)
      .when(compact(compactCommand(withinLimit), undefined, discarded))
      .then(({ events, answer, summarizerRequests }) => {
        expect(events.map((e) => e.type)).toEqual([COMPACTION_COMPLETED]);
        expect(summarizerRequests).toEqual([]);
        expect(completed(events)).toMatchObject({
          outcome: 'noop',
          reason: 'within-limit',
          origin: 'command',
          archivedCount: 0,
          keptIds: threeTurns.map((e) => e.id),
          tokensEstimatedSaved: 0,
          basedOnRevision: '5',
          summarizer: { kind: 'extractive', model: 'scripted', ...fullUsage, discarded: fullUsage },
        });
        expect(answer).toMatchObject({
          outcome: 'noop',
          reason: 'within-limit',
          recorded: true,
          archived: [],
          summarizer: { kind: 'extractive', model: 'scripted', ...fullUsage, discarded: fullUsage },
          discardedSummarizerCalls: { kind: 'extractive', model: 'scripted', ...fullUsage },
        });
        expect(answer.compactionId).toBe(compactionIdentity(compactCommand(withinLimit), 5n, 0n).compactionId);
      });
  });

  it('newest-turn-only and open-tool-call noops are recorded with their reason too', () => {
    given(user('u1'), reply('a1'), reply('a2'))
      .when(compact(compactCommand({ type: 'sliding-window', maxEvents: 1 }), undefined, discarded))
      .then(({ events }) => expect(completed(events)).toMatchObject({ outcome: 'noop', reason: 'newest-turn-only' }));
    given(user('u1'), calls('c1', 'x'), user('u2'), answers('t1', 'x'), reply('a2'))
      .when(compact(compactCommand({ type: 'sliding-window', maxEvents: 2 }), undefined, discarded))
      .then(({ events }) => expect(completed(events)).toMatchObject({ outcome: 'noop', reason: 'open-tool-call', toolCallId: 'x', eventId: 'c1' }));
  });

  it('without discarded calls (none, or 0 calls: no attempt reached the endpoint), nothing is written: as before', () => {
    for (const none of [undefined, { calls: 0, promptTokens: 0, completionTokens: 0 }]) {
      given(...threeTurns)
        .when(compact(compactCommand(withinLimit), undefined, none))
        .then(({ events, answer }) => {
          expect(events).toEqual([]);
          expect(answer).toMatchObject({ outcome: 'noop', recorded: false });
          expect(answer.compactionId).toBeUndefined();
        });
    }
  });

  it('a dry run writes nothing, whatever it is told was discarded', () => {
    given(...threeTurns)
      .when(compact(compactCommand(withinLimit, { dryRun: true }), undefined, discarded))
      .then(({ events, answer }) => expect([events, answer.outcome, answer.recorded]).toEqual([[], 'noop', false]));
  });

  it('not-triggered writes nothing (no noop outcome to record), with discarded calls or not', () => {
    given(...threeTurns)
      .when(compact(compactCommand(withinLimit, { trigger: { type: 'turn-count', maxTurns: 5 } }), undefined, discarded))
      .then(({ events, answer }) => expect([events, answer.outcome, answer.recorded]).toEqual([[], 'not-triggered', false]));
  });

  describe('the wait of DESIGN §3.5 is as the noop alone would leave it', () => {
    // The pinned system message alone (108 chars) is over the threshold (50): the policy cannot be met.
    const policy = { trigger: { type: 'token-count' as const, threshold: 50 }, origin: 'auto' as const };
    const auto = compactCommand({ type: 'token-count', maxTokens: 1000 }, policy);
    const prompt = system('s', 'x'.repeat(100));
    const stuck = compact(auto)(stateOf([prompt]));
    const waiting = [prompt, ...recorded(stuck.events), user('u1', 'u1')];

    it('while an automatic pass waits for growth, a noop with discarded calls writes nothing: neither a commanded one (it would end the wait) nor the policy’s own (it would move it)', () => {
      expect(autoPassDue(auto, stateOf(waiting)!)).toBe(false);
      expect(recordsSpentNoop(stateOf(waiting)!, discarded)).toBe(false);
      for (const command of [auto, compactCommand({ type: 'token-count', maxTokens: 1000 }, { ...policy, origin: 'command' })]) {
        given(...waiting)
          .when(compact(command, undefined, discarded))
          .then(({ events, answer }) => {
            expect(events).toEqual([]);
            expect(answer).toMatchObject({ outcome: 'noop', recorded: false, discardedSummarizerCalls: { calls: 2 } });
          });
      }
    });

    it('a commanded noop recorded with its calls starts no wait: it records no baseline, and the next automatic pass is due', () => {
      const commanded = compactCommand({ type: 'token-count', maxTokens: 1000 }, { ...policy, origin: 'command' });
      const noop = compact(commanded, undefined, discarded)(stateOf([prompt]));
      expect(completed(noop.events)).toMatchObject({ outcome: 'noop', origin: 'command', triggerStillFires: true });
      const after = stateOf([prompt, ...recorded(noop.events)])!;
      expect(autoPassBaseline(after, stuck.pass!.paramsKey)).toBeNull();
      expect(autoPassDue(auto, after)).toBe(true);
    });

    it('property: with or without discarded calls, the state a noop leaves has the same wait (baseline and due) for the policy', () => {
      const strategies = [
        { type: 'token-count', maxTokens: 1000 },
        { type: 'token-count', maxTokens: 999 },
        { type: 'sliding-window', maxEvents: 20 },
        { type: 'sliding-window', maxEvents: 1 },
      ];
      fc.assert(
        fc.property(
          fc.boolean(),
          fc.integer({ min: 0, max: 3 }),
          fc.constantFrom(...strategies),
          fc.constantFrom<'auto' | 'command'>('auto', 'command'),
          fc.boolean(),
          fc.boolean(),
          fc.integer({ min: 0, max: 3 }),
          fc.integer({ min: 0, max: 40 }),
          (stuckFirst, appended, strategy, origin, withTrigger, dryRun, callCount, tokens) => {
            const history: GivenEvent[] = stuckFirst ? [...waiting] : [prompt];
            for (let i = 0; i < appended; i++) history.push(user(`v${i}`, 'v'.repeat(1 + i * 3)), reply(`w${i}`, 'w'.repeat(i)));
            const command = compactCommand(strategy, { ...(withTrigger ? policy : {}), origin, dryRun });
            const spent = { calls: callCount, promptTokens: tokens, completionTokens: callCount };
            const without = compact(command)(stateOf(history));
            const withSpent = compact(command, undefined, spent)(stateOf(history));
            // only a noop's record may differ, and only by being written
            if (without.answer.outcome !== 'noop') return expect(withSpent.events.length).toBe(without.events.length);
            const [a, b] = [stateOf([...history, ...recorded(without.events)])!, stateOf([...history, ...recorded(withSpent.events)])!];
            expect(autoPassBaseline(b, stuck.pass!.paramsKey)).toEqual(autoPassBaseline(a, stuck.pass!.paramsKey));
            expect(autoPassDue(auto, b)).toBe(autoPassDue(auto, a));
            // recorded exactly when it called, was no dry run, and no wait was in force (or the §3.5 rule records it anyway)
            const waitInForce = stateOf(history)!.lastCompaction?.stillFiring !== undefined;
            if (callCount > 0 && !dryRun && !waitInForce) expect(withSpent.answer.recorded).toBe(true);
            if (!without.answer.recorded && (callCount === 0 || dryRun || waitInForce)) expect(withSpent.events).toEqual([]);
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
