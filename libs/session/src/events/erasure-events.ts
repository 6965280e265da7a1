/**
 * The erasure record (issue 7 item 6): when a session is erased, its stream is deleted and one
 * `SessionErased` event without content (session id, event count, time, the position and revision
 * of the last deleted event) is appended to the
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
  /**
   * Global position of the last event the deletion removed (decimal string): a projector erases
   * only the rows it projected up to it, so a session re-created with the same id between the
   * deletion and this record keeps its rows. Absent in records written before it was added: those
   * erase every row of the session.
   */
  lastPosition?: string;
  /**
   * Revision of the last event the deletion removed (decimal string): the life of the session this
   * record closes. Revisions of a session id are never reused, so there is one life per value, and
   * one record per life (its id derives from it, see `erasureRecordId`; an erasure that finds it
   * already written answers with it). Absent in records written before it was added.
   */
  lastRevision?: string;
}

/**
 * The rows an erasure record removes, as the `before` bound of `SessionProjector.eraseSession`:
 * those projected from events before position `lastPosition` + 1, or every row (undefined) for a
 * record without it.
 */
export function erasedBefore(data: SessionErasedData): bigint | undefined {
  return data.lastPosition === undefined ? undefined : BigInt(data.lastPosition) + 1n;
}
