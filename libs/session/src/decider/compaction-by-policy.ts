/**
 * A compaction asked without a strategy: compact by the session's stored auto-compaction policy
 * (newcomer ncsdkuser F3). The policy is read from the state the pass is decided on, never from a
 * separate read, so the decision and the policy it names are of one revision of the log.
 */
import type { Strategy, Trigger } from '@lib/compaction';
import type { EstimatorName } from '../events/session-stream-events';
import type { SessionWindowState } from '../domain/session-window';
import { InvalidRequestError, SessionNotFoundError } from '../errors';
import { compactionParamsKey } from '../write-side/compaction-params';
import type { CompactSession } from './compaction-decider';

/**
 * A compaction command as a transport gives it, before it is decided on a state: with its own
 * parameters (`strategy` set; `estimator` set too), or by the session's stored policy (`strategy`,
 * `trigger` and `estimator` all null: the policy in force on the state the pass is decided on
 * gives all three, see {@link compactionOn}). The other fields are {@link CompactSession}'s.
 */
export interface CompactionRequest extends Omit<CompactSession, 'strategy' | 'trigger' | 'estimator' | 'byPolicy'> {
  strategy: Strategy | null;
  trigger: Trigger | null;
  estimator: EstimatorName | null;
}

/** The message of the 400 for a compaction by policy on a session without one (`sessionId` in it, quoted). */
export function noPolicyMessage(sessionId: string): string {
  return (
    `strategy: is required: session ${JSON.stringify(sessionId)} has no auto-compaction policy to compact by (never set, or cleared); ` +
    'send a strategy, e.g. {"strategy": {"type": "token-count", "maxTokens": 4000}}, or set the policy first (PUT …/policy, or the NATS policy command, with a strategy) ' +
    'and compact without one'
  );
}

/**
 * The compaction to decide on `state` for `request`: `request` itself when it names a strategy
 * (and is commanded); else (`strategy` null) the same command with the strategy, trigger and
 * estimator of the policy in force on `state`, and `byPolicy.revision` the revision of that
 * policy's event (null when the state does not know it: a log whose last snapshot predates
 * recorded policy revisions). An automatic pass (origin `auto`: the scheduler took its parameters
 * from the policy) is its policy's pass: the same command with `byPolicy.revision` the revision of
 * the policy in force on `state` ({@link policyRevisionOf}), so its decision records it as a
 * compaction by policy does. Pure, O(1).
 * @throws SessionNotFoundError when the session has no events (`state` null or without a revision).
 * @throws InvalidRequestError (400 `invalid_parameter` naming `strategy`, {@link noPolicyMessage})
 *   when the request names no strategy and the state has no policy in force (never set, or
 *   cleared with `{"strategy": null}`): nothing is decided, nothing written.
 * @throws Error when `request` names no strategy but a trigger or an estimator (the transports
 *   refuse that before: `compactCommandFrom`), or a strategy without an estimator.
 */
export function compactionOn(request: CompactionRequest, state: SessionWindowState | null): CompactSession {
  if (!state || state.revision === null) throw new SessionNotFoundError(request.sessionId);
  if (request.strategy !== null) {
    if (request.estimator === null) throw new Error('a compaction with a strategy needs an estimator');
    const named = request as CompactSession;
    return named.origin === 'auto' ? { ...named, byPolicy: { revision: policyRevisionOf(named, state) } } : named;
  }
  if (request.trigger !== null || request.estimator !== null) throw new Error('a compaction by policy takes its trigger and estimator from the policy');
  const policy = state.policy;
  if (!policy?.strategy) throw new InvalidRequestError('strategy', noPolicyMessage(request.sessionId), 'invalid_parameter');
  return {
    ...request,
    strategy: policy.strategy,
    trigger: policy.trigger,
    estimator: policy.estimator,
    byPolicy: { revision: state.policyRevision },
  };
}

/**
 * The revision (of its event) of the policy in force on `state` when its strategy, trigger and
 * estimator are `command`'s: the policy an automatic pass of those parameters is decided on. Null
 * when the state does not know it (a snapshot older than recorded policy revisions), and when that
 * policy is not in force there (replaced or cleared since the scheduler read it: `passAuthority`
 * abandons such a pass, it writes no decision). Pure, O(1) (a parameters key of each side).
 */
export function policyRevisionOf(
  command: Pick<CompactSession, 'strategy' | 'trigger' | 'estimator'>,
  state: Pick<SessionWindowState, 'policy' | 'policyRevision'>,
): bigint | null {
  const policy = state.policy;
  if (!policy?.strategy) return null;
  const inForce =
    compactionParamsKey(policy.strategy, policy.trigger, policy.estimator) === compactionParamsKey(command.strategy, command.trigger, command.estimator);
  return inForce ? state.policyRevision : null;
}

/**
 * Whether the pass of `command` (as {@link compactionOn} resolved it on an earlier state) may be
 * written onto `state`: always for a command with its own parameters; for one by policy, when the
 * policy it took is still the one in force on `state` (the same policy event, the same
 * parameters). When it is not (the policy was replaced or cleared since the pass was planned), the
 * pass is not rebased: it is planned again on `state` with the policy in force there (or refused
 * when none is). Pure, O(1).
 */
export function policyStillInForce(command: CompactSession, state: Pick<SessionWindowState, 'policy' | 'policyRevision'>): boolean {
  if (!command.byPolicy) return true;
  const policy = state.policy;
  if (!policy?.strategy || state.policyRevision !== command.byPolicy.revision) return false;
  return compactionParamsKey(policy.strategy, policy.trigger, policy.estimator) === compactionParamsKey(command.strategy, command.trigger, command.estimator);
}

/**
 * The fields an answer or a decision carries about where its parameters came from, the one rule
 * for commanded and automatic passes: `policyRevision` (the policy event's revision, decimal text;
 * left out when unknown) for a pass decided on the stored policy (`byPolicy`, set by
 * {@link compactionOn}), with `from: "policy"` when it was commanded without a strategy (an
 * automatic pass says it by its origin `auto`); nothing for a command that named its strategy. Pure.
 */
export function policySourceFields(command: Pick<CompactSession, 'byPolicy' | 'origin'>): { from?: 'policy'; policyRevision?: string } {
  if (!command.byPolicy) return {};
  const { revision } = command.byPolicy;
  return { ...(command.origin === 'auto' ? {} : { from: 'policy' as const }), ...(revision !== null ? { policyRevision: revision.toString() } : {}) };
}

/**
 * `answer`, the answer of a pass another identical command ran (single flight: the same
 * parameters on the same revision), as the answer to `command`: its `from` and `policyRevision`
 * say where `command`'s own parameters came from (the pass that ran may have named them, or taken
 * them from the policy, or been the policy's automatic pass), by {@link policySourceFields}. A
 * command on the policy keeps the pass's `policyRevision` when that pass was on the policy too
 * (commanded without a strategy, or automatic: it may have been planned again on a newer policy). Pure.
 */
export function sharedAnswerTo<A extends { from?: 'policy'; policyRevision?: string }>(answer: A, command: Pick<CompactSession, 'byPolicy' | 'origin'>): A {
  const { from: _from, policyRevision, ...rest } = answer;
  if (!command.byPolicy) return rest as A;
  return { ...rest, ...policySourceFields(command), ...(policyRevision !== undefined ? { policyRevision } : {}) } as A;
}
