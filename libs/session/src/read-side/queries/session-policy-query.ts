import type { Strategy } from '@lib/compaction';
import { POLICY_SET, type PolicySetData } from '../../events/session-stream-events';

/** A policy in force: one whose strategy is set. */
export type ActivePolicy = PolicySetData & { strategy: Strategy };
import type { ReadModelStore } from '../read-model-store';

/**
 * The auto-compaction policy in force for the session stream `sessionKey`: the payload of its last
 * `AutoCompactionPolicySet` event, or null when none was set or the last one cleared it
 * (`strategy: null`). Uses the `session_log_policies` partial index: one row read.
 */
export function policyOf(store: ReadModelStore, sessionKey: string): ActivePolicy | null {
  const row = store.db
    .prepare(`SELECT data_json AS dataJson FROM session_log WHERE session_key = ? AND type = '${POLICY_SET}' ORDER BY revision DESC LIMIT 1`)
    .get(sessionKey) as { dataJson: string } | undefined;
  if (!row) return null;
  const policy = JSON.parse(row.dataJson) as PolicySetData;
  return policy.strategy ? (policy as ActivePolicy) : null;
}
