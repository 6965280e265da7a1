import { parseCanonicalInteger } from '@lib/event-store';
import { InvalidQueryError } from './invalid-query-error';

/** Keyset position of the last hit of a recall page: its BM25 rank (lower is better) and global position. */
export interface RecallCursor {
  /** `bm25()` of the last hit returned (a float, negative; exact round-trip through JSON). */
  rank: number;
  /** Global position (bigint) of the last hit returned; breaks ties of `rank`. */
  position: bigint;
  /** Fingerprint of the query and filters the cursor belongs to. */
  fingerprint: string;
  /** `newest` when the page was in newest-first order (the next page keeps it); absent for the other orders. */
  order?: 'newest';
}

/** Encodes a cursor as opaque base64url text. */
export function encodeRecallCursor(cursor: RecallCursor): string {
  return Buffer.from(
    JSON.stringify({ v: 1, r: cursor.rank, p: cursor.position.toString(), f: cursor.fingerprint, ...(cursor.order ? { o: cursor.order } : {}) }),
    'utf8',
  ).toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeRecallCursor} and checks it belongs to the query with
 * `fingerprint`.
 * @throws InvalidQueryError (`cursor`) when it is malformed or belongs to another query.
 */
export function decodeRecallCursor(text: string, fingerprint: string): RecallCursor {
  const invalid = (why: string) => new InvalidQueryError('cursor', `${why}; pass the nextCursor of the previous page unchanged, with the same q and filters`);
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]{1,512}$/.test(text)) throw invalid('is not a cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a cursor');
  }
  const { v, r, p, f, o } = (parsed ?? {}) as Record<string, unknown>;
  if (
    v !== 1 ||
    typeof r !== 'number' ||
    !Number.isFinite(r) ||
    parseCanonicalInteger(p) === null ||
    typeof f !== 'string' ||
    (o !== undefined && o !== 'newest')
  ) {
    throw invalid('is not a cursor');
  }
  if (f !== fingerprint) throw invalid('belongs to another query');
  return { rank: r, position: parseCanonicalInteger(p)!, fingerprint: f, ...(o === 'newest' ? { order: o } : {}) };
}
