import { InvalidQueryError } from '../invalid-query-error';
import type { ReadModelStore } from '../read-model-store';
import { JsonBytes } from './json-bytes';
import { findSession } from './session-row';

/** Default page size of {@link listLog}. */
export const DEFAULT_LOG_LIMIT = 100;
/** Largest page size of {@link listLog}. */
export const MAX_LOG_LIMIT = 1000;

/** One event of a session's full log. */
export interface LogEntry {
  /** Stream revision (bigint). */
  revision: bigint;
  /** Global position (bigint). */
  position: bigint;
  /** Stream event type: `ConversationEventAppended`, `EventsArchived`, `SummaryInserted`, `CompactionCompleted`, `CompactionFailed`, `AutoCompactionPolicySet`, … */
  type: string;
  /** Client id of the conversation event, or the summary id of a SummaryInserted; absent for other decisions. */
  eventId?: string;
  /** Event kind (`user`, `assistant`, `tool`, `system`, `summary`) for conversation events and summaries. */
  kind?: string;
  /** Compaction the decision event belongs to. */
  compactionId?: string;
  /** For conversation events and summaries: whether a compaction archived it. Absent for decision events. */
  archived?: boolean;
  /** The compaction that archived it, when archived. */
  archivedBy?: string;
  /** The event's payload, verbatim (a ConversationEventData, EventsArchivedData, …). */
  data: unknown;
  /** ISO-8601 UTC time the store recorded the event. */
  recordedAt: string;
}

/** A page of a session's log. `nextRevision` (bigint) is where the next page starts, present when more events follow. */
export interface LogPage {
  sessionId: string;
  /** Revision (bigint) of the last event of the session the projection has applied. */
  revision: bigint;
  events: LogEntry[];
  nextRevision?: bigint;
}

/** A `session_log` row; `data` is the stored JSON text (a string, or its UTF-8 bytes). */
interface LogRow<Data> {
  revision: bigint;
  position: bigint;
  type: string;
  eventId: string | null;
  kind: string | null;
  compactionId: string | null;
  archived: bigint | null;
  archivedBy: string | null;
  data: Data;
  recordedAt: string;
}

/**
 * The rows of one page (at most `limit + 1`: one more tells whether a next page exists), with the
 * stored data as text or as bytes; null when the session is unknown or belongs to another tenant.
 * @throws InvalidQueryError (`fromRevision`, `limit`) when out of range.
 */
function logRows<Data>(store: ReadModelStore, tenantId: string, sessionId: string, fromRevision: bigint, limit: number, dataAs: 'text' | 'bytes') {
  if (typeof fromRevision !== 'bigint' || fromRevision < 0n) throw new InvalidQueryError('fromRevision', 'must be an integer ≥ 0');
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOG_LIMIT) throw new InvalidQueryError('limit', `must be an integer from 1 to ${MAX_LOG_LIMIT}`);
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const data = dataAs === 'bytes' ? 'CAST(data_json AS BLOB)' : 'data_json';
  const rows = store.db
    .prepare(
      `SELECT revision, position, type, event_id AS eventId, kind, compaction_id AS compactionId, archived, archived_by AS archivedBy,
              ${data} AS data, recorded_at AS recordedAt
       FROM session_log WHERE session_key = ? AND revision >= ? ORDER BY revision LIMIT ?`,
    )
    .safeIntegers(true)
    .all(session.sessionKey, fromRevision, limit + 1) as Array<LogRow<Data>>;
  return { session, rows };
}

/**
 * The full log of a session from `fromRevision` (bigint, inclusive; default 0n), at most `limit`
 * events (integer 1..{@link MAX_LOG_LIMIT}, default {@link DEFAULT_LOG_LIMIT}), in revision order:
 * conversation events with their archived flag, and decision events.
 *
 * Returns null when the session is unknown or belongs to another tenant (→ 404).
 * @throws InvalidQueryError (`fromRevision`, `limit`) when out of range.
 */
export function listLog(
  store: ReadModelStore,
  tenantId: string,
  sessionId: string,
  fromRevision: bigint = 0n,
  limit: number = DEFAULT_LOG_LIMIT,
): LogPage | null {
  const found = logRows<string>(store, tenantId, sessionId, fromRevision, limit, 'text');
  if (!found) return null;
  const { session, rows } = found;
  const events = rows.slice(0, limit).map((row): LogEntry => {
    const entry: LogEntry = { revision: row.revision, position: row.position, type: row.type, data: JSON.parse(row.data), recordedAt: row.recordedAt };
    if (row.eventId !== null) entry.eventId = row.eventId;
    if (row.kind !== null) entry.kind = row.kind;
    if (row.compactionId !== null) entry.compactionId = row.compactionId;
    if (row.archived !== null) entry.archived = Number(row.archived) === 1;
    if (row.archivedBy !== null) entry.archivedBy = row.archivedBy;
    return entry;
  });
  const page: LogPage = { sessionId, revision: session.revision, events };
  if (rows.length > limit) page.nextRevision = rows[limit].revision;
  return page;
}

/**
 * {@link listLog}'s page as the bytes (UTF-8 JSON) of its HTTP answer: the same bytes as
 * `JSON.stringify` of the page with bigints as decimal strings (`jsonSafe`), each entry's stored
 * `data` spliced in as bytes, never decoded (the projector wrote it with `JSON.stringify`), so a
 * 1,000,000-character event costs the event loop a copy, not a parse and a stringify.
 * Returns null when the session is unknown or belongs to another tenant (→ 404).
 * @throws InvalidQueryError (`fromRevision`, `limit`) when out of range.
 */
export function listLogJson(
  store: ReadModelStore,
  tenantId: string,
  sessionId: string,
  fromRevision: bigint = 0n,
  limit: number = DEFAULT_LOG_LIMIT,
): Buffer | null {
  const found = logRows<Buffer>(store, tenantId, sessionId, fromRevision, limit, 'bytes');
  if (!found) return null;
  const { session, rows } = found;
  const out = new JsonBytes();
  out.text('{"sessionId":').value(sessionId);
  out.text(',"revision":').value(session.revision.toString());
  out.text(',"events":[');
  rows.slice(0, limit).forEach((row, i) => {
    // LogEntry's member order: revision, position, type, data, recordedAt, then the optional ones.
    out.text(i > 0 ? ',{"revision":' : '{"revision":').value(row.revision.toString());
    out.text(',"position":').value(row.position.toString());
    out.text(',"type":').value(row.type);
    out.text(',"data":').raw(row.data);
    out.text(',"recordedAt":').value(row.recordedAt);
    if (row.eventId !== null) out.text(',"eventId":').value(row.eventId);
    if (row.kind !== null) out.text(',"kind":').value(row.kind);
    if (row.compactionId !== null) out.text(',"compactionId":').value(row.compactionId);
    if (row.archived !== null) out.text(',"archived":').value(Number(row.archived) === 1);
    if (row.archivedBy !== null) out.text(',"archivedBy":').value(row.archivedBy);
    out.text('}');
  });
  out.text(']');
  if (rows.length > limit) out.text(',"nextRevision":').value(rows[limit].revision.toString());
  out.text('}');
  return out.toBuffer();
}
