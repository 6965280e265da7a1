/**
 * DESIGN §4 ("If the stream moved on in the meantime, the plan is re-checked against the new
 * state"): the decision of a pass is appended only onto a state that still authorises it — the
 * same life of the session's stream and, for an automatic pass (DESIGN §3.5: run by the session's
 * policy), the policy that fired it still in force. `passAuthority` is that re-check; the handler
 * applies it on every path (before planning, after an erasure during the summarizer call, before a
 * rebase onto new appends).
 */
import { parseStrategy, parseTrigger } from '@lib/compaction';
import { POLICY_SET, type PolicySetData } from '../events/session-stream-events';
import type { SessionWindowState } from '../domain/session-window';
import { passAuthority } from './compaction-decider';
import { compactCommand } from './testing/compaction-spec';
import { given, stateOf, type GivenEvent } from './testing/decider-spec';
import { user } from './testing/session-events';

const strategy = { type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 };
const trigger = parseTrigger({ type: 'turn-count', maxTurns: 2 });
const policySet = (data: Partial<PolicySetData> = {}): GivenEvent => ({
  type: POLICY_SET,
  data: { strategy: parseStrategy(strategy), trigger, estimator: 'chars', setAt: '2026-12-04T00:00:00.000Z', ...data },
});
const auto = compactCommand(strategy, { trigger, origin: 'auto' });
const commanded = compactCommand(strategy, { trigger });
const history: GivenEvent[] = [user('m0'), policySet(), user('m1'), user('m2'), user('m3')];
/** The state the pass began on: the session's policy fired it. */
const firedOn = stateOf(history)!;
/** `state` as another life of the stream (erased, then written again from revision `from`). */
const anotherLife = (state: SessionWindowState, from: bigint): SessionWindowState => ({ ...state, incarnation: from });

describe('a pass outcome is appended only onto a state that still authorises it (DESIGN §4, §3.5)', () => {
  it('given more turns appended while the model ran, when the automatic pass is re-checked, then it is authorised (and rebased)', () => {
    given(...history, user('m4'), user('m5'))
      .when((state) => passAuthority(auto, firedOn, state!))
      .then((authority) => expect(authority).toBe('authorised'));
  });

  it('given the policy turned off while the model ran, when the automatic pass is re-checked, then it is abandoned', () => {
    given(...history, policySet({ strategy: null, trigger: null }))
      .when((state) => passAuthority(auto, firedOn, state!))
      .then((authority) => expect(authority).toBe('policy-changed'));
  });

  it('given the policy replaced while the model ran, when the old policy pass is re-checked, then it is abandoned', () => {
    given(...history, policySet({ strategy: parseStrategy({ type: 'sliding-window', maxEvents: 4 }) }))
      .when((state) => passAuthority(auto, firedOn, state!))
      .then((authority) => expect(authority).toBe('policy-changed'));
  });

  it('given the same policy set again while the model ran, when the automatic pass is re-checked, then it is abandoned (another policy event: its pass is a new one)', () => {
    given(...history, policySet())
      .when((state) => passAuthority(auto, firedOn, state!))
      .then((authority) => expect(authority).toBe('policy-changed'));
  });

  it('given the policy in force is not the command’s, when an automatic pass is about to plan, then it is abandoned', () => {
    given(...history)
      .when((state) => passAuthority(compactCommand({ type: 'sliding-window', maxEvents: 4 }, { trigger, origin: 'auto' }), state!, state!))
      .then((authority) => expect(authority).toBe('policy-changed'));
  });

  it('given the session erased and written again with the same ids while the model ran, when either pass is re-checked, then it is abandoned', () => {
    given(user('m0'), user('m1'), user('m2'), user('m3'))
      .when((state) => [auto, commanded].map((command) => passAuthority(command, firedOn, anotherLife(state!, 5n))))
      .then((authorities) => expect(authorities).toEqual(['erased', 'erased']));
  });

  it('given the policy turned off or replaced, when a commanded pass (its own strategy) is re-checked, then it is authorised', () => {
    given(...history, policySet({ strategy: null, trigger: null }))
      .when((state) => passAuthority(commanded, firedOn, state!))
      .then((authority) => expect(authority).toBe('authorised'));
  });
});
