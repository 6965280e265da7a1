import type { ReadModelStore } from '../read-model-store';

/** A `sessions` row as the queries use it. `revision`/`lastPosition` are bigint. */
export interface SessionRow {
  /** Stream key `<tenantId>.<sessionId>` keying every other read-model table. */
  sessionKey: string;
  sessionId: string;
  tenantId: string;
  userId: string | null;
  revision: bigint;
  lastPosition: bigint;
  createdAt: string;
  updatedAt: string;
}

/** The session's row when it exists and belongs to `tenantId`; null otherwise (unknown → 404). */
export function findSession(store: Pick<ReadModelStore, 'db'>, tenantId: string, sessionId: string): SessionRow | null {
  const row = store.db
    .prepare(
      `SELECT session_key AS sessionKey, session_id AS sessionId, tenant_id AS tenantId, user_id AS userId, revision, last_position AS lastPosition,
              created_at AS createdAt, updated_at AS updatedAt
       FROM sessions WHERE session_id = ? AND tenant_id = ? ORDER BY created_at LIMIT 1`,
    )
    .safeIntegers(true)
    .get(sessionId, tenantId) as SessionRow | undefined;
  return row ?? null;
}

/**
 * The global position (bigint) of the last event of the session `sessionId` of `tenantId` that the
 * read models hold at or below `position`, or null when they hold none: what an erasure finishing
 * an interrupted one erases, leaving the events of the session written again after `position`.
 */
export function lastLoggedPositionUpTo(store: ReadModelStore, tenantId: string, sessionId: string, position: bigint): bigint | null {
  const row = store.db
    .prepare(
      `SELECT max(l.position) AS position FROM session_log l JOIN sessions s ON s.session_key = l.session_key
       WHERE s.tenant_id = ? AND s.session_id = ? AND l.position <= ?`,
    )
    .safeIntegers(true)
    .get(tenantId, sessionId, position) as { position: bigint | null } | undefined;
  return row?.position ?? null;
}

/**
 * What the read models hold of one erased life of a session (bigints): its first and last
 * revisions (a life's revisions are gapless, so it has `lastRevision - firstRevision + 1` events)
 * and its last event's global position.
 */
export interface LoggedLife {
  firstRevision: bigint;
  lastRevision: bigint;
  lastPosition: bigint;
}

/**
 * The rows the read models hold of the session `sessionId` of `tenantId` at revisions up to
 * `lastRevision` (bigint, inclusive: the last revision of a deleted life of the session), or null
 * when they hold none: the first and last revisions among them and the global position of the
 * last one. The last may be below `lastRevision`: the replica had not read the life's last events
 * before they were deleted, or an earlier life ended at `lastRevision` (the store keeps the highest
 * revision it ever deleted of the session) and this one, written again from revision 0 by a build
 * before e92296e, ended lower. An erasure finishing one that deleted the stream and stopped before its record
 * counts and erases these; revisions are never reused, so the events of the session written again after the
 * deletion (later revisions) are not among them. `afterPosition` (bigint, exclusive; default: none)
 * counts only rows of events after that global position: an erasure asks whether rows of revisions
 * up to `lastRevision` were projected after a record erasing them, i.e. whether they belong to a
 * later life (one a build before e92296e wrote again from revision 0) that record did not close.
 */
export function loggedLifeUpTo(store: ReadModelStore, tenantId: string, sessionId: string, lastRevision: bigint, afterPosition = -1n): LoggedLife | null {
  const row = store.db
    .prepare(
      `SELECT min(l.revision) AS firstRevision, max(l.revision) AS lastRevision, max(l.position) AS lastPosition FROM session_log l JOIN sessions s ON s.session_key = l.session_key
       WHERE s.tenant_id = ? AND s.session_id = ? AND l.revision <= ? AND l.position > ?`,
    )
    .safeIntegers(true)
    .get(tenantId, sessionId, lastRevision, afterPosition) as
    { firstRevision: bigint | null; lastRevision: bigint | null; lastPosition: bigint | null } | undefined;
  return row?.firstRevision == null || row.lastRevision == null || row.lastPosition == null
    ? null
    : { firstRevision: row.firstRevision, lastRevision: row.lastRevision, lastPosition: row.lastPosition };
}

/**
 * How many bytes the logged events of the session `sessionId` of `tenantId` hold in the read models
 * (`session_log.data_json`, UTF-8; 0 when none): what erasing its rows costs in proportion to. Reads
 * the rows' sizes, not their text.
 */
export function loggedBytesOfSession(store: Pick<ReadModelStore, 'db'>, tenantId: string, sessionId: string): number {
  const row = store.db
    .prepare(
      `SELECT sum(octet_length(l.data_json)) AS bytes FROM session_log l JOIN sessions s ON s.session_key = l.session_key
       WHERE s.tenant_id = ? AND s.session_id = ?`,
    )
    .get(tenantId, sessionId) as { bytes: number | null } | undefined;
  return row?.bytes ?? 0;
}
