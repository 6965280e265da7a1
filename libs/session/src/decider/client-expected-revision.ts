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
 *
 * A resend of a request that was written (same ids, same `expectedRevision`) is not judged by this
 * rule, nor by any rule on the session's state: it answers the original result. Its events are
 * where the rule put them: right after the client's revision and the compactions' decisions that
 * came before the original ({@link expectedRevisionOnLog}).
 */
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  type ConversationEventData,
} from '../events/session-stream-events';

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

/**
 * What a client's exact `expected` revision means on a session whose last event is at `current`
 * (past `expected`):
 * - `holds`: only compactions' decisions came after it (at most {@link MAX_EVENTS_AFTER_EXPECTED}):
 *   the append is checked at `revision` (= `current`) instead;
 * - `resend`: the request was written already: its events (client ids `clientIds`, in order, at
 *   consecutive revisions) follow `expected` and compactions' decisions only (at most
 *   {@link MAX_EVENTS_AFTER_EXPECTED}), as the original's check put them. `after`: the revision
 *   before its first event (the expected revision the original was written at); `revisions`: client
 *   id → stream revision of each of its events;
 * - `stale`: another writer's event (conversation or policy) came after it, or the event at
 *   `expected` is gone (erased and written again), or too many decisions followed it.
 *
 * `stored`: the session's events read forwards from revision `expected` (inclusive) up to
 * `current` or at least {@link MAX_EVENTS_AFTER_EXPECTED} + `clientIds.length` + 1 of them
 * ({@link expectedRevisionReadCount}), in order. Pure.
 */
export function expectedRevisionOnLog(
  expected: bigint,
  current: bigint,
  stored: readonly { type: string; revision: bigint; data: unknown }[],
  clientIds: readonly string[],
): ExpectedRevisionOnLog {
  if (current <= expected || stored.length < 2 || stored[0].revision !== expected) return { kind: 'stale' };
  let next = 1;
  while (next < stored.length && next <= MAX_EVENTS_AFTER_EXPECTED && COMPACTION_DECISIONS.has(stored[next].type)) next++;
  if (next === stored.length)
    return stored[next - 1].revision === current && next - 1 <= MAX_EVENTS_AFTER_EXPECTED ? { kind: 'holds', revision: current } : { kind: 'stale' };
  const resent = eventsWithIdsFrom(stored, next, clientIds);
  return resent ? { kind: 'resend', after: stored[next].revision - 1n, revisions: resent } : { kind: 'stale' };
}

/** See {@link expectedRevisionOnLog}. */
export type ExpectedRevisionOnLog = { kind: 'holds'; revision: bigint } | { kind: 'resend'; after: bigint; revisions: Map<string, bigint> } | { kind: 'stale' };

/** How many events {@link expectedRevisionOnLog} needs, read from `expected` on a session at `current` (past `expected`), for a request of `events` events. */
export function expectedRevisionReadCount(expected: bigint, current: bigint, events: number): number {
  const needed = BigInt(MAX_EVENTS_AFTER_EXPECTED + events);
  return Number((current - expected < needed ? current - expected : needed) + 1n);
}

/**
 * Whether the first events of a session's log are a resend of a request sent with expected revision
 * `no_stream`: `stored`, the stream's first events (at least `clientIds.length`), carry the client
 * ids `clientIds` in order. Client id → stream revision of each when they do, else null. Pure.
 */
export function resentAsFirst(stored: readonly { type: string; revision: bigint; data: unknown }[], clientIds: readonly string[]): Map<string, bigint> | null {
  return eventsWithIdsFrom(stored, 0, clientIds);
}

/** Client id → revision of `stored[from…]` when those are conversation events with the ids `clientIds`, in order, at consecutive revisions; else null. */
function eventsWithIdsFrom(
  stored: readonly { type: string; revision: bigint; data: unknown }[],
  from: number,
  clientIds: readonly string[],
): Map<string, bigint> | null {
  if (clientIds.length === 0 || from + clientIds.length > stored.length) return null;
  const revisions = new Map<string, bigint>();
  for (const [i, id] of clientIds.entries()) {
    const e = stored[from + i];
    if (e.type !== CONVERSATION_EVENT || (e.data as ConversationEventData).event.id !== id || e.revision !== stored[from].revision + BigInt(i)) return null;
    revisions.set(id, e.revision);
  }
  return revisions;
}
