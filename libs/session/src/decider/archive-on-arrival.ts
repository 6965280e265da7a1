/**
 * Late answers to abandoned calls (DESIGN §3.3 rule 3): a tool response that answers a call
 * archived with its turn is appended and archived on arrival, attributed to the compaction that
 * archived its call. It is in the log and in recall, never in the window.
 */
import type { EventData } from '@lib/event-store';
import { EVENTS_ARCHIVED, type EventsArchivedData, type SessionEventMetadata } from '../events/session-stream-events';
import { arrivalArchiveEventIds } from '../domain/session-ids';

/**
 * The decision events to append right after the conversation events of one append: one
 * `EventsArchived` (with `onArrival: true`) per late answer, naming the compaction that archived
 * its call, with ids in the stream's `incarnation` (see `session-ids`). `lateAnswers` pairs each late answer's client id with that compaction id.
 */
export function archiveOnArrival(
  key: string,
  incarnation: bigint,
  lateAnswers: ReadonlyArray<{ eventId: string; compactionId: string }>,
  metadata: SessionEventMetadata,
): EventData[] {
  return lateAnswers.map(({ eventId, compactionId }) => {
    const data: EventsArchivedData = { compactionId, archivedIds: [eventId], onArrival: true };
    return { ...arrivalArchiveEventIds(key, incarnation, eventId), type: EVENTS_ARCHIVED, data, metadata };
  });
}
