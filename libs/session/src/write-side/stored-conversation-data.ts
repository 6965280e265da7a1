/**
 * The stored data of the events a resend names: what `alignToStored` compares a resend with, so
 * that a resend that adds or leaves out `userId`, or comes through the other append route, is still
 * a retry (README "Ids and retries"); and the arrival archives its original append wrote right after
 * them, so that the retry answers what the original did. Reads the log on the resend path only.
 */
import type { EventData, EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, EVENTS_ARCHIVED, type EventsArchivedData } from '../events/session-stream-events';

/** What a resend's events are stored as. */
export interface StoredResend {
  /** Store event id → the conversation event's data as stored. */
  conversation: Map<string, unknown>;
  /**
   * The `EventsArchived` events (`onArrival`, DESIGN §3.3 rule 3) stored right after the last of
   * them, each archiving one of them, as stored: a late answer's original append wrote them with
   * it, so a retry that holds them gets the original answer (their revision), not its answer's.
   */
  archivedOnArrival: EventData[];
}

/**
 * Reads the conversation events at `revisions` (the stored revisions of a resend's ids) from
 * `stream`, and the arrival archives right after them (at most one per event). Reads one
 * contiguous range; when the revisions are spread wider than their number (not a resend in place,
 * which the store refuses anyway) it reads nothing and answers empty. Rejects with the store's errors.
 */
export async function storedConversationData(store: EventStore, stream: string, revisions: readonly bigint[]): Promise<StoredResend> {
  const stored: StoredResend = { conversation: new Map(), archivedOnArrival: [] };
  if (revisions.length === 0) return stored;
  const first = revisions.reduce((a, b) => (b < a ? b : a));
  const last = revisions.reduce((a, b) => (b > a ? b : a));
  if (last - first + 1n > BigInt(revisions.length)) return stored;
  const resent = new Set<string>();
  for (const recorded of await store.readStream(stream, { fromRevision: first, maxCount: 2 * revisions.length })) {
    if (recorded.revision <= last) {
      if (recorded.type !== CONVERSATION_EVENT) continue;
      stored.conversation.set(recorded.id, recorded.data);
      resent.add((recorded.data as { event: { id: string } }).event.id);
      continue;
    }
    const archived = recorded.type === EVENTS_ARCHIVED ? (recorded.data as EventsArchivedData) : null;
    if (!archived?.onArrival || !archived.archivedIds.every((id) => resent.has(id))) break;
    stored.archivedOnArrival.push({ id: recorded.id, type: recorded.type, data: recorded.data, metadata: recorded.metadata });
  }
  return stored;
}
