/**
 * The stored data of the events a resend names: what `alignToStored` compares a resend with, so
 * that a resend that adds or leaves out `userId`, or comes through the other append route, is still
 * a retry (docs/http-api.md "Ids and retries"); and the arrival archives its original append wrote right after
 * them, so that the retry answers what the original did. Reads the log on the resend path only.
 */
import type { EventData, EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, EVENTS_ARCHIVED, type EventsArchivedData } from '../events/session-stream-events';
import { MAX_DECISIONS_BETWEEN_RESENT } from '../decider/client-expected-revision';

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
  /**
   * The number of the resend's events in each run of consecutive revisions, in order (one run when
   * they are back to back in the log; several when decisions, such as a compaction or a policy set
   * between the requests that first wrote them, lie between them). The store recognises a retry run
   * by run (`resolveExistingIds` wants consecutive revisions). Empty when nothing was read.
   */
  runLengths: number[];
}

/**
 * Reads the conversation events at `revisions` (the stored revisions of a resend's ids, in the
 * order the resend gives them) from `stream`, and the arrival archives right after them (at most
 * one per event). A resend is in place when its revisions rise in the order sent and no other
 * conversation event lies between them: only decisions may (docs/http-api.md "Ids and retries": a run of
 * stored events spanning several earlier requests is a retry, also with a compaction or a policy
 * set between them; newcomer ncint64 F1). Reads one range, at most {@link MAX_DECISIONS_BETWEEN_RESENT}
 * events more than the resend's; when the resend is not in place it answers empty (the store
 * then refuses it as a duplicate id). Rejects with the store's errors.
 */
export async function storedConversationData(store: EventStore, stream: string, revisions: readonly bigint[]): Promise<StoredResend> {
  const stored: StoredResend = { conversation: new Map(), archivedOnArrival: [], runLengths: [] };
  if (revisions.length === 0 || !revisions.every((r, i) => i === 0 || r > revisions[i - 1])) return stored;
  const [first, last] = [revisions[0], revisions[revisions.length - 1]];
  const spread = Number(last - first) + 1;
  if (spread > revisions.length + MAX_DECISIONS_BETWEEN_RESENT) return stored;
  const resentAt = new Set(revisions);
  const conversation = new Map<string, unknown>();
  const runLengths: number[] = [];
  let previous: bigint | null = null;
  const resent = new Set<string>();
  for (const recorded of await store.readStream(stream, { fromRevision: first, maxCount: spread + revisions.length })) {
    if (recorded.revision <= last) {
      if (recorded.type !== CONVERSATION_EVENT) continue;
      // another conversation event between the resent ones: not back to back, not a retry
      if (!resentAt.has(recorded.revision)) return stored;
      conversation.set(recorded.id, recorded.data);
      resent.add((recorded.data as { event: { id: string } }).event.id);
      if (previous !== null && recorded.revision === previous + 1n) runLengths[runLengths.length - 1]++;
      else runLengths.push(1);
      previous = recorded.revision;
      continue;
    }
    const archived = recorded.type === EVENTS_ARCHIVED ? (recorded.data as EventsArchivedData) : null;
    if (!archived?.onArrival || !archived.archivedIds.every((id) => resent.has(id))) break;
    stored.archivedOnArrival.push({ id: recorded.id, type: recorded.type, data: recorded.data, metadata: recorded.metadata });
  }
  return { ...stored, conversation, runLengths };
}
