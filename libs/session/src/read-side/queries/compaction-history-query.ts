import {
  EVENTS_ARCHIVED,
  type EstimatorName,
  type CompactionCompletedData,
  type CompactionFailedData,
  type EventsArchivedData,
  type SummaryInsertedData,
} from '../../events/session-stream-events';
import { decodeKeysetCursor, encodeKeysetCursor } from '../keyset-cursor';
import type { ReadModelStore } from '../read-model-store';
import { findSession } from './session-row';
import { ReadModelsDamagedError } from '../read-models-damage-rule';

/** One compaction decision as recorded in the log, with its summary and archived ids joined in. */
export interface CompactionRecord {
  sessionId: string;
  compactionId: string;
  /**
   * `compacted` or `noop` (a CompactionCompleted event: `noop` is an automatic pass recorded because
   * its trigger still fires, DESIGN §3.5, or a pass recorded for the summarizer calls it discarded)
   * or `failed` (a CompactionFailed event).
   */
  outcome: 'compacted' | 'noop' | 'failed';
  /** Revision (bigint) of the CompactionCompleted / CompactionFailed event. */
  revision: bigint;
  /** Global position (bigint) of that event. */
  position: bigint;
  /**
   * ISO-8601 UTC time it completed or failed (`completedAt` / `failedAt`): the deciding process's
   * clock, read before its append.
   */
  at: string;
  /**
   * ISO-8601 UTC time (milliseconds) the store recorded that event (its `recordedAt` in the log):
   * the clock time travel by time (`atTime`) goes by, at or after every other event of the decision's.
   */
  recordedAt: string;
  /** The event's payload, verbatim (figures in the estimator's unit: tokens, or UTF-16 code units for `chars`). */
  data: CompactionCompletedData | CompactionFailedData;
  /** Client ids archived by this compaction (its EventsArchived events, in order); may include old summaries and superseded system messages. */
  archivedIds: string[];
  /**
   * Events archived on arrival attributed to this compaction, in log order: late answers to calls
   * it archived (DESIGN §3.3 rule 3), each archived by an `EventsArchived` (`onArrival: true`) that
   * the append bringing it wrote, after this decision. Not in `archivedIds` (what the decision
   * archived at its revision); together the two name every log event archived by this compaction.
   */
  archivedOnArrival: ArchivedOnArrivalRecord[];
  /** The summary it inserted, or null. */
  summary: SummaryInsertedData | null;
}

/** One event archived on arrival (see {@link CompactionRecord.archivedOnArrival}), as recorded. */
export interface ArchivedOnArrivalRecord {
  /** Client id of the archived event (the late answer). */
  eventId: string;
  /** Stream revision (bigint) of the `EventsArchived` event that archived it. */
  revision: bigint;
  /** Global position (bigint) of that event. */
  position: bigint;
  /** ISO-8601 UTC time that event was recorded. */
  at: string;
}

type CompactionRow = {
  compactionId: string;
  outcome: string;
  revision: bigint;
  position: bigint;
  at: string;
  recordedAt: string | null;
  dataJson: string;
  archivedIdsJson: string;
  summaryJson: string | null;
};

/**
 * The `recordedAt` of a compaction row's closing event: its `session_log` row, found by its
 * position (that table's primary key: one lookup). Null only when the read models lost the row.
 */
const RECORDED_AT = '(SELECT recorded_at FROM session_log WHERE session_log.position = compactions.position) AS recordedAt';

const SELECT = `SELECT compaction_id AS compactionId, outcome, revision, position, at, ${RECORDED_AT}, data_json AS dataJson,
                       archived_ids_json AS archivedIdsJson, summary_json AS summaryJson
                FROM compactions WHERE session_key = ?`;

/**
 * The `EventsArchived` events of a compaction (parameters: session key, compaction id, revision of
 * its closing event) after its closing event, which are those written on arrival (a compaction's own come before its closing event, in its append).
 * Found through `session_log_by_compaction` (named: without statistics SQLite would rather walk
 * `session_log_by_revision` from `revision` on, the rest of the session's log): the few rows of
 * that compaction, not the session's log.
 */
export const ARCHIVED_ON_ARRIVAL_QUERY = `SELECT revision, position, recorded_at AS at, data_json AS dataJson FROM session_log INDEXED BY session_log_by_compaction
                       WHERE session_key = ? AND compaction_id = ? AND revision > ? AND type = '${EVENTS_ARCHIVED}' ORDER BY revision`;

/**
 * Reads the events archived on arrival attributed to the compaction of a row of `sessionKey` (see
 * {@link CompactionRecord.archivedOnArrival}): one index lookup per compaction, its statement prepared once.
 */
function archivedOnArrivalReader(
  store: ReadModelStore,
  sessionKey: string,
): (row: Pick<CompactionRow, 'compactionId' | 'revision'>) => ArchivedOnArrivalRecord[] {
  const statement = store.db.prepare(ARCHIVED_ON_ARRIVAL_QUERY).safeIntegers(true);
  return (row) =>
    (statement.all(sessionKey, row.compactionId, row.revision) as Array<{ revision: bigint; position: bigint; at: string; dataJson: string }>).flatMap(
      ({ revision, position, at, dataJson }) => {
        const data = JSON.parse(dataJson) as EventsArchivedData;
        return data.onArrival === true ? data.archivedIds.map((eventId) => ({ eventId, revision, position, at })) : [];
      },
    );
}

/**
 * Every compaction decision of a session, oldest first (by revision).
 * Returns null when the session is unknown or belongs to another tenant (→ 404); `[]` when it never compacted.
 */
export function listCompactions(store: ReadModelStore, tenantId: string, sessionId: string): CompactionRecord[] | null {
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const rows = store.db.prepare(`${SELECT} ORDER BY revision`).safeIntegers(true).all(session.sessionKey) as CompactionRow[];
  const onArrival = archivedOnArrivalReader(store, session.sessionKey);
  return rows.map((row) => toRecord(sessionId, row, onArrival(row)));
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
 * @throws InvalidQueryError (400) on a malformed cursor, or one of another session's compactions.
 */
export function pageCompactions(
  store: ReadModelStore,
  tenantId: string,
  sessionId: string,
  limit = DEFAULT_COMPACTION_LIMIT,
  cursor?: string,
): CompactionRecordPage | null {
  const after = cursor === undefined ? -1n : decodeKeysetCursor('compactions', cursor, sessionId);
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const rows = store.db
    .prepare(`${SELECT} AND revision > ? ORDER BY revision LIMIT ?`)
    .safeIntegers(true)
    .all(session.sessionKey, after, limit + 1) as CompactionRow[];
  const onArrival = archivedOnArrivalReader(store, session.sessionKey);
  const page: CompactionRecordPage = { compactions: rows.slice(0, limit).map((row) => toRecord(sessionId, row, onArrival(row))) };
  if (rows.length > limit) page.nextCursor = encodeKeysetCursor('compactions', rows[limit - 1].revision, sessionId);
  return page;
}

/**
 * The first revision of a compaction's events in the session's log (parameters: session key,
 * compaction id). Found through `session_log_by_compaction` (named: without statistics SQLite
 * would rather walk `session_log_by_revision` from the session's first revision until it meets the
 * compaction, reading every row before it: 150 ms of the event loop in one stretch for a
 * compaction after 30,000 events, issue 14): the few rows of that compaction.
 */
export const FIRST_DECISION_REVISION_QUERY =
  'SELECT MIN(revision) AS revision FROM session_log INDEXED BY session_log_by_compaction WHERE session_key = ? AND compaction_id = ?';

/**
 * The revision (bigint) of the first event `compactionId` wrote to the session stream `sessionKey`
 * (its first EventsArchived, SummaryInserted or its closing event), or null when it wrote none.
 */
export function firstDecisionRevision(store: ReadModelStore, sessionKey: string, compactionId: string): bigint | null {
  const row = store.db.prepare(FIRST_DECISION_REVISION_QUERY).safeIntegers(true).get(sessionKey, compactionId) as { revision: bigint | null } | undefined;
  return row?.revision ?? null;
}

/** What a compaction's diff reads of the decision (see {@link getCompactionDiffHead}). */
export interface CompactionDiffHead {
  /** Revision (bigint) of its closing event (CompactionCompleted / CompactionFailed). */
  revision: bigint;
  /** Revision (bigint) of its first event ({@link firstDecisionRevision}; `revision` when none is found). */
  firstRevision: bigint;
  /** The decision's estimator (its payload's `estimator`). */
  estimator: EstimatorName;
  /** As {@link CompactionRecord.recordedAt}: when the store recorded its closing event. */
  recordedAt: string;
  /** As {@link CompactionRecord.archivedOnArrival}. */
  archivedOnArrival: ArchivedOnArrivalRecord[];
}

/**
 * The parts of one compaction decision its diff needs, without decoding the rest of the record:
 * its archived ids (30,000 of them after a long session) and payload are not parsed
 * ({@link getCompaction} parses them). Returns null when {@link getCompaction} would (→ 404).
 */
export function getCompactionDiffHead(store: ReadModelStore, tenantId: string, sessionId: string, compactionId: string): CompactionDiffHead | null {
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const row = store.db
    .prepare(
      `SELECT compaction_id AS compactionId, revision, position, ${RECORDED_AT}, json_extract(data_json, '$.estimator') AS estimator FROM compactions WHERE session_key = ? AND compaction_id = ?`,
    )
    .safeIntegers(true)
    .get(session.sessionKey, compactionId) as
    { compactionId: string; revision: bigint; position: bigint; recordedAt: string | null; estimator: EstimatorName } | undefined;
  if (!row) return null;
  return {
    revision: row.revision,
    firstRevision: firstDecisionRevision(store, session.sessionKey, compactionId) ?? row.revision,
    estimator: row.estimator,
    recordedAt: recordedAtOf(row),
    archivedOnArrival: archivedOnArrivalReader(store, session.sessionKey)(row),
  };
}

/**
 * One compaction decision. Returns null when the session is unknown, belongs to another tenant,
 * or has no compaction `compactionId` (→ 404).
 */
export function getCompaction(store: ReadModelStore, tenantId: string, sessionId: string, compactionId: string): CompactionRecord | null {
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  const row = store.db.prepare(`${SELECT} AND compaction_id = ?`).safeIntegers(true).get(session.sessionKey, compactionId) as CompactionRow | undefined;
  return row ? toRecord(sessionId, row, archivedOnArrivalReader(store, session.sessionKey)(row)) : null;
}

function toRecord(sessionId: string, row: CompactionRow, archivedOnArrival: ArchivedOnArrivalRecord[]): CompactionRecord {
  return {
    sessionId,
    compactionId: row.compactionId,
    outcome: row.outcome === 'failed' || row.outcome === 'noop' ? row.outcome : 'compacted',
    revision: row.revision,
    position: row.position,
    at: row.at,
    recordedAt: recordedAtOf(row),
    data: JSON.parse(row.dataJson) as CompactionCompletedData | CompactionFailedData,
    archivedIds: JSON.parse(row.archivedIdsJson) as string[],
    archivedOnArrival,
    summary: row.summaryJson === null ? null : (JSON.parse(row.summaryJson) as SummaryInsertedData),
  };
}

/**
 * The `recordedAt` of a compaction row's closing event.
 * @throws ReadModelsDamagedError when its `session_log` row is missing: the projector writes both
 *   in one transaction, so only damaged read models lack it (`npm run rebuild-read-models`).
 */
function recordedAtOf(row: { compactionId: string; position: bigint; recordedAt: string | null }): string {
  if (row.recordedAt !== null) return row.recordedAt;
  throw new ReadModelsDamagedError(
    'ReadModelsDamagedError',
    `the read models hold compaction ${row.compactionId} but not its closing event's log row (position ${row.position}): rebuild them (npm run rebuild-read-models)`,
  );
}

/**
 * Whether the read models hold a decision of session `sessionId` of tenant `tenantId` recorded under one of
 * `compactionIds` (in the session's current life: an erased life's rows are gone). One indexed lookup per id.
 */
export function holdsCompaction(store: ReadModelStore, tenantId: string, sessionId: string, compactionIds: readonly string[]): boolean {
  const session = findSession(store, tenantId, sessionId);
  if (!session) return false;
  const found = store.db.prepare<[string, string], 1>('SELECT 1 FROM compactions WHERE session_key = ? AND compaction_id = ?').pluck();
  return compactionIds.some((id) => found.get(session.sessionKey, id) !== undefined);
}
