import { createHash } from 'node:crypto';
import type { SessionEventType } from '@lib/compaction';
import { InvalidQueryError } from '../invalid-query-error';
import { toIsoTime } from '../iso-time';
import type { ReadModelStore } from '../read-model-store';
import { decodeRecallCursor, encodeRecallCursor } from '../recall-cursor';
import { recallQueryPlan } from '../recall-match-expression';

/** Default page size of {@link searchRecall}. */
export const DEFAULT_RECALL_LIMIT = 20;
/** Largest page size of {@link searchRecall}. */
export const MAX_RECALL_LIMIT = 100;
/** Markers around matched words in snippets. */
export const RECALL_SNIPPET_OPEN = '<mark>';
/** See {@link RECALL_SNIPPET_OPEN}. */
export const RECALL_SNIPPET_CLOSE = '</mark>';

const EVENT_TYPES: readonly SessionEventType[] = ['user', 'assistant', 'tool', 'system', 'summary'];

/** Parameters of {@link searchRecall}. Every filter is optional and they combine with AND. */
export interface RecallSearch {
  /** Tenant whose sessions are searched (required). */
  tenantId: string;
  /** User text; every word must occur (see `recallMatchExpression`). */
  q: string;
  /** Only this session (public session id within the tenant). */
  sessionId?: string;
  /** Owner of the session (the first `userId` appended to it). */
  userId?: string;
  /** Event kind: `user`, `assistant`, `tool`, `system` or `summary`. */
  type?: string;
  /** true: only archived events; false: only active ones. */
  archived?: boolean;
  /** Only events archived by this compaction. */
  compactionId?: string;
  /** Events created at or after this time (ISO-8601 string or Date; inclusive). */
  from?: string | Date;
  /** Events created before this time (ISO-8601 string or Date; exclusive). */
  to?: string | Date;
  /** Page size, integer 1..{@link MAX_RECALL_LIMIT}, default {@link DEFAULT_RECALL_LIMIT}. */
  limit?: number;
  /** `nextCursor` of the previous page, with the same q and filters. */
  cursor?: string;
}

/** One recall hit. */
export interface RecallHit {
  /** Public session id (within the searched tenant). */
  sessionId: string;
  /** The client's event id (summaries: the summary id). */
  eventId: string;
  /** Event kind (`user`, `assistant`, `tool`, `system`, `summary`). */
  type: string;
  /** Matching excerpt, matched words wrapped in {@link RECALL_SNIPPET_OPEN}/{@link RECALL_SNIPPET_CLOSE}, cut parts marked `…`. */
  snippet: string;
  /** Relevance, higher is better (minus the FTS5 BM25 rank); comparable within one query only. */
  score: number;
  /** Whether a compaction archived the event. */
  archived: boolean;
  /** The compaction that archived it, when archived. */
  compactionId?: string;
  /** When the event was created (ISO-8601 UTC; the client's `createdAt` when it gave one). */
  createdAt: string;
}

/** A page of hits, best first; `nextCursor` is present when more hits may follow. */
export interface RecallPage {
  items: RecallHit[];
  nextCursor?: string;
}

/**
 * Full-text search over every conversation event and summary ever projected, archived included
 * (texts, tool call names and raw arguments, tool response names and data), ranked by BM25.
 * Pages are keyset-paginated: following `nextCursor` returns every hit once while the read
 * models do not change.
 *
 * @throws InvalidQueryError naming `q`, `limit`, `type`, `from`, `to`, `cursor`, `sessionId`,
 *   `userId`, `compactionId` or `tenantId` when that value cannot be used. FTS5 syntax errors
 *   never escape: `q` is always turned into quoted phrases.
 */
export function searchRecall(store: ReadModelStore, search: RecallSearch): RecallPage {
  const plan = recallQueryPlan(search.q);
  const { table, match } = plan;
  const limit = search.limit ?? DEFAULT_RECALL_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RECALL_LIMIT)
    throw new InvalidQueryError('limit', `must be an integer from 1 to ${MAX_RECALL_LIMIT}`);
  for (const name of ['tenantId', 'sessionId', 'userId', 'compactionId'] as const) {
    const value = search[name];
    if ((name === 'tenantId' || value !== undefined) && (typeof value !== 'string' || value === ''))
      throw new InvalidQueryError(name, 'must be a non-empty string');
  }
  if (search.type !== undefined && !EVENT_TYPES.includes(search.type as SessionEventType)) {
    throw new InvalidQueryError('type', `must be one of ${EVENT_TYPES.join(', ')}`);
  }
  if (search.archived !== undefined && typeof search.archived !== 'boolean') throw new InvalidQueryError('archived', 'must be true or false');
  const from = search.from === undefined ? undefined : parseTime('from', search.from);
  const to = search.to === undefined ? undefined : parseTime('to', search.to);

  const conditions = ['s.tenant_id = @tenantId'];
  const params: Record<string, unknown> = { tenantId: search.tenantId };
  if (match !== null) {
    conditions.push(`${table} MATCH @match`);
    params.match = match;
  }
  plan.substrings.forEach((term, i) => {
    conditions.push(`${table}.body LIKE @substring${i} ESCAPE '\\'`);
    params[`substring${i}`] = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  });
  const filter = (sql: string, name: string, value: unknown) => {
    if (value === undefined) return;
    conditions.push(sql);
    params[name] = value;
  };
  filter('s.session_id = @sessionId', 'sessionId', search.sessionId);
  filter('s.user_id = @userId', 'userId', search.userId);
  filter('l.kind = @type', 'type', search.type);
  filter('l.archived = @archived', 'archived', search.archived === undefined ? undefined : search.archived ? 1 : 0);
  filter('l.archived_by = @compactionId', 'compactionId', search.compactionId);
  filter('l.created_at >= @from', 'from', from);
  filter('l.created_at < @to', 'to', to);

  const fingerprint = createHash('sha256')
    .update(
      JSON.stringify([
        table,
        match,
        plan.substrings,
        search.tenantId,
        search.sessionId,
        search.userId,
        search.type,
        search.archived,
        search.compactionId,
        from,
        to,
      ]),
    )
    .digest('base64url')
    .slice(0, 16);
  let keyset = '';
  if (search.cursor !== undefined) {
    const cursor = decodeRecallCursor(search.cursor, fingerprint);
    keyset = 'WHERE rank > @afterRank OR (rank = @afterRank AND position > @afterPosition)';
    params.afterRank = cursor.rank;
    params.afterPosition = cursor.position;
  }
  params.take = limit + 1;

  // Rank and page without snippets (snippet() is costly on every match of a common word), then
  // build the snippets of the page's rows only.
  const sql = `
    SELECT * FROM (
      SELECT l.position AS position, s.session_id AS sessionId, l.event_id AS eventId, l.kind AS type,
             l.archived AS archived, l.archived_by AS archivedBy, l.created_at AS createdAt,
             ${match !== null ? `${table}.rank` : '0.0'} AS rank
      FROM ${table}
      JOIN session_log l ON l.position = ${table}.rowid
      JOIN sessions s ON s.session_key = l.session_key
      WHERE ${conditions.join(' AND ')}
    ) ${keyset}
    ORDER BY rank, position
    LIMIT @take`;

  let rows: Array<{
    position: bigint;
    sessionId: string;
    eventId: string;
    type: string;
    archived: bigint;
    archivedBy: string | null;
    createdAt: string;
    rank: number;
    snippet?: string;
  }>;
  try {
    const stmt = store.db.prepare(sql).safeIntegers(true);
    rows = stmt.all(params) as typeof rows;
    // Matches are marked with control characters that never occur in indexed text (they are
    // stripped from it), the excerpt is HTML-escaped, then the marks become <mark> tags: the stored
    // text can never inject markup into a snippet.
    // Without a MATCH (only short unspaced words) the excerpt is the document's start, unmarked.
    const snippetOf = store.db.prepare(
      match !== null
        ? `SELECT snippet(${table}, 0, char(1), char(2), '…', 24) AS snippet FROM ${table} WHERE ${table} MATCH @match AND rowid = @rowid`
        : `SELECT substr(body, 1, 64) || CASE WHEN length(body) > 64 THEN '…' ELSE '' END AS snippet FROM ${table} WHERE rowid = @rowid`,
    );
    for (const row of rows.slice(0, limit)) {
      const raw = (snippetOf.get(match !== null ? { match, rowid: row.position } : { rowid: row.position }) as { snippet: string } | undefined)?.snippet ?? '';
      row.snippet = escapeHtml(raw).replaceAll('\u0001', RECALL_SNIPPET_OPEN).replaceAll('\u0002', RECALL_SNIPPET_CLOSE);
    }
  } catch (error) {
    // The MATCH expression is built from quoted phrases only; this is a last line of defence.
    if (error instanceof Error && /fts5|syntax/i.test(error.message))
      throw new InvalidQueryError('q', 'cannot be searched; use words without special characters');
    throw error;
  }

  const page = rows.slice(0, limit);
  const items = page.map((row): RecallHit => {
    const hit: RecallHit = {
      sessionId: row.sessionId,
      eventId: row.eventId,
      type: row.type,
      snippet: row.snippet ?? '',
      score: -Number(row.rank),
      archived: Number(row.archived) === 1,
      createdAt: row.createdAt,
    };
    if (row.archivedBy !== null) hit.compactionId = row.archivedBy;
    return hit;
  });
  const last = page[page.length - 1];
  return rows.length > limit && last ? { items, nextCursor: encodeRecallCursor({ rank: Number(last.rank), position: last.position, fingerprint }) } : { items };
}

/** Escapes `&`, `<`, `>`, `"` and `'` for HTML. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function parseTime(parameter: string, value: string | Date): string {
  const iso = toIsoTime(value);
  if (iso === '' || (typeof value === 'string' && iso === value && Number.isNaN(new Date(value).getTime()))) {
    throw new InvalidQueryError(parameter, 'must be an ISO-8601 time such as 2024-05-01T12:00:00Z');
  }
  return iso;
}
