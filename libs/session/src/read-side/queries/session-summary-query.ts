import { hasSubMillisecond, utcMillisTime } from '../../domain/utc-time-text';
import type { EstimatorName } from '../../events/session-stream-events';
import { decodeKeysetCursor, encodeKeysetCursor, listFiltersDigest } from '../keyset-cursor';
import type { ReadModelStore } from '../read-model-store';
import { SUMMARIZER_SPEND_COLUMNS } from '../session-summary-counts';
import { summarizerFigures, type SummarizerFigures } from './compaction-history-item';
import { policyOf, type ActivePolicy } from './session-policy-query';
import { findSession, type SessionRow } from './session-row';

/** Default page size of {@link listSessionSummaries}. */
export const DEFAULT_SESSION_LIMIT = 50;

/** What an auditor sees of one session without reading its log. */
export interface SessionSummary {
  sessionId: string;
  /** The user id given with the session's first append that named one, or null. */
  userId: string | null;
  /** Revision (bigint) of the session's last event (conversation or decision). */
  revision: bigint;
  /** Global position (bigint) of that event: the activity order of the session list. */
  lastPosition: bigint;
  /** Conversation events ever appended (archived ones included; summaries inserted by compactions excluded). */
  eventCount: number;
  /** Events in the active window now (summaries included). */
  windowEvents: number;
  /** Size of the active window under `estimator` (tokens, or UTF-16 code units for `chars`). */
  windowTokens: number;
  estimator: EstimatorName;
  /**
   * Recorded compactions with outcome `compacted`. A failed pass is counted in
   * `failedCompactionCount` only, also one that archived superseded system messages (and so
   * changed the window).
   */
  compactionCount: number;
  /** Recorded failed compactions. */
  failedCompactionCount: number;
  /**
   * Recorded passes that could archive nothing (`noop`): automatic ones while the policy's trigger
   * still fired (DESIGN §3.5: at most one per wait period; a policy that cannot be met), and passes
   * recorded for the summarizer calls they discarded before finding nothing to archive.
   */
  noopCompactionCount: number;
  /**
   * Whether the last recorded pass that completed (`compacted` or `noop`) left its trigger firing:
   * true for a policy that cannot be met (automatic passes then wait for the window to grow). Null
   * when none was recorded, it had no trigger, or it was recorded before this was.
   */
  triggerStillFires: boolean | null;
  /**
   * What the session's recorded decisions spent on the summarizer, summed over them (each
   * decision's `summarizer` figures, as its history item shows them), with `discarded` the part
   * spent on replies the passes did not use (a `noop` recorded for them included). A pass that recorded no decision is not in it: a
   * commanded one's calls are in its answer's `discardedSummarizerCalls`, an automatic one's (no
   * answer) only in `/metrics`, without a session. Zeros
   * when no summarizer was called. An erasure takes it away with the session's history.
   */
  summarizerSpend: SummarizerFigures & { discarded: SummarizerFigures };
  /** The auto-compaction policy in force, or null. */
  policy: ActivePolicy | null;
  /** ISO-8601 UTC time the store recorded the session's first event. */
  createdAt: string;
  /** ISO-8601 UTC time the store recorded the session's last event. */
  lastActivityAt: string;
}

/** Filters and page of {@link listSessionSummaries}. */
export interface SessionListQuery {
  tenantId: string;
  userId?: string;
  /** ISO-8601 UTC: only sessions whose last activity is at or after it. */
  updatedSince?: string;
  /** ISO-8601 UTC: only sessions whose last activity is before it (exclusive): a clean-up job's sessions inactive since then. */
  updatedBefore?: string;
  /** Estimator of `windowTokens`. */
  estimator: EstimatorName;
  /** 1..100, default {@link DEFAULT_SESSION_LIMIT}. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** A page of sessions, newest activity first; `nextCursor` is present when more follow. */
export interface SessionSummaryPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

const SESSION_COLUMNS = `session_key AS sessionKey, session_id AS sessionId, tenant_id AS tenantId, user_id AS userId, revision,
  last_position AS lastPosition, created_at AS createdAt, updated_at AS updatedAt`;

/**
 * The tenant's sessions, newest activity first (by the global position of their last event),
 * keyset-paginated on that position: a page never repeats a session of an earlier page, and a
 * session not written to while paging appears exactly once; one written to meanwhile moves to the
 * front (ask again with `updatedSince` to see it).
 * @throws InvalidQueryError (400) on a malformed cursor.
 */
export function listSessionSummaries(store: ReadModelStore, query: SessionListQuery): SessionSummaryPage {
  const limit = query.limit ?? DEFAULT_SESSION_LIMIT;
  const where = ['tenant_id = @tenantId'];
  const params: Record<string, unknown> = { tenantId: query.tenantId, limit: limit + 1 };
  if (query.userId !== undefined) {
    where.push('user_id = @userId');
    params.userId = query.userId;
  }
  if (query.updatedSince !== undefined) {
    // Activity times are kept to the millisecond: "at or after" an instant inside a millisecond
    // (digits past it) is "after" that millisecond; compared exactly, not cut.
    where.push(hasSubMillisecond(query.updatedSince) ? 'updated_at > @updatedSince' : 'updated_at >= @updatedSince');
    params.updatedSince = utcMillisTime(query.updatedSince);
  }
  if (query.updatedBefore !== undefined) {
    // "Before" an instant inside a millisecond (digits past it) includes that millisecond itself.
    where.push(hasSubMillisecond(query.updatedBefore) ? 'updated_at <= @updatedBefore' : 'updated_at < @updatedBefore');
    params.updatedBefore = utcMillisTime(query.updatedBefore);
  }
  // The filters as the query applies them (times to the millisecond, with their comparison): one digest per list.
  const filters = listFiltersDigest([
    where.join(' AND '),
    query.tenantId,
    query.userId,
    params.updatedSince as string | undefined,
    params.updatedBefore as string | undefined,
  ]);
  if (query.cursor !== undefined) {
    where.push('last_position < @before');
    params.before = decodeKeysetCursor('sessions', query.cursor, undefined, filters);
  }
  const rows = store.db
    .prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${where.join(' AND ')} ORDER BY last_position DESC LIMIT @limit`)
    .safeIntegers(true)
    .all(params) as SessionRow[];
  const page: SessionSummaryPage = { sessions: rows.slice(0, limit).map((row) => summarize(store, row, query.estimator)) };
  if (rows.length > limit) page.nextCursor = encodeKeysetCursor('sessions', rows[limit - 1].lastPosition, undefined, filters);
  return page;
}

/** One session's summary; null when it is unknown or belongs to another tenant (→ 404). */
export function getSessionSummary(store: ReadModelStore, tenantId: string, sessionId: string, estimator: EstimatorName): SessionSummary | null {
  const row = findSession(store, tenantId, sessionId);
  return row ? summarize(store, row, estimator) : null;
}

/**
 * The summary of the session `row`: the counts and summarizer totals kept on its `sessions` row (`SessionSummaryCounts`),
 * the active window's size (O(window)), the last recorded pass through `compactions_by_revision`
 * and the policy through `session_log_policies`. Nothing here reads the session's whole log or
 * compaction history.
 */
function summarize(store: ReadModelStore, row: SessionRow, estimator: EstimatorName): SessionSummary {
  const counts = store.db
    .prepare(
      `SELECT coalesce(c.event_count, 0) AS eventCount,
              (SELECT COUNT(*) FROM window_entries WHERE session_key = @key) AS windowEvents,
              (SELECT COALESCE(SUM(json_extract(costs_json, @costPath)), 0) FROM window_entries WHERE session_key = @key) AS windowTokens,
              coalesce(c.compaction_count, 0) AS compactionCount,
              coalesce(c.failed_compaction_count, 0) AS failedCompactionCount,
              coalesce(c.noop_compaction_count, 0) AS noopCompactionCount,
              ${spendColumns('total')},
              ${spendColumns('discarded')},
              (SELECT json_extract(data_json, '$.triggerStillFires') FROM compactions WHERE session_key = @key AND outcome != 'failed'
                ORDER BY revision DESC LIMIT 1) AS stillFires
       -- The row erased meanwhile (another connection's commit between the reads): no count, as the rows counted are gone too.
       FROM (SELECT 1) LEFT JOIN sessions c ON c.session_key = @key`,
    )
    .get({ key: row.sessionKey, costPath: `$.${estimator}` }) as {
    eventCount: number;
    windowEvents: number;
    windowTokens: number;
    compactionCount: number;
    failedCompactionCount: number;
    noopCompactionCount: number;
    /** SQLite's JSON boolean: 1, 0, or null. */
    stillFires: number | null;
  } & SpendRow;
  const { stillFires, eventCount, windowEvents, windowTokens, compactionCount, failedCompactionCount, noopCompactionCount } = counts;
  const figures = { eventCount, windowEvents, windowTokens, compactionCount, failedCompactionCount, noopCompactionCount };
  return {
    sessionId: row.sessionId,
    userId: row.userId,
    revision: row.revision,
    lastPosition: row.lastPosition,
    ...figures,
    triggerStillFires: stillFires === null ? null : stillFires === 1,
    estimator,
    summarizerSpend: { ...summarizerFigures(spendOf(counts, 'total')), discarded: summarizerFigures(spendOf(counts, 'discarded')) },
    policy: policyOf(store, row.sessionKey),
    createdAt: row.createdAt,
    lastActivityAt: row.updatedAt,
  };
}

/** The summarizer total columns of one part (`total` or `discarded`) as `<part>_<figure>` result columns, 0 when the row is gone. */
function spendColumns(part: keyof typeof SUMMARIZER_SPEND_COLUMNS): string {
  return Object.entries(SUMMARIZER_SPEND_COLUMNS[part])
    .map(([figure, column]) => `coalesce(c.${column}, 0) AS ${part}_${figure}`)
    .join(', ');
}

/** A summary row's summarizer totals (see {@link spendColumns}). */
type SpendRow = Record<`${keyof typeof SUMMARIZER_SPEND_COLUMNS}_${keyof (typeof SUMMARIZER_SPEND_COLUMNS)['total']}`, number>;

/** One part of a summary row's summarizer totals. */
function spendOf(row: SpendRow, part: keyof typeof SUMMARIZER_SPEND_COLUMNS) {
  return {
    calls: row[`${part}_calls`],
    promptTokens: row[`${part}_promptTokens`],
    completionTokens: row[`${part}_completionTokens`],
    retries: row[`${part}_retries`],
    unreportedUsageCalls: row[`${part}_unreportedUsageCalls`],
  };
}
