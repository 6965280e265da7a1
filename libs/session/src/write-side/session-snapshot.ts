/**
 * Builds the {@link SessionSnapshot} (the write-side state) carried by a compaction's last decision
 * event: the revision ranges that hold the active window after the pass, so a later load reads
 * O(active window + events since) instead of the whole stream (DESIGN §4).
 */
import type { SessionSnapshot } from '../events/session-stream-events';
import type { SessionWindowState } from '../domain/session-window';

/**
 * Collapses sorted revisions into inclusive `[from, to]` runs of consecutive revisions, as decimal
 * strings. `[3n, 4n, 5n, 9n]` → `[['3','5'], ['9','9']]`.
 */
export function revisionRanges(revisions: readonly bigint[]): Array<[string, string]> {
  const sorted = [...revisions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const ranges: Array<[string, string]> = [];
  let start: bigint | null = null;
  let prev: bigint | null = null;
  for (const r of sorted) {
    if (prev !== null && r === prev + 1n) {
      prev = r;
      continue;
    }
    if (start !== null && prev !== null) ranges.push([start.toString(), prev.toString()]);
    start = r;
    prev = r;
  }
  if (start !== null && prev !== null) ranges.push([start.toString(), prev.toString()]);
  return ranges;
}

/**
 * The session snapshot for `after`, the session state once the pass's decisions are applied.
 * `failuresBefore` is the count of consecutive failures before this decision event.
 */
export function buildSnapshot(after: SessionWindowState, failuresBefore: number): SessionSnapshot {
  return {
    keptRanges: revisionRanges([...after.active.values()].map((e) => e.revision)),
    policy: after.policy,
    ...(after.policyRevision !== null ? { policyRevision: after.policyRevision.toString() } : {}),
    consecutiveFailures: failuresBefore,
    ...(after.userId ? { userId: after.userId } : {}),
    ...(after.archivedOpenCalls.size > 0
      ? { archivedOpenCalls: [...after.archivedOpenCalls].map(([id, c]): [string, string, string] => [id, c.compactionId, c.name]) }
      : {}),
  };
}
