import type { RequestedBy } from './requested-by';
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
   * Global position of the last event the deletion removed (decimal string), as the erasure that
   * wrote the record knew it. A record with `lastRevision` is applied by revision (see
   * {@link erasedRowsOf}): this is only for builds before that change, which erase the rows
   * projected up to it. An erasure finishing an interrupted one writes the last position its
   * replica's read models hold of the life, which is lower than the real one when they lagged.
   * Absent in records written before it was added.
   */
  lastPosition?: string;
  /**
   * Revision of the last event the deletion removed (decimal string): the life of the session this
   * record closes. Revisions of a session id are never reused (a session written again after the
   * deletion starts at `lastRevision` + 1), so there is one life per value, and one record per life
   * (its id derives from it, see `erasureRecordId`; an erasure that finds it already written answers
   * with it). Only a build before e92296e (a rollback) writes an erased session again from revision
   * 0: such lives can end at the value of an earlier one, and their records' ids count those. Every projector erases the rows projected from the session's events of revisions up
   * to it, however far its replica had read the life. Absent in records written before it was
   * added.
   */
  lastRevision?: string;
  /** Who ordered the erasure (never the API key itself). Absent in records written before it was recorded. */
  requestedBy?: RequestedBy;
}

/**
 * Which rows of a session an erasure record removes from the read models (see
 * `SessionReadModelWriter.eraseSession`):
 * - `upToRevision`: those projected from the session's events of revision ≤ `lastRevision` (the
 *   life the record closes); those of later revisions (the session written again) are kept.
 * - `beforePosition`: those projected from events at global positions < `before` (exclusive);
 *   those at or after it are kept.
 * - `all`: every row of the session.
 */
export type ErasedRows = { kind: 'upToRevision'; lastRevision: bigint } | { kind: 'beforePosition'; before: bigint } | { kind: 'all' };

/** {@link ErasedRows} of every row of a session. */
export const ALL_ROWS: ErasedRows = { kind: 'all' };

/**
 * The rows the erasure record `data` removes: by revision when it carries `lastRevision` (rows of
 * revisions up to it, on every replica whatever part of the life it had projected); else, for
 * records written before `lastRevision` was added, those projected from events before position
 * `lastPosition` + 1; every row for a record with neither. The one reading of a record for every
 * eraser (projector live and rebuild, the erasure's own erase). Pure.
 * @throws SyntaxError when `lastRevision` or `lastPosition` is not a decimal integer.
 */
export function erasedRowsOf(data: SessionErasedData): ErasedRows {
  if (data.lastRevision !== undefined) return { kind: 'upToRevision', lastRevision: BigInt(data.lastRevision) };
  if (data.lastPosition !== undefined) return { kind: 'beforePosition', before: BigInt(data.lastPosition) + 1n };
  return ALL_ROWS;
}

/**
 * Whether `rows` names a copy made of the session's event of revision `revision` at global
 * position `position` (bigints): a row, or a message published for it (the NATS decisions feed).
 * The rule {@link ErasedRows} states, for erasers that hold copies one by one. Pure.
 */
export function erasesCopyOf(rows: ErasedRows, event: { revision: bigint; position: bigint }): boolean {
  switch (rows.kind) {
    case 'upToRevision':
      return event.revision <= rows.lastRevision;
    case 'beforePosition':
      return event.position < rows.before;
    case 'all':
      return true;
  }
}
