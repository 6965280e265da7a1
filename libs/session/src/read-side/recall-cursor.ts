import { parseCanonicalInteger } from '@lib/event-store';
import { InvalidQueryError } from './invalid-query-error';
import { CursorOfAnotherReleaseError, cursorVersion } from './cursor-of-another-release-error';
import { cursorOfAnotherRoute, MAX_CURSOR_LENGTH } from './cursor-of-another-route';
import { cursorFields, cursorInteger, cursorRefusals } from './cursor-fields';
import { MAX_RECALL_POSITION } from './recall-chunks';
import { RECALL_RANKED_MATCH_LIMIT, type RecallRankStats } from './recall-rank';

/** How a recall page is ordered (see `RecallOrder` in `queries/recall-query`). */
export type RecallCursorOrder = 'relevance' | 'newest' | 'oldest';

/**
 * Where the next page of a recall paging starts. A paging is the hits as of its first page:
 * `asOf` is the global position the first page was answered at (hits at greater positions,
 * appended since, are not part of it: a new search finds them), `order` the order that page
 * chose (every page keeps it), and in `relevance` order `stats` the BM25 statistics of that
 * moment (every page ranks with them, see `recall-rank`).
 */
export interface RecallCursor {
  /** Fingerprint of the query and filters the cursor belongs to. */
  fingerprint: string;
  /** The order of the paging, chosen by its first page. */
  order: RecallCursorOrder;
  /** Global position (bigint) the first page was answered at: the paging holds the hits at or before it. */
  asOf: bigint;
  /**
   * `relevance` and `newest`: global position of the last hit returned; absent when the pages
   * so far held only the session's first mention (the next page starts at the top of the order).
   * `oldest`: the last index row read (the scan goes on after it).
   */
  position?: bigint;
  /** `relevance`: BM25 rank (negative score, lower is better) of the last hit under `stats`; present with `position`. */
  rank?: number;
  /** `relevance`: the statistics every page ranks with. */
  stats?: RecallRankStats;
}

/**
 * Version of the cursors {@link encodeRecallCursor} writes (`v`). A cursor of another version, 1
 * (builds up to 2026-12-01, before the fix of pages repeating hits) or a later one, is refused
 * with {@link CursorOfAnotherReleaseError}. Change it with every change of the format, and keep
 * `v` and the fingerprint `f` in every format: they tell another release's cursor from no cursor.
 */
const CURSOR_VERSION = 2;
/** Longest cursor text accepted: {@link MAX_CURSOR_LENGTH}, as on every paging route (a `relevance` cursor of 32 ranked words is about 700 characters). */
export const MAX_RECALL_CURSOR_LENGTH = MAX_CURSOR_LENGTH;
const ORDERS: readonly RecallCursorOrder[] = ['relevance', 'newest', 'oldest'];

/** Encodes a cursor as opaque base64url text (JSON: `{v: 2, f, o, a, p?, r?, s?: [rows, tokens, index, rows, …]}`). */
export function encodeRecallCursor(cursor: RecallCursor): string {
  const { stats } = cursor;
  return Buffer.from(
    JSON.stringify({
      v: CURSOR_VERSION,
      f: cursor.fingerprint,
      o: cursor.order,
      a: cursor.asOf.toString(),
      ...(cursor.position !== undefined ? { p: cursor.position.toString() } : {}),
      ...(cursor.rank !== undefined ? { r: cursor.rank } : {}),
      ...(stats ? { s: [stats.rows, stats.tokens, ...stats.phrases.flatMap((p) => [p.index, p.rows])] } : {}),
    }),
    'utf8',
  ).toString('base64url');
}

/** The refusals of recall's cursors ({@link cursorRefusals}). */
const refuse = cursorRefusals(
  'pass the nextCursor of the previous page unchanged, with the same q and filters',
  'search again without cursor (the first page) and pass its nextCursor unchanged',
);

/**
 * The range of a recall cursor's `a` (its paging's moment): the log's head when a first page with
 * hits was answered, 1 to the last position recall indexes ({@link MAX_RECALL_POSITION}).
 */
const AS_OF_RANGE = { name: "its paging's position", min: 1n, max: MAX_RECALL_POSITION, maxIs: 'the last position recall indexes' };

/**
 * Decodes a cursor made by {@link encodeRecallCursor} and checks it belongs to the query with
 * `fingerprint` (or one of `alsoAccepted`, the same query's fingerprint as an earlier release made
 * it; the cursor answered carries `fingerprint`) and, in `relevance` order, to a query of
 * `phraseCount` phrases. Every field is
 * checked for its type and for the range of what {@link encodeRecallCursor} writes there (the
 * rule of `cursor-fields`): `a` 1 to {@link MAX_RECALL_POSITION}; `p` (a hit's position, or the
 * last row a scan read) 1 to `a`: a page never holds a hit after its paging's moment; `r` a finite
 * rank ≤ 0 (FTS5's convention, the negative BM25); `s` row counts ≥ 0 with at least one row,
 * each ranked phrase once, held by at most as many rows as the index and at most
 * {@link RECALL_RANKED_MATCH_LIMIT} (a word matching more does not rank).
 * @throws InvalidQueryError (`cursor`) when it is malformed (`is not a cursor; pass the nextCursor
 *   of the previous page unchanged, …`), holds values no page writes, e.g. a position past its
 *   paging's (`is not a cursor this service made: …; search again without cursor (the first page)
 *   …`), belongs to another query, or to a list (the message names that list's route, see
 *   `cursorOfAnotherRoute`).
 * @throws CursorOfAnotherReleaseError (`cursor`, 400 `cursor_expired`) when it carries another
 *   format version than {@link CURSOR_VERSION}: another release made it.
 */
export function decodeRecallCursor(text: string, fingerprint: string, phraseCount: number, alsoAccepted: readonly string[] = []): RecallCursor {
  const fields = cursorFields(text);
  if (fields === null) throw refuse.malformed();
  const { v, f, o, a, p, r, s, l } = fields;
  // Another release's cursor cannot be continued: version 1 (builds up to 2026-12-01) holds neither
  // the paging's moment nor its BM25 statistics, and its rank is of another index (its pages could
  // repeat or miss hits); a later version is unknown here. Every version carries `v` and the
  // fingerprint `f` (a list's cursor, `v` and `l`, is no recall cursor at all).
  const version = cursorVersion(v);
  if (version !== undefined && version !== CURSOR_VERSION && typeof f === 'string')
    throw new CursorOfAnotherReleaseError(version, CURSOR_VERSION, 'search again without cursor (the first page) and follow the new nextCursor');
  // A list's cursor (any version carries `v` and the list `l`) was sent to recall.
  if (version !== undefined && (l === 'sessions' || l === 'compactions' || l === 'erasures') && f === undefined) throw cursorOfAnotherRoute(l);
  if (v !== CURSOR_VERSION || typeof f !== 'string' || !ORDERS.includes(o as RecallCursorOrder) || (o === 'oldest' && p === undefined))
    throw refuse.malformed();
  const order = o as RecallCursorOrder;
  const asOf = cursorInteger(a, AS_OF_RANGE, refuse);
  const position = p === undefined ? undefined : cursorInteger(p, { name: 'its last position', min: 1n, max: asOf, maxIs: "its paging's position" }, refuse);
  let stats: RecallRankStats | undefined;
  if (order === 'relevance') {
    stats = rankStats(s, phraseCount);
    if ((position !== undefined) !== (r !== undefined)) throw refuse.malformed();
    if (r !== undefined && (typeof r !== 'number' || !Number.isFinite(r))) throw refuse.malformed();
    if (typeof r === 'number' && r > 0) throw refuse.outOfRange(`its last rank ${r} is above 0 (a rank is a negative BM25 score)`);
  } else if (s !== undefined || r !== undefined) throw refuse.malformed();
  if (f !== fingerprint && !alsoAccepted.includes(f))
    throw new InvalidQueryError(
      'cursor',
      "belongs to another query or another tenant's search; pass the nextCursor of the previous page unchanged, with the same q and filters and the same tenant's API key",
    );
  return {
    fingerprint,
    order,
    asOf,
    ...(position !== undefined ? { position } : {}),
    ...(order === 'relevance' && position !== undefined ? { rank: r } : {}),
    ...(stats ? { stats } : {}),
  };
}

/**
 * The refusal of a recall cursor whose paging's position `asOf` (bigint) is past the log's head
 * `head` (bigint): no first page was answered there, so it is forged or of another log. 400
 * `invalid_query`, `cursor: is not a cursor this service made: its paging's position 1000000 is
 * past the end of this service's log (6); search again without cursor (the first page) and pass
 * its nextCursor unchanged`, as the lists' cursors past the end (`keysetCursorPastEnd`).
 */
export function recallCursorPastEnd(asOf: bigint, head: bigint): InvalidQueryError {
  return refuse.outOfRange(`${AS_OF_RANGE.name} ${asOf} is past the end of this service's log (${head})`);
}

/**
 * The `asOf` of a recall cursor's text (the global position its paging's first page was answered
 * at), read without checking the rest: undefined when `text` is absent or no version-2 cursor, or
 * its `a` is out of its range (the search itself then answers why, see {@link decodeRecallCursor}).
 */
export function recallCursorAsOf(text: string | undefined): bigint | undefined {
  const fields = cursorFields(text);
  if (fields === null || fields.v !== CURSOR_VERSION) return undefined;
  return parseCanonicalInteger(fields.a, AS_OF_RANGE.min, AS_OF_RANGE.max) ?? undefined;
}

/**
 * The statistics of a cursor's `s` (`[rows, tokens, index, rows, …]`) for a query of `phraseCount`
 * phrases: safe integers ≥ 0, `rows` > 0, each phrase index below `phraseCount` and given once, each
 * phrase's rows at most `rows` and at most {@link RECALL_RANKED_MATCH_LIMIT}.
 * @throws InvalidQueryError `refuse.malformed()` when `s` is not such a list; `refuse.outOfRange(…)`
 *   when its counts are out of those ranges.
 */
function rankStats(s: unknown, phraseCount: number): RecallRankStats {
  if (!Array.isArray(s) || s.length < 4 || s.length % 2 !== 0 || !s.every((x) => Number.isSafeInteger(x) && (x as number) >= 0)) throw refuse.malformed();
  const [rows, tokens, ...pairs] = s as number[];
  if (rows === 0) throw refuse.outOfRange('its index statistics count no row');
  const phrases: RecallRankStats['phrases'] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    const index = pairs[i];
    // Another query's statistics (its fingerprint is refused after): no cursor of this query.
    if (index >= phraseCount || phrases.some((known) => known.index === index)) throw refuse.malformed();
    if (pairs[i + 1] > rows || pairs[i + 1] > RECALL_RANKED_MATCH_LIMIT)
      throw refuse.outOfRange(
        `a ranked word's row count ${pairs[i + 1]} is past ${Math.min(rows, RECALL_RANKED_MATCH_LIMIT)} (the index's rows, at most ${RECALL_RANKED_MATCH_LIMIT})`,
      );
    phrases.push({ index, rows: pairs[i + 1] });
  }
  return { rows, tokens, phrases };
}
