/**
 * A cleared policy's event (newcomer ncaudit56 F4): given a session with a policy, when a clear is
 * decided, then the policy event it writes holds no trigger and no estimator, as the API answers
 * (`GET …/policy`: `estimator: null`), whatever estimator the command carried. And a log written
 * before, whose clear holds the PUT's default estimator (or, before 2026-12-01, a trigger), still
 * reads as it did: the event stays as written, and the session has no policy.
 */
import fc from 'fast-check';
import { parseStrategy, parseTrigger } from '@lib/compaction';
import { POLICY_SET, type EstimatorName, type PolicySetData } from '../events/session-stream-events';
import { policyAnswer } from '../domain/policy-answer';
import { InvalidRequestError } from '../errors';
import { compactionOn } from './compaction-by-policy';
import { decideSetPolicy, type PolicyDecision, type SetPolicy } from './session-decider';
import { given, stateOf, type GivenEvent } from './testing/decider-spec';
import { user } from './testing/session-events';

const NOW = { now: new Date('2026-12-05T12:00:00.000Z') };
const ESTIMATORS: EstimatorName[] = ['cl100k_base', 'o200k_base', 'chars'];
const slidingWindow = parseStrategy({ type: 'sliding-window', maxEvents: 4 });
const overTwoTurns = parseTrigger({ type: 'turn-count', maxTurns: 2 });

/** A policy command of session `t`/`s`: `strategy` null clears. */
const command = (strategy: SetPolicy['strategy'], estimator: EstimatorName, trigger: SetPolicy['trigger'] = null): SetPolicy => ({
  type: 'SetPolicy',
  tenantId: 't',
  sessionId: 's',
  strategy,
  trigger,
  estimator,
});

/** A policy event in the log, its payload as written. */
const policyEvent = (data: PolicySetData): GivenEvent => ({ type: POLICY_SET, data });

/** The payload of the one event `decision` appends (fails the test when it appends none). */
function written(decision: PolicyDecision): PolicySetData {
  if (decision.kind !== 'append') throw new Error(`expected an append, got ${decision.kind}`);
  expect(decision.events[0].type).toBe(POLICY_SET);
  return decision.events[0].data as PolicySetData;
}

describe('a cleared policy event holds no estimator (the log agrees with the API)', () => {
  it('writes a clear with trigger and estimator null, whatever policy it clears and estimator the command carries', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ESTIMATORS), fc.constantFrom(...ESTIMATORS), fc.boolean(), (setIn, clearWith, withTrigger) => {
        const set = written(decideSetPolicy(command(slidingWindow, setIn, withTrigger ? overTwoTurns : null), null, NOW));
        given(user('u1'), policyEvent(set), user('u2'))
          .when((state) => decideSetPolicy(command(null, clearWith), state, NOW))
          .then((decision) => {
            const data = written(decision);
            expect(data).toEqual({ strategy: null, trigger: null, estimator: null, setAt: NOW.now.toISOString() });
            // What the API answers for that event is what the event holds.
            const answer = policyAnswer('s', { data, revision: 3n }, 3n);
            expect([answer.strategy, answer.trigger, answer.estimator]).toEqual([data.strategy, data.trigger, data.estimator]);
          });
      }),
    );
  });

  it('still writes a policy set with its trigger and estimator', () => {
    for (const estimator of ESTIMATORS)
      given(user('u1'))
        .when((state) => decideSetPolicy(command(slidingWindow, estimator, overTwoTurns), state, NOW))
        .then((decision) => expect(written(decision)).toMatchObject({ strategy: slidingWindow, trigger: overTwoTurns, estimator }));
  });

  it('answers a clear sent again over a clear written without an estimator by that event, writing nothing', () => {
    const set = written(decideSetPolicy(command(slidingWindow, 'chars'), null, NOW));
    const clear = written(decideSetPolicy(command(null, 'cl100k_base'), stateOf([policyEvent(set)]), NOW));
    given(policyEvent(set), policyEvent(clear), user('u1'))
      .when((state) => decideSetPolicy(command(null, 'cl100k_base'), state, NOW))
      .then((decision) => expect(decision).toMatchObject({ kind: 'unchanged', revision: 1n }));
  });
});

describe('a log written before: a clear holding an estimator (or a trigger) reads as it did', () => {
  const set: PolicySetData = { strategy: slidingWindow, trigger: overTwoTurns, estimator: 'chars', setAt: '2026-12-01T00:00:00.000Z' };
  const oldClears: Array<[string, PolicySetData]> = [
    ['the default estimator (builds before 2026-12-05)', { strategy: null, trigger: null, estimator: 'cl100k_base', setAt: '2026-12-02T00:00:00.000Z' }],
    [
      'a trigger and estimator sent beside it (builds before 2026-12-01)',
      { strategy: null, trigger: overTwoTurns, estimator: 'o200k_base', setAt: '2026-11-30T00:00:00.000Z' },
    ],
  ];

  it.each(oldClears)('with %s: the event stays as written, and the session has no policy', (_, oldClear) => {
    const log = [user('u1'), policyEvent(set), user('u2'), policyEvent(oldClear), user('u3')];
    const state = stateOf(log)!;
    // The fold keeps the event as written (no read model or time travel changes what the log says) ...
    expect(state.policy).toEqual(oldClear);
    expect(state.policyRevision).toBe(3n);
    // ... and reads it as a clear: the API answers no policy, the clear again writes nothing,
    expect(policyAnswer('s', { data: state.policy!, revision: 3n }, 4n)).toEqual({
      sessionId: 's',
      strategy: null,
      trigger: null,
      estimator: null,
      setAt: oldClear.setAt,
      revision: '3',
      // written before policy events named who wrote them (newcomer ncui74 F1)
      requestedBy: null,
    });
    given(...log)
      .when((s) => decideSetPolicy(command(null, 'cl100k_base'), s, NOW))
      .then((decision) => expect(decision).toMatchObject({ kind: 'unchanged', revision: 3n }));
    // a compaction without a strategy is refused (no policy in force),
    given(...log)
      .when((s) =>
        compactionOn(
          { type: 'CompactSession', tenantId: 't', sessionId: 's', strategy: null, trigger: null, estimator: null, dryRun: false, origin: 'command' },
          s,
        ),
      )
      .thenThrows(InvalidRequestError, 'invalid_parameter');
    // and setting the policy again (its estimator that of the old clear) is a change.
    given(...log)
      .when((s) => decideSetPolicy(command(slidingWindow, 'cl100k_base'), s, NOW))
      .then((decision) => expect(written(decision)).toMatchObject({ strategy: slidingWindow, trigger: null, estimator: 'cl100k_base' }));
  });
});
