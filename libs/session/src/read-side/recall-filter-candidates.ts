import type { ReadModelStore } from './read-model-store';

/**
 * Most rows {@link recallFilterCandidates} lists: past it a filter is not selective enough to
 * start from, and recall walks the query's matches as without it.
 */
export const RECALL_FILTER_CANDIDATE_LIMIT = 1000;

/**
 * Positions between two candidates (see {@link recallFilterCandidates}) from which recall walks
 * the matches on each side of the gap in two FTS5 queries, not across it. Measured on the 2-core
 * reference machine, 100k matches of one word in one session: a walk costs about 0.46 µs per
 * match (the `session_log` and `sessions` rows joined to each), one more FTS5 query of a word of
 * 200k rows about 80 µs (250 µs at load average 17: FTS5 seeks the word in each segment), so a
 * gap of this many positions costs about as much to walk as to skip.
 */
export const RECALL_FILTER_WALK_RATIO = 200;

/** What {@link recallFilterCandidates} reads: recall's filters and the positions searched. */
export interface RecallFilterScope {
  /** The searched session's key (`sessions.session_key`), when recall is limited to one session. */
  sessionKey?: string;
  /** recall's `archived` filter. */
  archived?: boolean;
  /** recall's `compactionId` filter. */
  compactionId?: string;
  /** The paging's moment (a global position) when a cursor is followed: the filters apply as of it (see `archiveFilter`). */
  asOf?: bigint;
  /** Lowest position searched (inclusive). */
  lo: bigint;
  /** Highest position searched (inclusive). */
  hi: bigint;
}

/**
 * The positions, ascending, of the rows of indexed documents (conversation events and summaries)
 * between `lo` and `hi` that recall's selective filters can pass, found without touching the word
 * index: with `compactionId`, the rows that compaction archived (in any session and tenant: the
 * other filters still apply), from `session_log_by_archive`; else with `archived: false` and a
 * session, the session's rows not archived, which are the rows of its active window's entries
 * (each entry's id between its `first_revision` and `revision`, see `window_entries`), and when
 * the paging has a moment (`asOf`) also those archived by a compaction that wrote a row after it
 * (an event archived since the paging's first page is still active in it), from
 * `session_log_by_archive`. Every row these filters pass (as of `asOf`) is among them: a row is
 * archived only by the `EventsArchived` of its compaction, a later row of the same session.
 *
 * Undefined when no such filter applies, or more than {@link RECALL_FILTER_CANDIDATE_LIMIT} rows
 * are candidates (read: at most that many + 1 index entries, or window entries with their log rows,
 * and the window's entries outside `lo`–`hi` too; without a session, every entry of the compaction).
 */
export function recallFilterCandidates(store: ReadModelStore, scope: RecallFilterScope): bigint[] | undefined {
  const params: Record<string, unknown> = { lo: scope.lo, hi: scope.hi, cap: RECALL_FILTER_CANDIDATE_LIMIT + 1 };
  // The index holds archived rows only: each query says so, or SQLite cannot use it.
  const archivedRows = (where: string) =>
    `SELECT position FROM session_log INDEXED BY session_log_by_archive WHERE ${where} AND archived_by IS NOT NULL AND kind IS NOT NULL AND position BETWEEN @lo AND @hi`;
  let sql: string;
  if (scope.compactionId !== undefined) {
    params.compactionId = scope.compactionId;
    if (scope.sessionKey !== undefined) params.sessionKey = scope.sessionKey;
    sql = archivedRows(`archived_by = @compactionId${scope.sessionKey === undefined ? '' : ' AND session_key = @sessionKey'}`);
  } else if (scope.archived === false && scope.sessionKey !== undefined) {
    params.sessionKey = scope.sessionKey;
    // The session's rows not archived: each window entry's id between its first_revision and revision
    // (see SessionReadModelWriter). CROSS JOIN keeps the window outside: the other order walks the session's log.
    sql = `SELECT l.position FROM window_entries w
      CROSS JOIN session_log l INDEXED BY session_log_by_revision
        ON l.session_key = w.session_key AND l.revision BETWEEN w.first_revision AND w.revision AND l.event_id = w.event_id
      WHERE w.session_key = @sessionKey AND l.archived_by IS NULL AND l.kind IS NOT NULL AND l.position BETWEEN @lo AND @hi`;
    if (scope.asOf !== undefined) {
      params.asOf = scope.asOf;
      sql += ` UNION ALL ${archivedRows(`archived_by IN (SELECT compaction_id FROM session_log INDEXED BY session_log_by_compaction
        WHERE session_key = @sessionKey AND compaction_id IS NOT NULL AND position > @asOf) AND session_key = @sessionKey`)}`;
    }
  } else {
    return undefined;
  }
  const positions = store.statement(`SELECT position FROM (${sql}) LIMIT @cap`).pluck().all(params) as bigint[];
  if (positions.length > RECALL_FILTER_CANDIDATE_LIMIT) return undefined;
  return positions.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
