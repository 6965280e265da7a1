import { POLICY_SET, type PolicyInForceData, type PolicySetData } from '../../events/session-stream-events';
import type { RecordedPolicy } from '../../domain/policy-answer';

/**
 * A policy in force (one whose strategy is set), as the session list shows it: the policy alone,
 * without who set it (`requestedBy`, which `GET …/policy` answers).
 */
export type ActivePolicy = Omit<PolicyInForceData, 'requestedBy'>;
import type { ReadModelStore } from '../read-model-store';

/**
 * The auto-compaction policy in force for the session stream `sessionKey`: the payload of its last
 * `AutoCompactionPolicySet` event, or null when none was set or the last one cleared it
 * (`strategy: null`); its `strategy`, `trigger`, `estimator` and `setAt` only ({@link ActivePolicy}).
 * Uses the `session_log_policies` partial index: one row read.
 */
export function policyOf(store: ReadModelStore, sessionKey: string): ActivePolicy | null {
  const row = store.db
    .prepare(`SELECT data_json AS dataJson FROM session_log WHERE session_key = ? AND type = '${POLICY_SET}' ORDER BY revision DESC LIMIT 1`)
    .get(sessionKey) as { dataJson: string } | undefined;
  if (!row) return null;
  const policy = JSON.parse(row.dataJson) as PolicySetData;
  if (!policy.strategy) return null;
  const { strategy, trigger, estimator, setAt } = policy;
  return { strategy, trigger, estimator, setAt };
}

/**
 * The last `AutoCompactionPolicySet` event of the session stream `sessionKey` (a clear included):
 * its payload, stream revision and global position (bigints); null when none was written. One row
 * read through the `session_log_policies` partial index.
 */
export function lastPolicyEventOf(store: ReadModelStore, sessionKey: string): RecordedPolicy | null {
  const row = store.db
    .prepare(
      `SELECT data_json AS dataJson, revision, position FROM session_log WHERE session_key = ? AND type = '${POLICY_SET}' ORDER BY revision DESC LIMIT 1`,
    )
    .safeIntegers(true)
    .get(sessionKey) as { dataJson: string; revision: bigint; position: bigint } | undefined;
  return row ? { data: JSON.parse(row.dataJson) as PolicySetData, revision: row.revision, position: row.position } : null;
}
