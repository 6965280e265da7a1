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
