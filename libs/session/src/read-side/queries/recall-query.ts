import { createHash } from 'node:crypto';
import { isRealEvent, type SessionEventType } from '@lib/compaction';
import { InvalidQueryError } from '../invalid-query-error';
import { isoTimeMillis, utcExactTime, utcMillisTime } from '../../domain/utc-time-text';
import type { ReadModelStore } from '../read-model-store';
import { decodeRecallCursor, encodeRecallCursor, type RecallCursor } from '../recall-cursor';
import { recallQueryPlan, type RecallQueryPlan } from '../recall-match-expression';
import { RECALL_FILTER_WALK_RATIO, recallFilterCandidates } from '../recall-filter-candidates';
import { tenantRecallIndexTables } from '../recall-index-tables';
import { documentLengthSql, frozenRankParams, frozenRankSql, RECALL_RANKED_MATCH_LIMIT, readIndexTotals, sqliteLn, type RecallRankStats } from '../recall-rank';
import { markSubstrings, substringExcerpt } from '../recall-substring-snippet';
import { boundSnippet } from '../recall-snippet-bound';
import { marksOnClusters, snippetCutsOnClusters } from '../recall-snippet-clusters';
import { cutMarkCompleted } from '../recall-snippet-cut-mark';
import { RECALL_WHOLE_CLUSTERS_FUNCTION } from '../read-model-store';
import { RECALL_SCRIPT_BOUNDARY } from '../script-boundary';
import { firstRecallRowid, lastRecallRowid, RECALL_CHUNK_BITS, recallPositionSql } from '../recall-chunks';
import { anyPhrase, crossRowHits, likePattern } from '../recall-cross-chunk';
import { largeRowSnippet, RECALL_SNIPPET_WHOLE_ROW_LIMIT } from '../recall-large-row-snippet';

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

/** See `recall-rank` (where recall cursors' statistics are checked against it). */
export { RECALL_RANKED_MATCH_LIMIT };

/**
 * Rows of the tenant's trigram index one page of a substring-only query (order `oldest`: words of
 * one or two characters of an unspaced script, or emoji) reads at most (other tenants' rows are in
 * their own indexes, never read). Such words cannot use the trigram index, so each
 * row's text is scanned (`LIKE`): about 65 µs per row of 16,384 ideographs on the 2-core
 * reference machine, so a page costs at most ~65 ms however many events the tenant holds. A page
 * may then hold fewer hits than `limit` (even none) and still carry a `nextCursor` that continues
 * the scan after the last row read.
 */
export const RECALL_SUBSTRING_SCAN_LIMIT = 1000;

/**
 * How the hits of a page are ordered:
 * - `relevance`: BM25, best first (ties: oldest first);
 * - `newest`: every word of the query matches more than {@link RECALL_RANKED_MATCH_LIMIT} events
 *   of the tenant's index, too common to rank within the latency budget: newest first, `score` 0 (with a
 *   rarer word too, the order is `relevance` and only the rarer words score);
 * - `oldest`: only words of one or two characters of an unspaced script or emoji (substring
 *   matches, which have no rank): oldest first, `score` 0; each page reads at most
 *   {@link RECALL_SUBSTRING_SCAN_LIMIT} rows of the tenant's index, so it may be short and still have a `nextCursor`.
 *
 * With `sessionId`, the session's first mention ({@link RecallHit.firstMention}) comes first in
 * every order.
 */
export type RecallOrder = 'relevance' | 'newest' | 'oldest';

/** One recall hit. */
export interface RecallHit {
  /** Public session id (within the searched tenant). */
  sessionId: string;
  /** The client's event id (summaries: the summary id). */
  eventId: string;
  /** Event kind (`user`, `assistant`, `tool`, `system`, `summary`). */
  type: string;
  /**
   * The event's revision in its session's stream (decimal text): where it is in the log (`GET …/events`) and the window
   * it is in (`…/window?atRevision=`), without paging the log for its id (newcomer ncrecall69 F3).
   */
  revision: string;
  /** Matching excerpt, matched words wrapped in {@link RECALL_SNIPPET_OPEN}/{@link RECALL_SNIPPET_CLOSE} (whole grapheme clusters), cut parts marked `…` (cut between clusters). */
  snippet: string;
  /** Relevance, higher is better (minus the FTS5 BM25 rank); comparable within one query only; 0 when the page is not in `relevance` order. */
  score: number;
  /** Whether a compaction archived the event. */
  archived: boolean;
  /** The compaction that archived it, when archived. */
  compactionId?: string;
  /**
   * When the event was created, as `Date.toISOString` text (UTC, milliseconds; finer digits cut, as
   * everywhere the API answers a time): the client's `createdAt` when it gave one, else when it was appended.
   */
  createdAt: string;
  /**
   * Present (true) on the session's first mention: with `sessionId`, the earliest matching event
   * of the session that is neither the system message nor a summary, i.e. where the conversation
   * first said it (a user message, a tool call, a tool result, an assistant's answer). It is the
   * first hit of the first page, whatever its score; later repeats and summaries that cite it
   * follow in the page's order. The same event with or without the other filters (`type`,
   * `archived`, `compactionId`, `from`/`to`): when they leave it out, no hit is marked.
   */
  firstMention?: true;
}

/**
 * A page of hits in `order`; `nextCursor` is present when more hits may follow: the next page of
 * this paging (the hits as of its first page, in that page's order, see {@link searchRecall}).
 */
export interface RecallPage {
  items: RecallHit[];
  nextCursor?: string;
  order: RecallOrder;
}

interface HitRow {
  position: bigint;
  /** The index row (chunk, see `recall-chunks`) the hit's snippet is cut from: its best-ranked matching chunk in `relevance` order, else its first matching one. */
  chunkRow: bigint;
  /**
   * The row's `snippet()` as FTS5 gives it (marks `\u0001`/`\u0002`), when the query that found it took it ({@link rawSnippetSql}:
   * {@link LONG_ROW} for a long row, whose snippet {@link largeRowSnippet} cuts); null or absent when it did not.
   */
  rawSnippet?: string | null;
  sessionId: string;
  eventId: string;
  type: string;
  revision: bigint | number;
  archived: bigint;
  archivedBy: string | null;
  createdAt: string;
  rank: number;
  snippet?: string;
}

/**
 * Full-text search over every conversation event and summary of the tenant ever projected, archived
 * included (texts, tool call names and raw arguments, tool response names and data), in the
 * tenant's own indexes (`recall-index-tables`: no statistic, count or score depends on another
 * tenant's events). Ranked by BM25 over the query's words that match at most
 * {@link RECALL_RANKED_MATCH_LIMIT} events of the tenant's index (the
 * others must occur but do not score), newest first when there is no such word (the answer's
 * `order` says which, see {@link RecallOrder}). With `sessionId`, the session's
 * first mention of the query comes first ({@link RecallHit.firstMention}).
 *
 * An event held in several index rows (`recall-chunks`) is a hit when it holds every word, in one
 * row or across its rows (`recall-cross-chunk`, read models 22); a word of several tokens (a
 * phrase) lies whole in one row. A hit across rows is scored and snipped from one row: in
 * `relevance` order the one with the best BM25 over the ranked words it holds (the others score 0
 * there), otherwise its first row holding a word; the snippet marks every word of that row.
 *
 * Paging: `nextCursor` continues the paging its first page started, the hits as of that page
 * (global positions up to the log's head then, `asOf` in the cursor): following it returns each of
 * them exactly once, in the first page's order, whatever is appended, compacted or archived
 * meanwhile (an `archived` or `compactionId` filter applies as of that moment; an erased session's
 * hits are gone). Events appended since are not in the paging (a new search finds them). In
 * `relevance` order the pages rank with the BM25 statistics of the first page (see
 * `recall-rank`), so `score`s compare across the pages. Every page reads one snapshot of the
 * read models ({@link ReadModelStore.snapshot}).
 *
 * @throws InvalidQueryError naming `q`, `limit`, `type`, `from`, `to`, `cursor`, `sessionId`,
 *   `userId`, `compactionId` or `tenantId` when that value cannot be used. FTS5 syntax errors
 *   never escape: `q` is always turned into quoted phrases.
 * @throws CursorOfAnotherReleaseError (`cursor_expired`) for a `cursor` another release made.
 */
export function searchRecall(store: ReadModelStore, search: RecallSearch): RecallPage {
  const plan = recallQueryPlan(search.q);
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
  const fingerprint = recallFingerprint(plan, search, from, to, asciiLowerCase);
  // A cursor of a release before 2026-12-07 fingerprinted q's ASCII letters as sent: still followed (hashed only for a cursor).
  const cursor =
    search.cursor === undefined
      ? undefined
      : decodeRecallCursor(search.cursor, fingerprint, plan.phrases.length, [recallFingerprint(plan, search, from, to, (text) => text)]);
  // The fingerprint covers the plan: only a forged cursor can name an order its query cannot have.
  if (cursor && (cursor.order === 'oldest') !== (plan.match === null))
    throw new InvalidQueryError('cursor', 'is not a cursor; pass the nextCursor of the previous page unchanged, with the same q and filters');
  try {
    return store.snapshot(() => recallPage(store, plan, { ...search, from, to, limit }, fingerprint, cursor));
  } catch (error) {
    // The MATCH expression is built from quoted phrases only; this is a last line of defence.
    if (error instanceof Error && /fts5|syntax/i.test(error.message))
      throw new InvalidQueryError('q', 'cannot be searched; use words without special characters');
    throw error;
  }
}

/**
 * The fingerprint a recall cursor carries (16 base64url characters of a SHA-256): the index searched,
 * the query's MATCH expression and substrings with `fold` applied, the tenant and every filter
 * (`from`, `to` as parsed). Two searches with one fingerprint answer the same hits in the same
 * order, so a cursor of one continues the other. {@link asciiLowerCase} as `fold` makes `q=Bag`
 * and `q=bag` one query (newcomer ncrecall69 F4): both indexes and `LIKE` fold ASCII case.
 */
function recallFingerprint(
  plan: RecallQueryPlan,
  search: RecallSearch,
  from: string | undefined,
  to: string | undefined,
  fold: (text: string) => string,
): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        // The index as releases before read models 11 named it, so a cursor made by one is followed by the other.
        plan.index === 'words' ? 'recall_fts' : 'recall_trigram',
        plan.match === null ? null : fold(plan.match),
        plan.substrings.map(fold),
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
}

/**
 * `text` with its ASCII capitals `A`–`Z` in lower case and every other character as it is: the
 * case folding every recall index shares (FTS5's unicode61 and trigram tokenizers fold more, SQLite's
 * `LIKE` only ASCII), so two queries that differ only there find the same rows.
 */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}

/** {@link searchRecall} once its input is checked: `from`/`to` as ISO text, `limit` set, `cursor` decoded. */
function recallPage(
  store: ReadModelStore,
  plan: RecallQueryPlan,
  search: RecallSearch & { from?: string; to?: string; limit: number },
  fingerprint: string,
  cursor: RecallCursor | undefined,
): RecallPage {
  const { match } = plan;
  const { limit } = search;
  const tables = tenantRecallIndexTables({ prepare: (sql) => store.statement(sql) }, search.tenantId);
  // A tenant none of whose documents was ever indexed has no index (an empty one would answer the same).
  if (tables === undefined) return { items: [], order: cursor?.order ?? (match === null ? 'oldest' : 'relevance') };
  // The tenant's own index: every count and statistic below is of its documents only.
  const table = tables[plan.index];
  // The paging's moment: the log's head when its first page is answered (every indexed row is at
  // or before it); the next pages read only the rows at or before it.
  const asOf = cursor?.asOf ?? (store.statement('SELECT coalesce(max(position), 0) AS head FROM session_log').get() as { head: bigint }).head;

  const conditions = ['s.tenant_id = @tenantId'];
  const params: Record<string, unknown> = { tenantId: search.tenantId };
  // Only the index rows of the session's span of global positions: a session-scoped query never
  // reads the matches of other sessions' older or newer events.
  const span: string[] = [];
  let sessionKey: string | undefined;
  if (search.sessionId !== undefined) {
    // A session's positions grow with its revisions, and its row's last_position is its last one:
    // two index lookups, not a walk of the session's log.
    const range = store
      .statement(
        `SELECT min((SELECT l.position FROM session_log l WHERE l.session_key = s.session_key ORDER BY l.revision LIMIT 1)) AS lo,
                max(s.last_position) AS hi, max(s.session_key) AS sessionKey, max(s.user_id) AS userId
         FROM sessions s WHERE s.tenant_id = @tenantId AND s.session_id = @sessionId`,
      )
      .get({ tenantId: search.tenantId, sessionId: search.sessionId }) as {
      lo: bigint | null;
      hi: bigint | null;
      sessionKey: string | null;
      userId: string | null;
    };
    span.push(`${table}.rowid BETWEEN @rowLo AND @rowHi`);
    sessionKey = range.sessionKey ?? undefined;
    // The session is the tenant's one of that id (the key names both): a `userId` filter its owner
    // does not pass leaves no row, so nothing of the index is read (an empty span). Not for a
    // substring scan (`oldest`), whose pages and cursors follow the rows it reads, hits or not.
    const owned = search.userId === undefined || range.userId === search.userId || plan.match === null;
    params.lo = owned ? (range.lo ?? 1n) : 1n;
    params.hi = owned ? (range.hi ?? 0n) : 0n;
    // Every chunk of the span's events (`recall-chunks`).
    params.rowLo = firstRecallRowid(params.lo as bigint);
    params.rowHi = lastRecallRowid(params.hi as bigint);
  }
  if (cursor !== undefined) {
    conditions.push(`${table}.rowid <= @asOfRow`);
    params.asOfRow = lastRecallRowid(asOf);
  }
  // What one index row must hold to be a hit (every word); `conditions` are the rest (filters, spans).
  const rowMatch: string[] = [];
  if (match !== null) {
    rowMatch.push(`${table} MATCH @match`);
    params.match = match;
  }
  plan.substrings.forEach((term, i) => {
    rowMatch.push(`${table}.body LIKE @substring${i} ESCAPE '\\'`);
    params[`substring${i}`] = likePattern(term);
  });
  // A flag must be a whole pair of its run of regional indicators (🇵🇰 is a substring of 🇯🇵🇰🇷).
  plan.wholeClusters.forEach((term, i) => {
    rowMatch.push(`${RECALL_WHOLE_CLUSTERS_FUNCTION}(${table}.body, @whole${i})`);
    params[`whole${i}`] = term;
  });
  const filter = (sql: string, name: string, value: unknown) => {
    if (value === undefined) return;
    conditions.push(sql);
    params[name] = value;
  };
  filter('s.session_id = @sessionId', 'sessionId', search.sessionId);
  filter('s.user_id = @userId', 'userId', search.userId);
  // The query and the session alone: where the session's first mention is looked for, whatever the other filters.
  const mentionConditions = [...conditions];
  filter('l.kind = @type', 'type', search.type);
  filter('l.created_at >= @from', 'from', search.from);
  filter('l.created_at < @to', 'to', search.to);
  const archive = archiveFilter(search.archived, search.compactionId, cursor === undefined ? undefined : asOf);
  conditions.push(...archive.conditions);
  Object.assign(params, archive.params);
  conditions.push(...span);
  mentionConditions.push(...span);
  const narrowed = [search.type, search.from, search.to, search.archived, search.compactionId].some((value) => value !== undefined);

  const joined = `FROM ${table}
      JOIN session_log l ON l.position = ${recallPositionSql(`${table}.rowid`)}
      JOIN sessions s ON s.session_key = l.session_key`;

  let rows: HitRow[];
  let order: RecallOrder;
  let stats: RecallRankStats | undefined;
  let first: HitRow | undefined;
  // Substring-only queries scan row texts: one page reads at most RECALL_SUBSTRING_SCAN_LIMIT rows
  // after the cursor (or the session's span); `scanEnd` is the last row this page may read.
  let scanEnd: bigint | undefined;
  let rankMatch = match;
  // The last row of the paging's scan: the index's last row in the session's span (with `sessionId`) and at or before the paging's moment.
  let scanLast = 0n;
  if (match === null) {
    order = 'oldest';
    const scanBound = search.sessionId !== undefined && (params.hi as bigint) < asOf ? (params.hi as bigint) : asOf;
    // Positions; the scan reads rows (chunks, `recall-chunks`) and always every chunk of an event it reads.
    const lastRow = store
      .statement(`SELECT rowid FROM ${table} WHERE rowid <= @scanBoundRow ORDER BY rowid DESC LIMIT 1`)
      .get({ scanBoundRow: lastRecallRowid(scanBound) }) as { rowid: bigint } | undefined;
    scanLast = lastRow === undefined ? 0n : lastRow.rowid >> RECALL_CHUNK_BITS;
    const spanStart = (params.lo as bigint | undefined) ?? 1n;
    const scanFrom = cursor?.position ?? spanStart - 1n;
    const endRow = store
      .statement(`SELECT rowid FROM ${table} WHERE rowid > @scanFromRow ORDER BY rowid LIMIT 1 OFFSET @scanRows`)
      .get({ scanFromRow: lastRecallRowid(scanFrom), scanRows: RECALL_SUBSTRING_SCAN_LIMIT - 1 }) as { rowid: bigint } | undefined;
    scanEnd = endRow === undefined ? undefined : endRow.rowid >> RECALL_CHUNK_BITS;
    if (scanEnd !== undefined) {
      conditions.push(`${table}.rowid <= @scanEndRow`);
      params.scanEndRow = lastRecallRowid(scanEnd);
    }
    if (cursor !== undefined) {
      conditions.push(`${table}.rowid > @scanFromRow`);
      params.scanFromRow = lastRecallRowid(scanFrom);
    }
  } else {
    if (cursor !== undefined) {
      // The order and the ranked words of the first page, whatever the index holds now.
      order = cursor.order;
      stats = cursor.stats;
    } else {
      const counts = phraseCounts(store, table, plan.phrases);
      const ranked = plan.phrases.flatMap((_, index) => (counts[index] <= RECALL_RANKED_MATCH_LIMIT ? [{ index, rows: counts[index] }] : []));
      order = ranked.length === 0 ? 'newest' : 'relevance';
      if (order === 'relevance') stats = { ...readIndexTotals(store, table), phrases: ranked };
    }
    if (stats !== undefined && stats.phrases.length < plan.phrases.length) {
      // BM25 over the selective words only; the common ones still have to occur (a walk of the
      // selective words' matches, seeking in the common words' lists), but are not scored.
      rankMatch = stats.phrases.map((p) => plan.phrases[p.index]).join(' ');
      params.match = rankMatch;
      params.fullMatch = match;
      rowMatch.push(`+${table}.rowid IN (SELECT rowid FROM ${table} WHERE ${table} MATCH @fullMatch)`);
    }
  }
  // The events of several index rows holding every word but in no one row (`recall-cross-chunk`):
  // a second branch of each query, over their rows holding some word (the ranked ones in
  // `relevance` order: its rank is that row's BM25 over the words it holds).
  const crossHi = search.sessionId !== undefined && (params.hi as bigint) < asOf ? (params.hi as bigint) : asOf;
  const cross = crossRowHits(
    store,
    table,
    plan.index,
    plan,
    {
      tenantId: search.tenantId,
      lo: match === null ? (cursor?.position ?? ((params.lo as bigint | undefined) ?? 1n) - 1n) + 1n : ((params.lo as bigint | undefined) ?? 1n),
      hi: match === null && scanEnd !== undefined && scanEnd < crossHi ? scanEnd : crossHi,
    },
    rarestRanked(plan, stats),
  );
  const crossMatch: string[] = [];
  if (cross !== undefined) {
    params.crossRows = cross.rows;
    crossMatch.push(`${table}.rowid IN (SELECT value FROM json_each(@crossRows))`);
    if (match === null) crossMatch.push(`(${plan.substrings.map((_, i) => `${table}.body LIKE @substring${i} ESCAPE '\\'`).join(' OR ')})`);
    else {
      crossMatch.push(`${table} MATCH @crossMatch`);
      params.crossMatch = anyPhrase(stats === undefined ? plan.phrases : stats.phrases.map((p) => plan.phrases[p.index]));
    }
  }
  /** The branches of a query whose other conditions are `where`: its ordinary hits', and the cross-row hits' when there are. */
  const branches = (where: readonly string[]): string[][] => [[...rowMatch, ...where], ...(cross ? [[...crossMatch, ...where]] : [])];
  // In `newest` order (only words too common to rank) a selective filter starts from the rows it
  // passes, not from the matches: the same rows, found in time bounded by the filter's rows.
  const filtered =
    order === 'newest'
      ? filterFirst(store, table, search, sessionKey, {
          lo: (params.lo as bigint | undefined) ?? 1n,
          hi: params.hi !== undefined && (params.hi as bigint) < asOf ? (params.hi as bigint) : asOf,
          asOf: cursor === undefined ? undefined : asOf,
        })
      : undefined;
  if (search.sessionId !== undefined && order !== 'oldest') {
    // Its snippet with it, unless this MATCH leaves out common words (they are marked in snippets too).
    const mentionSql = (where: string[]) =>
      unionOf(
        branches(where).map(
          (
            branch,
            k,
          ) => `SELECT ${hitColumns(`${table}.rowid`)}, 0.0 AS rank, ${k === 0 && rankMatch === match ? rawSnippetSql(table) : 'NULL'} AS rawSnippet ${joined}
             WHERE ${[...branch, FIRST_MENTION_CANDIDATE].join(' AND ')}
             ORDER BY ${table}.rowid LIMIT 1`,
        ),
        'position',
        '1',
      );
    first = filtered
      ? filtered.rows(mentionSql, conditions, params, 'ascending', 1)[0]
      : (store.statement(mentionSql(conditions)).get(params) as HitRow | undefined);
    // The earliest hit that passes the filters is the first mention only when it is the session's.
    if (first && narrowed && first.position !== sessionFirstMention(store, table, joined, branches(mentionConditions), { ...params, match })) first = undefined;
    if (first) {
      conditions.push('l.position <> @firstMention');
      params.firstMention = first.position;
      if (order === 'relevance' && cursor === undefined)
        // Its best chunk's rank, as the other hits'.
        first.rank = (
          store.statement(`SELECT min(rank) AS rank FROM ${table} WHERE ${table} MATCH @match AND rowid BETWEEN @from AND @to`).get({
            match: cross?.positions.includes(first.position) ? params.crossMatch : rankMatch,
            from: firstRecallRowid(first.position),
            to: lastRecallRowid(first.position),
          }) as {
            rank: number;
          }
        ).rank;
    }
  }
  const take = cursor === undefined && first ? limit : limit + 1;
  params.take = take;
  if (order === 'relevance' && cursor !== undefined) {
    rows = frozenRankPage(
      store,
      table,
      plan,
      stats!,
      branches(conditions).map((branch) => branch.join(' AND ')),
      params,
      cursor,
      take,
    );
  } else {
    const keyset: string[] = [];
    if (order === 'newest' && cursor?.position !== undefined) {
      keyset.push(`${table}.rowid < @afterRow`);
      params.afterRow = firstRecallRowid(cursor.position);
    }
    // Rank and page without snippets (snippet() is costly on every match of a common word), then
    // build the snippets of the page's rows only. In `newest` order nothing is ranked: FTS5 yields
    // the matches newest first and the query stops at the page, so it takes each hit's snippet as
    // it passes it (only rows that pass every filter, at most `take` of them).
    // An event of several chunks is one hit, at its first matching chunk (a later one is kept only
    // when no earlier chunk of its event matches: a lookup only for the chunks after an event's first).
    const firstMatchingChunk = (matchParam: string) => `((${table}.rowid & ${CHUNK_MASK}) = 0 OR NOT EXISTS (
             SELECT 1 FROM ${table} AS earlier WHERE earlier.${table} MATCH @${matchParam}
               AND earlier.rowid BETWEEN (${table}.rowid & ~${CHUNK_MASK}) AND ${table}.rowid - 1))`;
    const newestSql = (where: string[]) =>
      unionOf(
        branches(where).map(
          (branch, k) => `SELECT ${hitColumns(`${table}.rowid`)}, 0.0 AS rank, ${rawSnippetSql(table)} AS rawSnippet ${joined}
           WHERE ${[...branch, firstMatchingChunk(k === 0 ? 'match' : 'crossMatch')].join(' AND ')}
           ORDER BY ${table}.rowid DESC LIMIT @take`,
        ),
        'position DESC',
        '@take',
      );
    if (filtered) rows = filtered.rows(newestSql, [...conditions, ...keyset], params, 'descending', take, cursor?.position);
    else
      rows = store
        .statement(
          order === 'newest'
            ? newestSql([...conditions, ...keyset])
            : // One hit per event: its best-ranked matching chunk (`relevance`) or its first (`oldest`), the chunk the snippet is cut from.
              `SELECT * FROM (${branches(conditions)
                .map(
                  (
                    branch,
                  ) => `SELECT ${hitColumns(`${table}.rowid`)}, ${order === 'relevance' ? `min(${table}.rank) AS rank` : `0.0 AS rank, min(${table}.rowid) AS firstChunk`} ${joined}
             WHERE ${branch.join(' AND ')}
             GROUP BY l.position`,
                )
                .join(' UNION ALL ')}
           )
           ORDER BY rank, position
           LIMIT @take`,
        )
        .all(params) as HitRow[];
  }
  if (cursor === undefined && first) rows.unshift(first);
  // In `oldest` order the first page starts at the session's first event: its first hit that is a
  // real event (not a stored system message, not a summary) is the first mention.
  if (order === 'oldest' && cursor === undefined && search.sessionId !== undefined)
    first = rows.slice(0, limit).find((row) => isFirstMentionCandidate(store, row));
  if (order === 'oldest' && first && narrowed && first.position !== sessionFirstMention(store, table, joined, branches(mentionConditions), params))
    first = undefined;
  const snippets = recallSnippets(store, table, match, plan, rows.slice(0, limit), cross?.positions);
  for (const row of rows) row.snippet = snippets.get(row.position);

  const page = rows.slice(0, limit);
  const items = page.map((row): RecallHit => {
    const hit: RecallHit = {
      sessionId: row.sessionId,
      eventId: row.eventId,
      type: row.type,
      revision: String(row.revision),
      snippet: row.snippet ?? '',
      score: order === 'relevance' ? -Number(row.rank) : 0,
      archived: Number(row.archived) === 1,
      createdAt: utcMillisTime(row.createdAt),
    };
    if (row.archivedBy !== null) hit.compactionId = row.archivedBy;
    if (row === first) hit.firstMention = true;
    return hit;
  });
  const last = page[page.length - 1];
  const next = { fingerprint, order, asOf };
  if (rows.length <= limit && scanEnd !== undefined && scanEnd < scanLast) {
    // The scan stopped at its row budget: the next page goes on after the last row it read.
    return { items, order, nextCursor: encodeRecallCursor({ ...next, position: scanEnd }) };
  }
  if (rows.length <= limit || !last) return { items, order };
  // After a page holding only the first mention, the next page starts at the top of the order.
  if (last === first && order !== 'oldest') return { items, order, nextCursor: encodeRecallCursor({ ...next, ...(stats ? { stats } : {}) }) };
  return {
    items,
    order,
    nextCursor: encodeRecallCursor({ ...next, position: last.position, ...(stats ? { rank: Number(last.rank), stats } : {}) }),
  };
}

/**
 * How a `newest` query with a selective filter finds its rows (see {@link filterFirst}): `rows`
 * answers `sql(where)` (a query of the index joined to `l` and `s`, ordered by position, at most
 * `take` rows) with the same rows, in the same order, as running it would.
 */
interface FilterFirst {
  rows(
    sql: (where: string[]) => string,
    where: readonly string[],
    params: Record<string, unknown>,
    direction: 'ascending' | 'descending',
    take: number,
    before?: bigint,
  ): HitRow[];
}

/**
 * The plan of a `newest` recall query whose filters few rows pass (`archived=false` with
 * `sessionId`, or `compactionId`): undefined when none applies or too many rows pass it (then the
 * query walks the matches newest first, as without the filter). Its `rows` starts from the
 * filter's candidates ({@link recallFilterCandidates}, positions within `bounds`; `before`: only
 * those below it), cut into runs wherever two are more than {@link RECALL_FILTER_WALK_RATIO}
 * positions apart, and walks the matches of one run after the other (between its first and last
 * candidate), in the query's order, until it has `take` rows: e.g. a session's pinned system
 * prompt and its recent events are two runs, and the archived events between them are never
 * read. The index holds at most one row per position, so it reads at most that ratio times the
 * candidates' count of matches, plus one FTS5 query per run (~80–250 µs for a word of 200k rows
 * on the 2-core machine), however many events the session holds.
 */
function filterFirst(
  store: ReadModelStore,
  table: string,
  search: RecallSearch,
  sessionKey: string | undefined,
  bounds: { lo: bigint; hi: bigint; asOf: bigint | undefined },
): FilterFirst | undefined {
  const candidates = recallFilterCandidates(store, { sessionKey, archived: search.archived, compactionId: search.compactionId, ...bounds });
  if (candidates === undefined) return undefined;
  return {
    rows(sql, where, params, direction, take, before) {
      const positions = before === undefined ? candidates : candidates.filter((p) => p < before);
      // Runs of candidates closer than the ratio: each is one walk of the matches between its
      // first and last candidate (at most the ratio times its candidates), in the query's order.
      const gap = BigInt(RECALL_FILTER_WALK_RATIO);
      const runs: Array<[bigint, bigint]> = [];
      for (const p of positions) {
        const run = runs[runs.length - 1];
        if (run && p - run[1] <= gap) run[1] = p;
        else runs.push([p, p]);
      }
      if (direction === 'descending') runs.reverse();
      // The run's bounds must be the walk's: FTS5 seeks with one lower and one upper bound of the
      // rowid (the first of each it is offered), so the query's other bounds (the session's span,
      // the paging's moment, the cursor), which hold every run, are only checked (`+`).
      const checked = where.map((condition) => condition.replace(new RegExp(`(?<!\\+)\\b${table}\\.rowid\\b`, 'g'), `+${table}.rowid`));
      const walk = store.statement(sql([...checked, `${table}.rowid BETWEEN @runFrom AND @runTo`]));
      // Runs are of positions; the walk reads every chunk of their events.
      const runParams: Record<string, unknown> = { ...params };
      const rows: HitRow[] = [];
      for (const [runFrom, runTo] of runs) {
        Object.assign(runParams, { runFrom: firstRecallRowid(runFrom), runTo: lastRecallRowid(runTo), take: take - rows.length });
        rows.push(...(walk.all(runParams) as HitRow[]));
        if (rows.length >= take) break;
      }
      return rows;
    },
  };
}

/**
 * SQL of the raw snippet of the current row of `table` in a query that MATCHes it (the expression
 * {@link recallSnippets} uses, so the same text): evaluated only for the rows the query returns; NULL for a row
 * longer than {@link RECALL_SNIPPET_WHOLE_ROW_LIMIT} (its snippet is cut from a piece of it, {@link largeRowSnippet}).
 */
function rawSnippetSql(table: string): string {
  return `CASE WHEN length(${table}.body) > ${RECALL_SNIPPET_WHOLE_ROW_LIMIT} THEN char(0) ELSE snippet(${table}, 0, char(1), char(2), '…', 24) END`;
}

/** What {@link rawSnippetSql} gives for a row longer than {@link RECALL_SNIPPET_WHOLE_ROW_LIMIT} (a document's NUL is indexed as U+2400: no snippet is this). */
const LONG_ROW = '\u0000';

/** Row-id bits of the chunk number (`recall-chunks`), as an SQL literal. */
const CHUNK_MASK = String((1n << RECALL_CHUNK_BITS) - 1n);

/**
 * The columns of a hit row (the `HitRow` fields but `rank` and `snippet`), over `l` (`session_log`)
 * and `s` (`sessions`); `chunkRow` the SQL of its index row id.
 */
function hitColumns(chunkRow: string): string {
  return `l.position AS position, ${chunkRow} AS chunkRow, s.session_id AS sessionId, l.event_id AS eventId, l.kind AS type, l.revision AS revision,
             l.archived AS archived, l.archived_by AS archivedBy, l.created_at AS createdAt`;
}

/** Whether `l` (a `session_log` row) is a system notice (DESIGN §3.1): 1 for one, else 0; its JSON is read for system rows only. */
const NOTICE_SQL = `CASE WHEN l.kind = 'system' THEN coalesce(json_extract(l.data_json, '$.event.notice') IS 1, 0) ELSE 0 END`;

/**
 * The SQL condition (over `l`, a `session_log` row) of an event that may be its session's first mention: a real
 * event of DESIGN §3.2 (a user, assistant or tool event, or a system notice: a file arrived, a reminder), not a
 * stored system message (the agent's instructions) nor a summary. {@link isFirstMentionCandidate} is the same
 * rule over a hit row.
 */
const FIRST_MENTION_CANDIDATE = `(l.kind IN ('user', 'assistant', 'tool') OR ${NOTICE_SQL} = 1)`;

/**
 * {@link FIRST_MENTION_CANDIDATE} over a hit row: the domain's `isRealEvent` (DESIGN §3.2), a system row's notice flag read
 * from its stored event (not a column of the hit query: an aggregate query read the stored JSON of every matching chunk for
 * it, 0.4 s for one 1,000,000-character event in the trigram index; newcomer ncrecheck66 F2).
 */
function isFirstMentionCandidate(store: ReadModelStore, row: HitRow): boolean {
  if (row.type !== 'system') return isRealEvent({ type: row.type });
  const notice = store.statement(`SELECT ${NOTICE_SQL} AS notice FROM session_log l WHERE l.position = @position`).get({ position: row.position }) as
    { notice: number | bigint } | undefined;
  return isRealEvent({ type: row.type, notice: Number(notice?.notice ?? 0) === 1 });
}

/**
 * The SQL conditions (over `l`, a `session_log` row) of recall's `archived` and `compactionId`
 * filters. Without `asOf`, the flags as they are. With `asOf` (a global position, bigint), as
 * they were at that position: an event is archived as of it when the compaction that archived it
 * wrote a log row after the event and at or before `asOf` (its `EventsArchived` is in the same
 * append as the rest of its decision, and an answer archived on arrival has its own right after
 * it), so an event archived since still counts as active. A paging keeps the hits of its first
 * page this way.
 */
export function archiveFilter(
  archived: boolean | undefined,
  compactionId: string | undefined,
  asOf: bigint | undefined,
): { conditions: string[]; params: Record<string, unknown> } {
  const conditions: string[] = [];
  const params: Record<string, unknown> = {};
  const archivedThen =
    asOf === undefined
      ? ''
      : ` AND EXISTS (SELECT 1 FROM session_log a WHERE a.session_key = l.session_key AND a.compaction_id = l.archived_by
            AND a.position > l.position AND a.position <= @archivedAsOf)`;
  if (asOf !== undefined && (archived !== undefined || compactionId !== undefined)) params.archivedAsOf = asOf;
  if (archived === true) conditions.push(`(l.archived = 1${archivedThen})`);
  if (archived === false) conditions.push(asOf === undefined ? 'l.archived = 0' : `NOT (l.archived = 1${archivedThen})`);
  if (compactionId !== undefined) {
    conditions.push(`(l.archived_by = @compactionId${archivedThen})`);
    params.compactionId = compactionId;
  }
  return { conditions, params };
}

/**
 * A `relevance` page after the first: every hit of the paging (`where`: the conditions of its
 * rows over the index, `l` and `s`, with `params`) ranked with the first page's statistics
 * (`stats`, see `recall-rank`), best first (ties: oldest first), after the cursor's last hit, at
 * most `take` rows with their columns. All of it in one statement: only the page leaves SQLite.
 * Cost, against ranking the same words on a first page: one more walk of each ranked word's
 * matches (its row count now), a `docsize` lookup per hit, and with several ranked words one
 * walk of each word's matches for its own score.
 */
function frozenRankPage(
  store: ReadModelStore,
  table: string,
  plan: RecallQueryPlan,
  stats: RecallRankStats,
  wheres: readonly string[],
  params: Record<string, unknown>,
  cursor: RecallCursor,
  take: number,
): HitRow[] {
  const now = readIndexTotals(store, table);
  if (now.rows === 0) return [];
  const ln = sqliteLn(store);
  const phrases = stats.phrases.map((p) => plan.phrases[p.index]);
  const rowsNow = phrases.map((phrase) =>
    Number((store.statement(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH @phrase`).get({ phrase }) as { n: bigint }).n),
  );
  // One ranked word and nothing else: its current score comes with the hits. Otherwise each
  // ranked word's score in the paging's span of positions, from a query of that word alone.
  const inline = plan.phrases.length === 1 && phrases.length === 1;
  const scores = phrases.map((_, k) => (inline ? 'h.score' : `p${k}.score`));
  const perPhrase = inline
    ? []
    : phrases.map(
        (_, k) => `p${k} AS MATERIALIZED (
          SELECT rowid AS row, -bm25(${table}) AS score FROM ${table} WHERE ${table} MATCH @rankPhrase${k} AND rowid BETWEEN @rankFrom AND @rankTo)`,
      );
  const sql = `WITH hits AS MATERIALIZED (${wheres
    .map(
      (where) => `
      SELECT ${table}.rowid AS row, l.position AS position, ${documentLengthSql('d.sz')} AS length${inline ? `, -bm25(${table}) AS score` : ''}
      FROM ${table}
        JOIN ${table}_docsize d ON d.id = ${table}.rowid
        JOIN session_log l ON l.position = ${recallPositionSql(`${table}.rowid`)}
        JOIN sessions s ON s.session_key = l.session_key
      WHERE ${where}`,
    )
    .join(' UNION ALL ')}),
    ${perPhrase.map((cte) => `${cte},`).join('\n')}
    chunks AS MATERIALIZED (
      SELECT h.row AS row, h.position AS position, ${frozenRankSql(scores, 'h.length')} AS rank
      FROM hits h ${inline ? '' : phrases.map((_, k) => `${wheres.length > 1 ? 'LEFT ' : ''}JOIN p${k} ON p${k}.row = h.row`).join(' ')}),
    -- One hit per event: its best-ranked chunk (recall-chunks).
    ranked AS MATERIALIZED (SELECT position, row, min(rank) AS rank FROM chunks GROUP BY position)
    SELECT ${hitColumns('r.row')}, r.rank AS rank
    FROM ranked r
      JOIN session_log l ON l.position = r.position
      JOIN sessions s ON s.session_key = l.session_key
    ${
      cursor.position === undefined
        ? ''
        : // After the last hit, ranked as here (the first page's FTS5 value, bit for bit), or as the cursor says when it is gone (erased).
          `WHERE (r.rank, r.position) > (coalesce((SELECT rank FROM ranked WHERE position = @afterPosition), @afterRank), @afterPosition)`
    }
    ORDER BY r.rank, r.position
    LIMIT @take`;
  const rankParams: Record<string, unknown> = { ...params, ...frozenRankParams(stats, now, rowsNow, ln), take };
  phrases.forEach((phrase, k) => (rankParams[`rankPhrase${k}`] = phrase));
  if (!inline) {
    // The paging's span: the session's, up to the paging's moment.
    rankParams.rankFrom = firstRecallRowid((params.lo as bigint | undefined) ?? 1n);
    const hi = params.hi as bigint | undefined;
    rankParams.rankTo = lastRecallRowid(hi !== undefined && hi < cursor.asOf ? hi : cursor.asOf);
  }
  if (cursor.position !== undefined) {
    rankParams.afterPosition = cursor.position;
    rankParams.afterRank = cursor.rank;
  }
  return store.statement(sql).all(rankParams) as HitRow[];
}

/** How many rows of `table` hold each of `phrases`, each counted up to {@link RECALL_RANKED_MATCH_LIMIT} + 1 (a bounded walk). */
function phraseCounts(store: ReadModelStore, table: string, phrases: readonly string[]): number[] {
  const count = store.statement(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE ${table} MATCH @phrase LIMIT @cap)`);
  return phrases.map((phrase) => Number((count.get({ phrase, cap: RECALL_RANKED_MATCH_LIMIT + 1 }) as { n: bigint }).n));
}

/**
 * The snippets of a page's hits by position, HTML-escaped, matched words in `<mark>`. Matches are
 * marked with control characters that never occur in indexed text (they are stripped from it),
 * the excerpt is escaped, then the marks become tags: the stored text can never inject markup.
 * The script boundaries of the word index (`wordIndexText`) are dropped: snippets show the text as sent.
 * Words searched as substrings (one or two characters of an unspaced script, emoji) are marked
 * too, and when the query has nothing else the excerpt is taken around the first of them
 * ({@link substringExcerpt}). Every excerpt is at most `RECALL_SNIPPET_MAX_LENGTH` characters
 * ({@link boundSnippet}): FTS5 cuts in tokens, and a run of CJK without spaces or of emoji is one
 * token of the word index, however long (it made a snippet of a whole 200,000-character event).
 * Snippets are cut and marked between grapheme clusters (`recall-snippet-clusters`): a snippet
 * FTS5 cut (`…` at an end) has its cuts moved out to cluster boundaries of its row's text
 * ({@link snippetCutsOnClusters}), and every mark covers whole clusters ({@link marksOnClusters}:
 * `👍` found in `👍🏿` marks `👍🏿`).
 *
 * Cost: a row whose query took its snippet (`rawSnippet`: the first mention, a `newest` page's
 * hits) costs nothing more. Each other row of a `relevance` page (at most
 * {@link RECALL_RANKED_MATCH_LIMIT} matches) is looked up: FTS5 finds one row of a very common
 * word's doclist slowly (~0.15 ms at 100k matches). Until read models 12 a `newest` page took its
 * snippets in one pass over the page's span of positions, which with `sessionId` reached from the
 * session's first mention to its newest hit: every match of a long session (2.6 s at 100k). A
 * snippet FTS5 cut also has its row's text read by rowid for its cuts: about 13–17 µs per hit
 * with the cluster work, 1.3–1.7 ms on a page of 100 (`bench/recall-snippet-clusters.ts`).
 */
function recallSnippets(
  store: ReadModelStore,
  table: string,
  match: string | null,
  plan: RecallQueryPlan,
  rows: readonly HitRow[],
  cross: readonly bigint[] = [],
): Map<bigint, string> {
  const { substrings } = plan;
  const raw = new Map<bigint, string>();
  const body = store.statement(`SELECT body FROM ${table} WHERE rowid = @rowid`);
  const bodyOf = (row: HitRow) => (body.get({ rowid: row.chunkRow }) as { body: string } | undefined)?.body ?? '';
  if (match === null) {
    for (const row of rows) raw.set(row.position, substringExcerpt(bodyOf(row), substrings));
  } else {
    const one = store.statement(`SELECT ${rawSnippetSql(table)} AS snippet FROM ${table} WHERE ${table} MATCH @match AND rowid = @rowid`);
    // A hit across rows: its row's snippet marks every word of the query that row holds.
    const anyWord = anyPhrase(plan.phrases);
    for (const row of rows) {
      const rowMatch = cross.includes(row.position) ? anyWord : match;
      const snippet =
        (rowMatch === match ? row.rawSnippet : undefined) ??
        (one.get({ match: rowMatch, rowid: row.chunkRow }) as { snippet: string } | undefined)?.snippet ??
        '';
      if (snippet === LONG_ROW) {
        // A long row: its snippet is cut from a piece of it (FTS5's costs the square of the row's matches).
        const text = bodyOf(row);
        raw.set(row.position, largeRowSnippet(plan.index, text, rowMatch, plan.phrases));
        continue;
      }
      // FTS5 cut it (in tokens, anywhere in a cluster): the cut moves out to a cluster boundary of the row's text.
      // A mark FTS5 closed at its end cut grows to the whole phrase it starts.
      if (!snippet.startsWith('…') && !snippet.endsWith('…')) raw.set(row.position, snippet);
      else {
        const text = bodyOf(row);
        raw.set(row.position, cutMarkCompleted(snippetCutsOnClusters(snippet, text), text, plan.phrases));
      }
    }
  }
  const snippets = new Map<bigint, string>();
  for (const [position, text] of raw)
    snippets.set(
      position,
      escapeHtml(marksOnClusters(markSubstrings(boundSnippet(text.replaceAll(RECALL_SCRIPT_BOUNDARY, '')), substrings)))
        .replaceAll('\u0001', RECALL_SNIPPET_OPEN)
        .replaceAll('\u0002', RECALL_SNIPPET_CLOSE),
    );
  return snippets;
}

/** The ranked phrase of `plan` holding the fewest rows (by the paging's `stats`), undefined without one. */
function rarestRanked(plan: RecallQueryPlan, stats: RecallRankStats | undefined): string | undefined {
  const rarest = stats === undefined || stats.phrases.length === 0 ? undefined : stats.phrases.reduce((a, b) => (b.rows < a.rows ? b : a));
  return rarest === undefined ? undefined : plan.phrases[rarest.index];
}

/**
 * One query of the rows of `selects` (SELECT statements of the same columns, each may hold its own
 * ORDER BY and LIMIT) in `orderBy` order, at most `limit` (SQL text) rows: `selects[0]` alone
 * when it is the only one.
 */
function unionOf(selects: readonly string[], orderBy: string, limit: string): string {
  if (selects.length === 1) return selects[0];
  return `SELECT * FROM (${selects.map((select) => `SELECT * FROM (${select})`).join(' UNION ALL ')}) ORDER BY ${orderBy} LIMIT ${limit}`;
}

/**
 * The position of the session's first mention: its earliest row matching the query (`branches`:
 * each a set of conditions, the match, the session, its span, no other filter; see `branches` in
 * `recallPage`) that is a real event ({@link FIRST_MENTION_CANDIDATE}: not a stored system message, not a
 * summary); undefined when there is none.
 */
function sessionFirstMention(
  store: ReadModelStore,
  table: string,
  joined: string,
  branches: ReadonlyArray<readonly string[]>,
  params: Record<string, unknown>,
): bigint | undefined {
  const row = store
    .statement(
      unionOf(
        branches.map(
          (conditions) => `SELECT l.position AS position ${joined}
             WHERE ${[...conditions, FIRST_MENTION_CANDIDATE].join(' AND ')}
             ORDER BY ${table}.rowid LIMIT 1`,
        ),
        'position',
        '1',
      ),
    )
    .get(params) as { position: bigint } | undefined;
  return row?.position;
}

/** Escapes `&`, `<`, `>`, `"` and `'` for HTML. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * `from`/`to` as {@link utcExactTime} text (9 fraction digits, the form of `session_log.created_at`),
 * so the filter compares the instant sent, not one cut to the millisecond. A `Date` counts to the millisecond.
 * @throws InvalidQueryError naming `parameter` when `value` is not a time.
 */
function parseTime(parameter: string, value: string | Date): string {
  const text = value instanceof Date ? (Number.isNaN(value.getTime()) ? '' : value.toISOString()) : value;
  if (Number.isNaN(isoTimeMillis(text))) throw new InvalidQueryError(parameter, 'must be an ISO-8601 time such as 2024-05-01T12:00:00Z');
  return utcExactTime(text);
}
