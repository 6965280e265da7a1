/**
 * The rule for a client's exact `expectedRevision` on an append (README "Optimistic concurrency").
 *
 * A client sends the revision of the session's last event it saw, to be refused when another
 * writer got in first. The service writes events of its own to the same stream: a compaction's
 * decisions (the archive, the summary, the completion or failure record), most often from
 * auto-compaction right after the client's own append. They change what is archived and
 * summarized, never the conversation, and the client cannot see them coming, so they do not count
 * against its expected revision (DESIGN §4: appends from clients never wait for a compaction). A
 * conversation event or a policy change after it does count: that is another writer.
 */
import { COMPACTION_COMPLETED, COMPACTION_FAILED, EVENTS_ARCHIVED, SUMMARY_INSERTED } from '../events/session-stream-events';

const COMPACTION_DECISIONS: ReadonlySet<string> = new Set([EVENTS_ARCHIVED, SUMMARY_INSERTED, COMPACTION_COMPLETED, COMPACTION_FAILED]);

/** Most events after a client's expected revision that {@link holdsAcrossCompactions} is asked to look at (a few passes' decisions). */
export const MAX_EVENTS_AFTER_EXPECTED = 256;

/**
 * Whether the client's `expected` revision still holds on a session that moved on. `stored`: the
 * session's events read from revision `expected` (inclusive) to its current last one, in order
 * (`type`, `revision` bigint). True when the event at `expected` is still there (the session was
 * not erased and written again since: revisions are never reused) and every later event is a
 * compaction's decision; false otherwise (also when `stored` is empty or holds no later event).
 */
export function holdsAcrossCompactions(expected: bigint, stored: readonly { type: string; revision: bigint }[]): boolean {
  if (stored.length < 2 || stored[0].revision !== expected) return false;
  return stored.slice(1).every((e) => COMPACTION_DECISIONS.has(e.type));
}
