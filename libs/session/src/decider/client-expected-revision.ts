/**
 * The rule for a client's exact `expectedRevision` on an append or a policy PUT (docs/http-api.md "Optimistic
 * concurrency"): one rule, {@link clientRevisionOnLog}, for every write that takes one.
 *
 * A client sends the revision of the session's last event it saw, to be refused when another
 * writer got in first. The service writes events of its own to the same stream: a compaction's
 * decisions (the archive, the summary, the completion or failure record), most often from
 * auto-compaction right after the client's own append. They change what is archived and
 * summarized, never the conversation, and the client cannot see them coming, so they do not count
 * against its expected revision (DESIGN §4: appends from clients never wait for a compaction). A
 * conversation event or a policy change after it does count: that is another writer.
 *
 * A resend of a request that was written (same ids, same `expectedRevision`; for a policy PUT: the
 * same policy, still in force) is not judged by this rule, nor by any rule on the session's state:
 * it answers the original result. Its events are where the rule put them: right after the
 * client's revision and the compactions' decisions that came before the original
 * ({@link expectedRevisionOnLog}, {@link policyRevisionOnLog}).
 */
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  POLICY_SET,
  SUMMARY_INSERTED,
  type ConversationEventData,
} from '../events/session-stream-events';

const COMPACTION_DECISIONS: ReadonlySet<string> = new Set([EVENTS_ARCHIVED, SUMMARY_INSERTED, COMPACTION_COMPLETED, COMPACTION_FAILED]);

/**
 * Whether an event of type `type` is a compaction's decision (archive, summary, completion or
 * failure record): the service's own write, which changes what is archived and summarized, never
 * the conversation. Such events do not count as another writer's against a client's expected
 * revision ({@link clientRevisionOnLog}) nor against an erasure's attempts (`erase-session.ts`).
 */
export function isCompactionDecision(type: string): boolean {
  return COMPACTION_DECISIONS.has(type);
}

/** Most compactions' decisions after a client's expected revision that {@link clientRevisionOnLog} looks past (a few passes' decisions). */
export const MAX_EVENTS_AFTER_EXPECTED = 256;

/**
 * Most events that may lie between a resend's stored events (decisions of compactions and policy
 * changes recorded between the requests that first wrote them) for it to be read as a retry, with
 * or without a client's expected revision (docs/http-api.md "Ids and retries"); past it, the resend is
 * refused as the store refuses ids out of their place (a resend spread over a long stretch of decisions).
 */
export const MAX_DECISIONS_BETWEEN_RESENT = 1024;

/**
 * What a client's exact `expected` revision means on a session whose last event is at `current`
 * (past `expected`), the one rule of every write that takes an `expectedRevision` (appends, the
 * policy PUT):
 * - `holds`: only compactions' decisions came after it (at most {@link MAX_EVENTS_AFTER_EXPECTED}):
 *   the write is checked at `revision` (= `current`) instead;
 * - `resend`: the request was written already: `written(stored, index)` found it (non-null `found`)
 *   at `stored[index]`, the first event after `expected` and compactions' decisions only (at most
 *   {@link MAX_EVENTS_AFTER_EXPECTED}), where the original's check put it. `after`: the revision
 *   before it (the expected revision the original was written at);
 * - `stale`: another writer's event (conversation or policy) came after it, or the event at
 *   `expected` is gone (erased and written again), or too many decisions followed it.
 *
 * `stored`: the session's events read forwards from revision `expected` (inclusive) up to
 * `current` or at least {@link MAX_EVENTS_AFTER_EXPECTED} + the request's events + 1 of them
 * ({@link expectedRevisionReadCount}), in order. Pure.
 */
export function clientRevisionOnLog<W>(
  expected: bigint,
  current: bigint,
  stored: readonly StoredEvent[],
  written: (stored: readonly StoredEvent[], index: number) => W | null,
): ClientRevisionOnLog<W> {
  if (current <= expected || stored.length < 2 || stored[0].revision !== expected) return { kind: 'stale' };
  let next = 1;
  while (next < stored.length && next <= MAX_EVENTS_AFTER_EXPECTED && isCompactionDecision(stored[next].type)) next++;
  if (next === stored.length)
    return stored[next - 1].revision === current && next - 1 <= MAX_EVENTS_AFTER_EXPECTED ? { kind: 'holds', revision: current } : { kind: 'stale' };
  const found = written(stored, next);
  return found !== null ? { kind: 'resend', after: stored[next].revision - 1n, found } : { kind: 'stale' };
}

/** See {@link clientRevisionOnLog}. */
export type ClientRevisionOnLog<W> = { kind: 'holds'; revision: bigint } | { kind: 'resend'; after: bigint; found: W } | { kind: 'stale' };

/** An event of a session's stream as {@link clientRevisionOnLog} reads it: its type, stream revision and data. */
export type StoredEvent = { type: string; revision: bigint; data: unknown };

/**
 * {@link clientRevisionOnLog} for an append of the conversation events with client ids `clientIds`
 * (in order): a `resend` carries `revisions`, client id → stream revision of each of its events
 * (at consecutive revisions). Pure.
 */
export function expectedRevisionOnLog(expected: bigint, current: bigint, stored: readonly StoredEvent[], clientIds: readonly string[]): ExpectedRevisionOnLog {
  const found = clientRevisionOnLog(expected, current, stored, (events, index) => eventsWithIdsFrom(events, index, clientIds));
  return found.kind === 'resend' ? { kind: 'resend', after: found.after, revisions: found.found } : found;
}

/** See {@link expectedRevisionOnLog}. */
export type ExpectedRevisionOnLog = { kind: 'holds'; revision: bigint } | { kind: 'resend'; after: bigint; revisions: Map<string, bigint> } | { kind: 'stale' };

/**
 * {@link clientRevisionOnLog} for a policy PUT: the request was written when the event after
 * `expected` (and compactions' decisions only) is the policy event at `settingRevision`, the one
 * that set the policy the PUT asks for and that is still in force (`decideSetPolicy` answers
 * `unchanged` with it); null `settingRevision` (the PUT would change the policy): no resend. Pure.
 */
export function policyRevisionOnLog(
  expected: bigint,
  current: bigint,
  stored: readonly StoredEvent[],
  settingRevision: bigint | null,
): { kind: 'holds'; revision: bigint } | { kind: 'resend' } | { kind: 'stale' } {
  const found = clientRevisionOnLog(expected, current, stored, (events, index) => (isPolicyEventAt(events[index], settingRevision) ? true : null));
  return found.kind === 'resend' ? { kind: 'resend' } : found;
}

/**
 * Whether the first event of a session's log (`first`, read from its start; undefined: none) is
 * the policy event at `settingRevision` in force (see {@link policyRevisionOnLog}): a policy PUT
 * sent with `no_stream` that created the session, sent again. Pure.
 */
export function policyResentAsFirst(first: StoredEvent | undefined, settingRevision: bigint | null): boolean {
  return first !== undefined && isPolicyEventAt(first, settingRevision);
}

/** Whether `event` is the policy event at `settingRevision` (null: none). */
function isPolicyEventAt(event: StoredEvent, settingRevision: bigint | null): boolean {
  return settingRevision !== null && event.type === POLICY_SET && event.revision === settingRevision;
}

/**
 * How many events {@link expectedRevisionOnLog} needs, read from `expected` on a session at `current`
 * (past `expected`), for a request of `events` events: the decisions it looks past, the events, and
 * the decisions a resend of them may hold between them ({@link MAX_DECISIONS_BETWEEN_RESENT}; newcomer ncrecheck64b N1).
 */
export function expectedRevisionReadCount(expected: bigint, current: bigint, events: number): number {
  const needed = BigInt(MAX_EVENTS_AFTER_EXPECTED + events + (events > 1 ? MAX_DECISIONS_BETWEEN_RESENT : 0));
  return Number((current - expected < needed ? current - expected : needed) + 1n);
}

/**
 * Whether the first events of a session's log are a resend of a request sent with expected revision
 * `no_stream`: `stored`, the stream's first events (at least `clientIds.length`), carry the client
 * ids `clientIds` in order. Client id → stream revision of each when they do, else null. Pure.
 */
export function resentAsFirst(stored: readonly StoredEvent[], clientIds: readonly string[]): Map<string, bigint> | null {
  return eventsWithIdsFrom(stored, 0, clientIds);
}

/**
 * Client id → revision of the conversation events from `stored[from]` on when they carry the ids
 * `clientIds`, in order, back to back among the conversation events (the first at `stored[from]`);
 * other events may lie between them: the decisions (compactions, policy changes) recorded between
 * the earlier requests a resend spans (docs/http-api.md "Ids and retries"; newcomer ncrecheck64 F1). Else null.
 */
function eventsWithIdsFrom(stored: readonly StoredEvent[], from: number, clientIds: readonly string[]): Map<string, bigint> | null {
  if (clientIds.length === 0 || from + clientIds.length > stored.length) return null;
  const revisions = new Map<string, bigint>();
  for (let at = from; at < stored.length && revisions.size < clientIds.length; at++) {
    const e = stored[at];
    if (e.type !== CONVERSATION_EVENT) {
      if (at === from) return null;
      continue;
    }
    const id = clientIds[revisions.size];
    if ((e.data as ConversationEventData).event.id !== id || (at > from && e.revision !== stored[at - 1].revision + 1n)) return null;
    revisions.set(id, e.revision);
  }
  return revisions.size === clientIds.length ? revisions : null;
}
