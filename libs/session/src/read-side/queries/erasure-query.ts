import type { ReadModelStore } from '../read-model-store';
import type { RequestedBy } from '../../events/requested-by';
import { decodeKeysetCursor, encodeKeysetCursor } from '../keyset-cursor';
import { RevisionConflictError, SessionNotFoundError, type ReadModelsBehind } from '../../errors';

/** Default page size of {@link listErasures}. */
export const DEFAULT_ERASURE_LIMIT = 50;

/**
 * One erasure as an auditor sees it (a row of `erasures`, from the tenant's erasure record): no
 * content. Revisions and the position are bigints.
 */
export interface ErasureRecordRow {
  sessionId: string;
  /** When the session was erased (the record's `erasedAt`, ISO-8601 UTC). */
  erasedAt: string;
  /** Events the deletion removed, as the record counts them. */
  erasedEvents: number;
  /**
   * The life the erasure closed: revisions `firstRevision` to `lastRevision` of the session id
   * (the session written again after it continues at `lastRevision` + 1). Null in records written
   * before they named their last revision.
   */
  firstRevision: bigint | null;
  lastRevision: bigint | null;
  /** Global position of the erasure record in the log. */
  position: bigint;
  /**
   * Who ordered the erasure (the record's `requestedBy`: transport, API key label, request or
   * command id; never the key itself); null for a record written before records kept it.
   */
  requestedBy: RequestedBy | null;
}

/** A page of erasures, newest first; `nextCursor` is present when more follow. */
export interface ErasurePage {
  erasures: ErasureRecordRow[];
  nextCursor?: string;
}

const ERASURE_COLUMNS = `session_id AS sessionId, erased_at AS erasedAt, erased_events AS erasedEvents, first_revision AS firstRevision,
  last_revision AS lastRevision, position, requested_by_json AS requestedByJson`;

/** A row as read (`erased_events` read as a bigint by `safeIntegers`, `requestedBy` as JSON text). */
type ReadRow = Omit<ErasureRecordRow, 'erasedEvents' | 'requestedBy'> & { erasedEvents: bigint; requestedByJson: string | null };

const rowOf = ({ requestedByJson, ...row }: ReadRow): ErasureRecordRow => ({
  ...row,
  erasedEvents: Number(row.erasedEvents),
  requestedBy: requestedByJson === null ? null : (JSON.parse(requestedByJson) as RequestedBy),
});

/**
 * The erasures of tenant `tenantId`, newest first (by the global position of their records),
 * keyset-paginated on that position: `limit` 1..100 (default {@link DEFAULT_ERASURE_LIMIT}),
 * `cursor` the previous page's `nextCursor`. Records are never removed, so paging neither repeats
 * nor misses one; one written while paging is on a new first page.
 * @throws InvalidQueryError (400 `invalid_query`) on a malformed cursor or one of another list;
 *   CursorOfAnotherReleaseError (400 `cursor_expired`) on one of another release.
 */
export function listErasures(store: ReadModelStore, query: { tenantId: string; limit?: number; cursor?: string }): ErasurePage {
  const limit = query.limit ?? DEFAULT_ERASURE_LIMIT;
  const before = query.cursor === undefined ? undefined : decodeKeysetCursor('erasures', query.cursor);
  const rows = store.db
    .prepare(
      `SELECT ${ERASURE_COLUMNS} FROM erasures WHERE tenant_id = @tenantId ${before === undefined ? '' : 'AND position < @before'}
       ORDER BY position DESC LIMIT @limit`,
    )
    .safeIntegers(true)
    .all({ tenantId: query.tenantId, limit: limit + 1, ...(before === undefined ? {} : { before }) }) as ReadRow[];
  const page: ErasurePage = { erasures: rows.slice(0, limit).map(rowOf) };
  if (rows.length > limit) page.nextCursor = encodeKeysetCursor('erasures', rows[limit - 1].position);
  return page;
}

/** The latest erasure of session `sessionId` of tenant `tenantId`, or null when it was never erased. */
export function latestErasure(store: ReadModelStore, tenantId: string, sessionId: string): ErasureRecordRow | null {
  const row = store.db
    .prepare(`SELECT ${ERASURE_COLUMNS} FROM erasures WHERE tenant_id = ? AND session_id = ? ORDER BY position DESC LIMIT 1`)
    .safeIntegers(true)
    .get(tenantId, sessionId) as ReadRow | undefined;
  return row ? rowOf(row) : null;
}

/**
 * The 404 of every route that addresses one session (`GET /v1/sessions/{id}`, its window, log,
 * policy and compactions, `POST …/compactions`, `PUT …/policy` clearing a policy, over HTTP and NATS)
 * when the session has no event: {@link SessionNotFoundError} (`session_not_found`) saying when the
 * id was last erased (message and `details.erasedAt`, from {@link latestErasure}) when `readModels`
 * hold an erasure of it, else the plain "does not exist" one (an id never written, another tenant's,
 * or an erasure these read models have not applied yet; without `readModels`, always that one).
 * `behind`: how far those read models lag the log, when they do (the message then says up to where
 * it holds: `SessionReads.notFound`).
 */
export function sessionNotFound(readModels: ReadModelStore | undefined, tenantId: string, sessionId: string, behind?: ReadModelsBehind): SessionNotFoundError {
  return new SessionNotFoundError(sessionId, readModels ? latestErasure(readModels, tenantId, sessionId)?.erasedAt : undefined, undefined, false, behind);
}

/**
 * The 409 `wrong_expected_revision` of a failed revision check (`expected`: what the request sent;
 * `actual`: the session's last revision, decimal, or `no_stream`), the one rule for it on every
 * route that takes `expectedRevision`: with `actual` `no_stream` and an erasure of the session in
 * `readModels` ({@link latestErasure}), it says when the session was erased (message and
 * `details.erasedAt`, as {@link sessionNotFound} does for reads); when a numeric `expected` is at or
 * before the `lastRevision` of the session's latest erasure and `actual` after it, the revision is of
 * an erased life and the session was written again since: the same `erasedAt`, and a message saying
 * so (newcomer ncfinal74 F1: it offered the current revision to retry with); else the plain conflict (also
 * when the read models cannot be read: the write's answer does not depend on them).
 */
export function revisionConflict(
  readModels: ReadModelStore | undefined | null,
  tenantId: string,
  sessionId: string,
  expected: string,
  actual: string,
): RevisionConflictError {
  // A numeric revision before the current one may be of an erased life (revisions are not reused across lives): asked on this error path only.
  const mayBeOfEarlierLife = actual !== 'no_stream' && /^\d+$/.test(expected) && /^\d+$/.test(actual) && BigInt(expected) < BigInt(actual);
  let latest: ErasureRecordRow | null;
  try {
    latest = (actual === 'no_stream' || mayBeOfEarlierLife) && readModels ? latestErasure(readModels, tenantId, sessionId) : null;
  } catch {
    latest = null;
  }
  if (actual === 'no_stream') return new RevisionConflictError(expected, actual, undefined, latest?.erasedAt);
  // The latest erasure closed a life at or after the expected revision, and the session was written again since.
  const lifeStart = latest?.lastRevision != null ? latest.lastRevision + 1n : undefined;
  if (mayBeOfEarlierLife && lifeStart !== undefined && BigInt(expected) < lifeStart && lifeStart <= BigInt(actual))
    return new RevisionConflictError(expected, actual, undefined, latest!.erasedAt, lifeStart);
  return new RevisionConflictError(expected, actual);
}

/**
 * Global positions (bigints, ascending) of the erasure records of session `sessionId` of tenant
 * `tenantId` these read models hold at or below position `upTo` (bigint; pass the projector's
 * checkpoint: the rows up to it are complete). One read of `erasures_by_session`.
 */
export function erasurePositionsOfSession(store: ReadModelStore, tenantId: string, sessionId: string, upTo: bigint): bigint[] {
  const rows = store.db
    .prepare(`SELECT position FROM erasures WHERE tenant_id = ? AND session_id = ? AND position <= ? ORDER BY position`)
    .safeIntegers(true)
    .all(tenantId, sessionId, upTo) as Array<{ position: bigint }>;
  return rows.map((r) => r.position);
}
