import { parseCanonicalInteger } from '@lib/event-store';
import { InvalidQueryError } from './invalid-query-error';

/**
 * Opaque keyset cursors of the paginated lists (sessions, compaction history): the list's name
 * and the bigint key of the last item returned, as base64url JSON. A cursor of one list is
 * refused by another, so a client cannot page one list with another's cursor.
 */
export type KeysetList = 'sessions' | 'compactions';

/** Encodes the key (bigint: a global position or a stream revision) of the last item of a page of `list`. */
export function encodeKeysetCursor(list: KeysetList, key: bigint): string {
  return Buffer.from(JSON.stringify({ v: 1, l: list, k: key.toString() }), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeKeysetCursor} for `list`.
 * @throws InvalidQueryError (`cursor`, 400 `invalid_query`) when it is malformed or belongs to another list.
 */
export function decodeKeysetCursor(list: KeysetList, text: string): bigint {
  const invalid = (why: string) => new InvalidQueryError('cursor', `${why}; pass the nextCursor of the previous page unchanged`);
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(text)) throw invalid('is not a cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a cursor');
  }
  const { v, l, k } = (parsed ?? {}) as Record<string, unknown>;
  const key = parseCanonicalInteger(k);
  if (v !== 1 || key === null) throw invalid('is not a cursor');
  if (l !== list) throw invalid(`is a cursor of another list (${String(l)})`);
  return key;
}
