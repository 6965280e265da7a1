/**
 * The stored data of the events a resend names: what `alignToStored` compares a resend with, so
 * that a resend that adds or leaves out `userId`, or comes through the other append route, is still
 * a retry (README "Ids and retries"). Reads the log on the resend path only.
 */
import type { EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT } from '../events/session-stream-events';

/**
 * Reads the conversation events at `revisions` (the stored revisions of a resend's ids) from
 * `stream`: store event id → its data as stored. Reads one contiguous range; when the revisions
 * are spread wider than their number (not a resend in place, which the store refuses anyway) it
 * reads nothing and answers an empty map. Rejects with the store's errors.
 */
export async function storedConversationData(store: EventStore, stream: string, revisions: readonly bigint[]): Promise<Map<string, unknown>> {
  const found = new Map<string, unknown>();
  if (revisions.length === 0) return found;
  const first = revisions.reduce((a, b) => (b < a ? b : a));
  const last = revisions.reduce((a, b) => (b > a ? b : a));
  if (last - first + 1n > BigInt(revisions.length)) return found;
  for (const recorded of await store.readStream(stream, { fromRevision: first, maxCount: revisions.length })) {
    if (recorded.type === CONVERSATION_EVENT) found.set(recorded.id, recorded.data);
  }
  return found;
}
