/**
 * The erasure record (issue 7 item 6): when a session is erased, its stream is deleted and one
 * `SessionErased` event without content (session id, event count, time) is appended to the
 * tenant's `erasure-<tenantId>` stream. Every projector that reads it erases the session's rows,
 * so replicas with their own read models forget the session too (issue 12).
 */

/** Type of the erasure record. */
export const SESSION_ERASED = 'SessionErased';

/** Prefix of the erasure streams. */
export const ERASURE_STREAM_PREFIX = 'erasure-';

/** The stream of a tenant's erasure records. */
export function erasureStream(tenantId: string): string {
  return `${ERASURE_STREAM_PREFIX}${tenantId}`;
}

/** Payload of {@link SESSION_ERASED}. */
export interface SessionErasedData {
  sessionId: string;
  erasedEvents: number;
  erasedAt: string;
}
