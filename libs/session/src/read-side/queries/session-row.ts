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
export function findSession(store: ReadModelStore, tenantId: string, sessionId: string): SessionRow | null {
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
