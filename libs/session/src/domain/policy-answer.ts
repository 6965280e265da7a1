import type { Strategy, Trigger } from '@lib/compaction';
import type { EstimatorName, PolicySetData } from '../events/session-stream-events';
import { requestedByOf, type RequestedBy } from '../events/requested-by';

/**
 * A session's auto-compaction policy as the API shows it, the one shape of `GET …/policy` and of
 * the answer to `PUT …/policy` (HTTP and NATS), which a `PUT` accepts back as it is.
 *
 * - `strategy`, `trigger`, `estimator`: the policy in force; all three null when none is (never
 *   set, or cleared). A policy in force has an estimator; its trigger is null when it always fires.
 * - `setAt`: when the policy event in force was written (absent when no policy was ever set).
 * - `revision`: the stream revision of that event (decimal string); when no policy was ever set,
 *   the session's revision.
 * - `position`: the global position of that event (decimal string, for `minPosition`); when no
 *   policy was ever set, the position of the session's last event in the answer to `PUT …/policy`
 *   (always present there), absent in `GET …/policy`.
 * - `requestedBy`: who wrote that event, set or clear (API key label, request or command id,
 *   transport; never the key); null when no policy was ever set, and for an event written before
 *   2026-12-07 or by a caller that named none. A PUT of the policy already in force writes
 *   nothing and answers the setter's.
 */
export interface PolicyAnswer {
  sessionId: string;
  strategy: Strategy | null;
  trigger: Trigger | null;
  estimator: EstimatorName | null;
  setAt?: string;
  revision: string;
  position?: string;
  requestedBy: RequestedBy | null;
}

/** The policy event in force: its payload, stream revision and (when known) global position. */
export interface RecordedPolicy {
  data: PolicySetData;
  revision: bigint;
  position?: bigint;
}

/**
 * The {@link PolicyAnswer} of session `sessionId` whose last policy event is `recorded` (null when
 * none was ever written; then `sessionRevision`, the session's revision, is answered, with
 * `sessionPosition`, the global position of the session's last event, when given). A recorded
 * clear (strategy null) shows trigger and estimator null, whatever the event holds: the one rule
 * every transport and both routes answer with. `requestedBy` is the event's, its known fields only
 * (`requestedByOf`: null for an event without one).
 */
export function policyAnswer(sessionId: string, recorded: RecordedPolicy | null, sessionRevision: bigint, sessionPosition?: bigint): PolicyAnswer {
  if (!recorded)
    return {
      sessionId,
      strategy: null,
      trigger: null,
      estimator: null,
      revision: sessionRevision.toString(),
      ...(sessionPosition !== undefined ? { position: sessionPosition.toString() } : {}),
      requestedBy: null,
    };
  const { data } = recorded;
  const inForce = data.strategy !== null;
  return {
    sessionId,
    strategy: data.strategy,
    trigger: inForce ? data.trigger : null,
    estimator: inForce ? data.estimator : null,
    setAt: data.setAt,
    revision: recorded.revision.toString(),
    ...(recorded.position !== undefined ? { position: recorded.position.toString() } : {}),
    requestedBy: requestedByOf(data.requestedBy),
  };
}
