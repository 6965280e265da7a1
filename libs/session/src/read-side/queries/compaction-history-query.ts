import type { CompactionCompletedData, CompactionFailedData, SummaryInsertedData } from '../../events/session-stream-events';
import { decodeKeysetCursor, encodeKeysetCursor } from '../keyset-cursor';
import type { ReadModelStore } from '../read-model-store';
import { findSession } from './session-row';

/** One compaction decision as recorded in the log, with its summary and archived ids joined in. */
export interface CompactionRecord {
  sessionId: string;
  compactionId: string;
  /**
   * `compacted` or `noop` (a CompactionCompleted event: `noop` is an automatic pass recorded because
   * its trigger still fires, DESIGN §3.5) or `failed` (a CompactionFailed event).
   */
  outcome: 'compacted' | 'noop' | 'failed';
  /** Revision (bigint) of the CompactionCompleted / CompactionFailed event. */
  revision: bigint;
  /** Global position (bigint) of that event. */
  position: bigint;
  /** ISO-8601 UTC time it completed or failed (`completedAt` / `failedAt`). */
  at: string;
  /** The event's payload, verbatim (figures in the estimator's unit: tokens, or UTF-16 code units for `chars`). */
  data: CompactionCompletedData | CompactionFailedData;
  /** Client ids archived by this compaction (its EventsArchived events, in order); may include old summaries and superseded system messages. */
  archivedIds: string[];
  /** The summary it inserted, or null. */
  summary: SummaryInsertedData | null;
}

type CompactionRow = {
  compactionId: string;
  outcome: string;
  revision: bigint;
  position: bigint;
  at: string;
  dataJson: string;
  archivedIdsJson: string;
  summaryJson: string | null;
};

const SELECT = `SELECT compaction_id AS compactionId, outcome, revision, position, at, data_json AS dataJson,
                       archived_ids_json AS archivedIdsJson, summary_json AS summaryJson
                FROM compactions WHERE session_key = ?`;

/**
 * Every compaction decision of a session, oldest first (by revision).
 * Returns null when the session is unknown or belongs to another tenant (→ 404); `[]` when it never compacted.
 */
export function listCompactions(store: ReadModelStore, tenantId: string, sessionId: string): CompactionRecord[] | null {
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const rows = store.db.prepare(`${SELECT} ORDER BY revision`).safeIntegers(true).all(session.sessionKey) as CompactionRow[];
  return rows.map((row) => toRecord(sessionId, row));
}

/** Default page size of {@link pageCompactions}. */
export const DEFAULT_COMPACTION_LIMIT = 50;

/** A page of a compaction history, oldest first; `nextCursor` is present when more follow. */
export interface CompactionRecordPage {
  compactions: CompactionRecord[];
  nextCursor?: string;
}

/**
 * A page of the compaction history, oldest first, keyset-paginated on the decision's revision:
 * decisions recorded while paging come after every earlier one, so no page repeats or skips one.
 * `limit` 1..100 (default {@link DEFAULT_COMPACTION_LIMIT}); `cursor` is the previous page's `nextCursor`.
 * Returns null when the session is unknown or belongs to another tenant (→ 404).
 * @throws InvalidQueryError (400) on a malformed cursor.
 */
export function pageCompactions(
  store: ReadModelStore,
  tenantId: string,
  sessionId: string,
  limit = DEFAULT_COMPACTION_LIMIT,
  cursor?: string,
): CompactionRecordPage | null {
  const after = cursor === undefined ? -1n : decodeKeysetCursor('compactions', cursor);
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const rows = store.db
    .prepare(`${SELECT} AND revision > ? ORDER BY revision LIMIT ?`)
    .safeIntegers(true)
    .all(session.sessionKey, after, limit + 1) as CompactionRow[];
  const page: CompactionRecordPage = { compactions: rows.slice(0, limit).map((row) => toRecord(sessionId, row)) };
  if (rows.length > limit) page.nextCursor = encodeKeysetCursor('compactions', rows[limit - 1].revision);
  return page;
}

/**
 * The revision (bigint) of the first event `compactionId` wrote to the session stream `sessionKey`
 * (its first EventsArchived, SummaryInserted or its closing event), or null when it wrote none.
 */
export function firstDecisionRevision(store: ReadModelStore, sessionKey: string, compactionId: string): bigint | null {
  const row = store.db
    .prepare('SELECT MIN(revision) AS revision FROM session_log WHERE session_key = ? AND compaction_id = ?')
    .safeIntegers(true)
    .get(sessionKey, compactionId) as { revision: bigint | null } | undefined;
  return row?.revision ?? null;
}

/**
 * One compaction decision. Returns null when the session is unknown, belongs to another tenant,
 * or has no compaction `compactionId` (→ 404).
 */
export function getCompaction(store: ReadModelStore, tenantId: string, sessionId: string, compactionId: string): CompactionRecord | null {
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const row = store.db.prepare(`${SELECT} AND compaction_id = ?`).safeIntegers(true).get(session.sessionKey, compactionId) as CompactionRow | undefined;
  return row ? toRecord(sessionId, row) : null;
}

function toRecord(sessionId: string, row: CompactionRow): CompactionRecord {
  return {
    sessionId,
    compactionId: row.compactionId,
    outcome: row.outcome === 'failed' || row.outcome === 'noop' ? row.outcome : 'compacted',
    revision: row.revision,
    position: row.position,
    at: row.at,
    data: JSON.parse(row.dataJson) as CompactionCompletedData | CompactionFailedData,
    archivedIds: JSON.parse(row.archivedIdsJson) as string[],
    summary: row.summaryJson === null ? null : (JSON.parse(row.summaryJson) as SummaryInsertedData),
  };
}
