/**
 * Compacting by the session's stored policy (newcomer ncsdkuser F3): given the session's past
 * events (a policy among them), when a compaction without a strategy is decided, then it is the
 * decision of the policy's strategy, trigger and estimator passed explicitly, marked as from the
 * policy; without a policy it is refused and nothing is decided.
 */
import { parseStrategy } from '@lib/compaction';
import type { EventData } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  POLICY_SET,
  type CompactionCompletedData,
  type CompactionFailedData,
  type PolicySetData,
} from '../events/session-stream-events';
import { InvalidRequestError, SessionNotFoundError } from '../errors';
import { compactionIdentity, type CompactSession } from './compaction-decider';
import {
  compactionOn,
  noPolicyMessage,
  policyRevisionOf,
  policySourceFields,
  policyStillInForce,
  sharedAnswerTo,
  type CompactionRequest,
} from './compaction-by-policy';
import { given, stateOf } from './testing/decider-spec';
import { compact, compactCommand, summaryFailure } from './testing/compaction-spec';
import { reply, user } from './testing/session-events';

const threeTurns = [user('u1'), reply('a1'), user('u2'), reply('a2'), user('u3'), reply('a3')];
const turnWindow = { type: 'turn-window' as const, maxTurns: 1 };
const overOneTurn = { type: 'turn-count' as const, maxTurns: 1 };

/** A policy event: `strategy` (null clears), `trigger`, estimator `chars`. */
const policyEvent = (strategy: PolicySetData['strategy'], trigger: PolicySetData['trigger'] = null): { type: string; data: PolicySetData } => ({
  type: POLICY_SET,
  data: { strategy, trigger, estimator: 'chars', setAt: '2026-12-05T00:00:00.000Z' },
});

/** A compaction command without a strategy (session `t`/`s`, as `compactCommand`'s). */
const byPolicy = (over: Partial<CompactionRequest> = {}): CompactionRequest => ({
  type: 'CompactSession',
  tenantId: 't',
  sessionId: 's',
  strategy: null,
  trigger: null,
  estimator: null,
  dryRun: false,
  origin: 'command',
  ...over,
});

/** The policy's parameters passed explicitly (what an agent had to copy from `GET …/policy`). */
const explicit = (over: Partial<CompactSession> = {}) => compactCommand(turnWindow, { trigger: overOneTurn, estimator: 'chars', ...over });

/** The decision events without where their parameters came from (the one difference between the two ways of asking). */
const withoutSource = (events: readonly EventData[]) =>
  events.map((e) => {
    if (e.type !== COMPACTION_COMPLETED) return e;
    const { from: _from, policyRevision: _revision, ...data } = e.data as CompactionCompletedData;
    return { ...e, data };
  });

describe('compaction by the stored policy: the decision of the policy passed explicitly (DESIGN §3.4, §3.5, §4)', () => {
  // The policy event at revision 0, then three turns: the trigger (more than one turn) fires, the strategy keeps one turn.
  const past = [policyEvent(turnWindow, overOneTurn), ...threeTurns];

  it('given a policy, when compacting without a strategy, then the decision equals the one with the policy passed explicitly, marked from the policy', () => {
    const state = stateOf(past);
    const asked = compact(compactionOn(byPolicy(), state))(state);
    const copied = compact(explicit())(stateOf(past));
    expect(asked.events.length).toBeGreaterThan(0);
    expect(withoutSource(asked.events)).toEqual(copied.events);
    const completed = asked.events.find((e) => e.type === COMPACTION_COMPLETED)!.data as CompactionCompletedData;
    expect(completed).toMatchObject({
      from: 'policy',
      policyRevision: '0',
      origin: 'command',
      strategy: { type: 'turn-window', maxTurns: 1 },
      trigger: overOneTurn,
    });
    expect(copied.events.find((e) => e.type === COMPACTION_COMPLETED)!.data).not.toHaveProperty('from');
    expect(asked.answer).toEqual({ ...copied.answer, from: 'policy', policyRevision: '0' });
    expect(asked.answer).toMatchObject({ outcome: 'compacted', archived: ['u1', 'a1', 'u2', 'a2'], kept: ['u3', 'a3'], estimator: 'chars' });
  });

  it("is the same compaction as the explicit one and as the policy's automatic pass on that revision (one id, one shared pass)", () => {
    const state = stateOf(past)!;
    const identity = compactionIdentity(compactionOn(byPolicy(), state), state.revision!, state.incarnation);
    expect(identity).toEqual(compactionIdentity(explicit(), state.revision!, state.incarnation));
    expect(identity.passKey).toBe(compactionIdentity(explicit({ origin: 'auto' }), state.revision!, state.incarnation).passKey);
  });

  it("the policy's trigger gates it: not firing, not-triggered and nothing appended, as the explicit command", () => {
    const oneTurn = [policyEvent(turnWindow, overOneTurn), user('u1'), reply('a1')];
    given(...oneTurn)
      .when((state) => compact(compactionOn(byPolicy(), state))(state))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toEqual({ ...compact(explicit())(stateOf(oneTurn)).answer, from: 'policy', policyRevision: '0' });
        expect(answer).toMatchObject({ outcome: 'not-triggered', recorded: false });
      });
  });

  it('a dry run by policy answers the explicit dry run, appends nothing', () => {
    given(...past)
      .when((state) => compact(compactionOn(byPolicy({ dryRun: true }), state))(state))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toEqual({ ...compact(explicit({ dryRun: true }))(stateOf(past)).answer, from: 'policy', policyRevision: '0' });
      });
  });

  it('takes the policy in force: the latest policy event, its revision recorded', () => {
    const replaced = [...past, policyEvent({ type: 'sliding-window', maxEvents: 4 })];
    given(...replaced)
      .when((state) => compact(compactionOn(byPolicy(), state))(state))
      .then(({ events, answer }) => {
        const completed = events.find((e) => e.type === COMPACTION_COMPLETED)!.data as CompactionCompletedData;
        expect(completed).toMatchObject({ strategy: { type: 'sliding-window', maxEvents: 4 }, trigger: null, from: 'policy', policyRevision: '7' });
        expect(answer).toMatchObject({ outcome: 'compacted', kept: ['u2', 'a2', 'u3', 'a3'], from: 'policy', policyRevision: '7' });
      });
  });

  it('a command that names its strategy is decided as it is: compactionOn returns it unchanged, never the policy', () => {
    const state = stateOf(past);
    const command = compactCommand({ type: 'sliding-window', maxEvents: 2 });
    expect(compactionOn(command, state)).toBe(command);
    expect(compact(command)(state).events.find((e) => e.type === COMPACTION_COMPLETED)!.data).not.toHaveProperty('from');
  });
});

describe('compaction by policy on a session without one: 400 invalid_parameter naming strategy, nothing decided', () => {
  it.each([
    ['no policy ever set', threeTurns],
    ['the policy cleared ({"strategy": null})', [policyEvent(turnWindow, overOneTurn), ...threeTurns, policyEvent(null)]],
  ])('given %s, when compacting without a strategy, then refused with no events', (_name, past) => {
    given(...past)
      .when((state) => compact(compactionOn(byPolicy(), state))(state))
      .thenThrows(InvalidRequestError, 'invalid_parameter');
    try {
      compactionOn(byPolicy(), stateOf(past));
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect({ parameter: (err as InvalidRequestError).parameter, message: (err as Error).message }).toEqual({
        parameter: 'strategy',
        message: noPolicyMessage('s'),
      });
    }
  });

  it('says what to do: send a strategy, or set a policy', () => {
    expect(noPolicyMessage('demo')).toBe(
      'strategy: is required: session "demo" has no auto-compaction policy to compact by (never set, or cleared); send a strategy, e.g. {"strategy": {"type": "token-count", "maxTokens": 4000}}, or set the policy first (PUT …/policy, or the NATS policy command, with a strategy) and compact without one',
    );
  });

  it('given no events, then 404 session_not_found first (as every compaction)', () => {
    given()
      .when((state) => compactionOn(byPolicy(), state))
      .thenThrows(SessionNotFoundError, 'session_not_found');
  });
});

describe('compaction by policy, the policy replaced concurrently: decided on the policy of the loaded revision, planned again on a change', () => {
  const p1 = policyEvent(turnWindow, overOneTurn);
  const loadedPast = [p1, ...threeTurns];
  const loaded = stateOf(loadedPast)!;
  const decided = compactionOn(byPolicy(), loaded);

  it("the pass planned on the loaded revision uses that revision's policy (and records its revision)", () => {
    expect(decided).toMatchObject({ strategy: turnWindow, trigger: overOneTurn, estimator: 'chars', byPolicy: { revision: 0n } });
    expect(compact(decided)(loaded).answer).toMatchObject({ outcome: 'compacted', kept: ['u3', 'a3'], policyRevision: '0' });
  });

  it('the stream moved on by a policy replacing it: no longer in force (the handler does not rebase; its append at the loaded revision conflicted), planned again with the new one', () => {
    const p2 = policyEvent({ type: 'sliding-window', maxEvents: 2 });
    const current = stateOf([...loadedPast, p2])!;
    expect(policyStillInForce(decided, current)).toBe(false);
    const again = compactionOn(byPolicy(), current);
    expect(again).toMatchObject({ strategy: { type: 'sliding-window', maxEvents: 2 }, trigger: null, byPolicy: { revision: 7n } });
    const run = compact(again)(current);
    expect(run.answer).toMatchObject({ outcome: 'compacted', kept: ['u3', 'a3'], from: 'policy', policyRevision: '7' });
    expect(compactionIdentity(again, current.revision!, current.incarnation).compactionId).not.toBe(
      compactionIdentity(decided, loaded.revision!, loaded.incarnation).compactionId,
    );
  });

  it('the same policy set again (same parameters, a new event) or cleared: not in force either; cleared, the pass is refused', () => {
    expect(policyStillInForce(decided, stateOf([...loadedPast, p1])!)).toBe(false);
    const cleared = stateOf([...loadedPast, policyEvent(null)]);
    expect(policyStillInForce(decided, cleared!)).toBe(false);
    expect(() => compactionOn(byPolicy(), cleared)).toThrow(InvalidRequestError);
  });

  it('the stream moved on by appends only: the policy is still in force (the pass may be rebased)', () => {
    expect(policyStillInForce(decided, stateOf([...loadedPast, user('u4')])!)).toBe(true);
  });

  it('a command with its own parameters is never concerned by a policy change', () => {
    const named = explicit();
    expect(policyStillInForce(named, stateOf([...loadedPast, policyEvent(null)])!)).toBe(true);
  });
});

describe("an answer shared between identical passes says where each request's parameters came from", () => {
  type Answer = { outcome: 'compacted'; from?: 'policy'; policyRevision?: string };
  const answer: Answer = { outcome: 'compacted', from: 'policy', policyRevision: '3' };
  const unmarked: Answer = { outcome: 'compacted' };
  const automatic: Answer = { outcome: 'compacted', policyRevision: '3' };

  it('a request by policy sharing an explicit pass gets from and policyRevision of its own resolution', () => {
    expect(sharedAnswerTo(unmarked, { byPolicy: { revision: 3n }, origin: 'command' })).toEqual(answer);
    expect(policySourceFields({ byPolicy: { revision: null }, origin: 'command' })).toEqual({ from: 'policy' });
  });

  it('a request naming its strategy sharing a pass by policy (or an automatic one) gets neither field', () => {
    expect(sharedAnswerTo(answer, { origin: 'command' })).toEqual(unmarked);
    expect(sharedAnswerTo(automatic, { origin: 'command' })).toEqual(unmarked);
  });

  it("a request by policy sharing a pass by policy, or an automatic pass, keeps the pass's revision (it may have been planned again on a newer policy)", () => {
    expect(sharedAnswerTo({ ...answer, policyRevision: '9' }, { byPolicy: { revision: 3n }, origin: 'command' })).toEqual({ ...answer, policyRevision: '9' });
    expect(sharedAnswerTo({ ...automatic, policyRevision: '9' }, { byPolicy: { revision: 3n }, origin: 'command' })).toEqual({
      ...answer,
      policyRevision: '9',
    });
  });

  it('an automatic pass sharing a pass by policy says no from (its origin says it), the revision it was decided on', () => {
    expect(sharedAnswerTo(answer, { byPolicy: { revision: 3n }, origin: 'auto' })).toEqual(automatic);
    expect(policySourceFields({ byPolicy: { revision: 3n }, origin: 'auto' })).toEqual({ policyRevision: '3' });
  });
});

describe('an automatic pass records the revision of the policy it was decided on, by the rule of a compaction by policy (audit: which policy version ran)', () => {
  const p1 = policyEvent(turnWindow, overOneTurn);
  /** The automatic command the scheduler sends: the policy's parameters, origin auto. */
  const automatic = (over: Partial<CompactSession> = {}) => explicit({ origin: 'auto', ...over });
  const completedOf = (events: readonly EventData[]) => events.find((e) => e.type === COMPACTION_COMPLETED)!.data as CompactionCompletedData;

  it('given the policy at revision 0, when its automatic pass is decided, then its decision records policyRevision "0", no from (origin auto says it)', () => {
    given(p1, ...threeTurns)
      .when((state) => compact(compactionOn(automatic(), state))(state))
      .then(({ events, answer }) => {
        const completed = completedOf(events);
        expect(completed).toMatchObject({ origin: 'auto', policyRevision: '0', strategy: turnWindow, trigger: overOneTurn });
        expect(completed).not.toHaveProperty('from');
        expect(answer).toMatchObject({ outcome: 'compacted', policyRevision: '0' });
        expect(answer).not.toHaveProperty('from');
      });
  });

  it('is the decision of the compaction by policy on that state but for its origin and from: the same revision, by the same rule', () => {
    const state = stateOf([p1, ...threeTurns])!;
    const auto = compact(compactionOn(automatic(), state))(state);
    const commanded = compact(compactionOn(byPolicy(), state))(state);
    const { origin: _o1, ...autoData } = completedOf(auto.events);
    const { origin: _o2, from, ...commandData } = completedOf(commanded.events);
    expect(from).toBe('policy');
    expect(autoData).toEqual(commandData);
  });

  it('takes the policy in force on the state it is decided on: the latest policy event with its parameters', () => {
    const sliding = { type: 'sliding-window' as const, maxEvents: 4 };
    // replaced, then set back to the first parameters: the pass runs on the event at revision 8
    const past = [p1, ...threeTurns, policyEvent(sliding), policyEvent(turnWindow, overOneTurn)];
    given(...past)
      .when((state) => compact(compactionOn(automatic(), state))(state))
      .then(({ events }) => expect(completedOf(events)).toMatchObject({ origin: 'auto', policyRevision: '8' }));
  });

  it('a failed automatic pass records it too', () => {
    const summarizing = { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 };
    const state = stateOf([policyEvent(parseStrategy(summarizing)), ...threeTurns])!;
    const command = compactionOn(compactCommand(summarizing, { origin: 'auto' }), state);
    const { events } = compact(command, () => summaryFailure('blank reply', 'invalid_reply'))(state);
    const failed = events.find((e) => e.type === COMPACTION_FAILED)!.data as CompactionFailedData;
    expect(failed).toMatchObject({ origin: 'auto', policyRevision: '0' });
    expect(failed).not.toHaveProperty('from');
  });

  it('records none when the state does not know the revision (its last snapshot predates recorded policy revisions), or when the policy in force is not its own', () => {
    const state = stateOf([p1, ...threeTurns])!;
    expect(compactionOn(automatic(), { ...state, policyRevision: null })).toMatchObject({ byPolicy: { revision: null } });
    expect(completedOf(compact(compactionOn(automatic(), { ...state, policyRevision: null }))(state).events)).not.toHaveProperty('policyRevision');
    expect(policyRevisionOf(automatic(), state)).toBe(0n);
    expect(policyRevisionOf(automatic({ trigger: null }), state)).toBeNull();
    expect(policyRevisionOf(automatic(), stateOf([p1, ...threeTurns, policyEvent(null)])!)).toBeNull();
  });

  it('a command naming its strategy records none, even with the parameters of the policy in force', () => {
    const state = stateOf([p1, ...threeTurns])!;
    const named = explicit();
    expect(compactionOn(named, state)).toBe(named);
    expect(completedOf(compact(named)(state).events)).not.toHaveProperty('policyRevision');
  });
});
