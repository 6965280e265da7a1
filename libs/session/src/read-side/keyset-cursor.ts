import { parseCanonicalInteger } from '@lib/event-store';
import { InvalidQueryError } from './invalid-query-error';
import { CursorOfAnotherReleaseError, cursorVersion } from './cursor-of-another-release-error';
import { cursorOfAnotherRoute } from './cursor-of-another-route';

/**
 * Opaque keyset cursors of the paginated lists (sessions, compaction history): the list's name
 * and the bigint key of the last item returned, as base64url JSON. A cursor of one list is
 * refused by another, so a client cannot page one list with another's cursor.
 */
export type KeysetList = 'sessions' | 'compactions';

/**
 * Format version of the cursors {@link encodeKeysetCursor} writes (`v`). Change it with every
 * change of the format, and keep `v` and the list `l` in every format: they tell another
 * release's cursor from no cursor.
 */
const KEYSET_CURSOR_VERSION = 1;

/** Encodes the key (bigint: a global position or a stream revision) of the last item of a page of `list`. */
export function encodeKeysetCursor(list: KeysetList, key: bigint): string {
  return Buffer.from(JSON.stringify({ v: KEYSET_CURSOR_VERSION, l: list, k: key.toString() }), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeKeysetCursor} for `list`.
 * @throws InvalidQueryError (`cursor`, 400 `invalid_query`) when it is malformed, or belongs to
 *   another route (another list, or recall: the message names that route, see `cursorOfAnotherRoute`).
 * @throws CursorOfAnotherReleaseError (`cursor`, 400 `cursor_expired`) when it carries another
 *   format version: another release made it.
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
  const { v, l, k, f } = (parsed ?? {}) as Record<string, unknown>;
  const version = cursorVersion(v);
  if (version !== undefined && version !== KEYSET_CURSOR_VERSION && typeof l === 'string')
    throw new CursorOfAnotherReleaseError(version, KEYSET_CURSOR_VERSION, 'list again without cursor (the first page) and follow the new nextCursor');
  // A recall cursor (any version carries `v` and the fingerprint `f`) was sent to a list.
  if (version !== undefined && typeof f === 'string' && l === undefined) throw cursorOfAnotherRoute('recall');
  const key = parseCanonicalInteger(k);
  if (v !== KEYSET_CURSOR_VERSION || key === null) throw invalid('is not a cursor');
  if (l === 'sessions' || l === 'compactions') {
    if (l !== list) throw cursorOfAnotherRoute(l);
  } else throw invalid(`is a cursor of another list (${String(l)})`);
  return key;
}
