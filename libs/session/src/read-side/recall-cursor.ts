import { parseCanonicalInteger } from '@lib/event-store';
import { InvalidQueryError } from './invalid-query-error';
import { CursorOfAnotherReleaseError, cursorVersion } from './cursor-of-another-release-error';
import { cursorOfAnotherRoute, MAX_CURSOR_LENGTH } from './cursor-of-another-route';
import type { RecallRankStats } from './recall-rank';

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

/**
 * Decodes a cursor made by {@link encodeRecallCursor} and checks it belongs to the query with
 * `fingerprint` and, in `relevance` order, to a query of `phraseCount` phrases.
 * @throws InvalidQueryError (`cursor`) when it is malformed or belongs to another query, or to
 *   a list (the message names that list's route, see `cursorOfAnotherRoute`).
 * @throws CursorOfAnotherReleaseError (`cursor`, 400 `cursor_expired`) when it carries another
 *   format version than {@link CURSOR_VERSION}: another release made it.
 */
export function decodeRecallCursor(text: string, fingerprint: string, phraseCount: number): RecallCursor {
  const invalid = (why: string) => new InvalidQueryError('cursor', `${why}; pass the nextCursor of the previous page unchanged, with the same q and filters`);
  if (typeof text !== 'string' || text.length > MAX_RECALL_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid('is not a cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a cursor');
  }
  const { v, f, o, a, p, r, s, l } = (parsed ?? {}) as Record<string, unknown>;
  // Another release's cursor cannot be continued: version 1 (builds up to 2026-12-01) holds neither
  // the paging's moment nor its BM25 statistics, and its rank is of another index (its pages could
  // repeat or miss hits); a later version is unknown here. Every version carries `v` and the
  // fingerprint `f` (a list's cursor, `v` and `l`, is no recall cursor at all).
  const version = cursorVersion(v);
  if (version !== undefined && version !== CURSOR_VERSION && typeof f === 'string')
    throw new CursorOfAnotherReleaseError(version, CURSOR_VERSION, 'search again without cursor (the first page) and follow the new nextCursor');
  // A list's cursor (any version carries `v` and the list `l`) was sent to recall.
  if (version !== undefined && (l === 'sessions' || l === 'compactions' || l === 'erasures') && f === undefined) throw cursorOfAnotherRoute(l);
  const asOf = parseCanonicalInteger(a);
  const position = p === undefined ? undefined : parseCanonicalInteger(p);
  if (
    v !== CURSOR_VERSION ||
    typeof f !== 'string' ||
    !ORDERS.includes(o as RecallCursorOrder) ||
    asOf === null ||
    position === null ||
    (o === 'oldest' && position === undefined)
  )
    throw invalid('is not a cursor');
  const order = o as RecallCursorOrder;
  let stats: RecallRankStats | undefined;
  if (order === 'relevance') {
    stats = rankStats(s, phraseCount) ?? undefined;
    if (!stats || (position !== undefined) !== (typeof r === 'number' && Number.isFinite(r))) throw invalid('is not a cursor');
  } else if (s !== undefined || r !== undefined) throw invalid('is not a cursor');
  if (f !== fingerprint) throw invalid('belongs to another query');
  return {
    fingerprint: f,
    order,
    asOf,
    ...(position !== undefined ? { position } : {}),
    ...(order === 'relevance' && position !== undefined ? { rank: r as number } : {}),
    ...(stats ? { stats } : {}),
  };
}

/**
 * The `asOf` of a recall cursor's text (the global position its paging's first page was answered
 * at), read without checking the rest: undefined when `text` is absent or no version-2 cursor
 * (the search itself then answers why, see {@link decodeRecallCursor}).
 */
export function recallCursorAsOf(text: string | undefined): bigint | undefined {
  if (typeof text !== 'string' || text.length > MAX_RECALL_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const { v, a } = (JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) ?? {}) as Record<string, unknown>;
    return v === CURSOR_VERSION ? (parseCanonicalInteger(a) ?? undefined) : undefined;
  } catch {
    return undefined;
  }
}

/** The statistics of a cursor's `s` (`[rows, tokens, index, rows, …]`), null unless well-formed for a query of `phraseCount` phrases. */
function rankStats(s: unknown, phraseCount: number): RecallRankStats | null {
  if (!Array.isArray(s) || s.length < 4 || s.length % 2 !== 0 || !s.every((x) => Number.isSafeInteger(x) && (x as number) >= 0)) return null;
  const [rows, tokens, ...pairs] = s as number[];
  const phrases: RecallRankStats['phrases'] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    const index = pairs[i];
    if (index >= phraseCount || phrases.some((known) => known.index === index) || pairs[i + 1] > rows) return null;
    phrases.push({ index, rows: pairs[i + 1] });
  }
  return rows > 0 ? { rows, tokens, phrases } : null;
}
