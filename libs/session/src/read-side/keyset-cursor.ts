import { createHash } from 'node:crypto';
import { quoteInput } from '@lib/compaction';
import { MAX_REVISION } from '@lib/event-store';
import { InvalidQueryError } from './invalid-query-error';
import { CursorOfAnotherReleaseError, cursorVersion } from './cursor-of-another-release-error';
import { cursorOfAnotherRoute, cursorOfAnotherSession } from './cursor-of-another-route';
import { cursorFields, cursorInteger, cursorRefusals } from './cursor-fields';

/**
 * Opaque keyset cursors of the paginated lists (sessions, compaction history, erasures): the list's name
 * and the bigint key of the last item returned, as base64url JSON. A cursor of one list is
 * refused by another, so a client cannot page one list with another's cursor.
 */
export type KeysetList = 'sessions' | 'compactions' | 'erasures';

/**
 * Format version of the cursors {@link encodeKeysetCursor} writes (`v`). Change it with every
 * change of the format, and keep `v` and the list `l` in every format: they tell another
 * release's cursor from no cursor.
 */
const KEYSET_CURSOR_VERSION = 1;

/**
 * Longest cursor a build before compaction-history cursors named their session accepts (its
 * schema and decoder refuse longer ones as no cursor): a compaction-history cursor whose session
 * id would make it longer names the session by a digest instead, so every replica of a rolling
 * upgrade still continues it (docs/upgrading.md, Mixed versions).
 */
const EARLIER_BUILDS_MAX_CURSOR_LENGTH = 256;

/** 12 base64url characters of the SHA-256 of `text` (UTF-8): the digests a list's cursor carries. */
function shortDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 12);
}

/** The digest naming a session in a compaction-history cursor too long to carry its id (12 base64url characters of SHA-256). */
function sessionDigest(sessionId: string): string {
  return shortDigest(sessionId);
}

/**
 * The digest of a session list's filters a cursor of it carries (`q`: 12 base64url characters of
 * SHA-256 of `values`, the filters in a fixed order, absent ones included), so that its next page is
 * refused for other filters (newcomer ncfresh70 F2: it answered the other filters' list from the
 * middle), as recall's and a compaction history's cursors are.
 */
export function listFiltersDigest(values: ReadonlyArray<string | undefined>): string {
  return shortDigest(JSON.stringify(values));
}

/**
 * Encodes the key (bigint: a global position or a stream revision) of the last item of a page of
 * `list`; a session list's cursor also carries its filters' digest `filters` ({@link listFiltersDigest}). A compaction-history cursor (`list` `compactions`) also names the session whose page it
 * continues, `sessionId`: its id (`s`) when the cursor stays within
 * {@link EARLIER_BUILDS_MAX_CURSOR_LENGTH} characters, else a digest of it (`h`). Same format
 * version: earlier builds ignore both fields.
 */
export function encodeKeysetCursor(list: KeysetList, key: bigint, sessionId?: string, filters?: string): string {
  const encode = (fields: Record<string, string>) =>
    Buffer.from(JSON.stringify({ v: KEYSET_CURSOR_VERSION, l: list, k: key.toString(), ...fields }), 'utf8').toString('base64url');
  if (list === 'sessions' && filters !== undefined) return encode({ q: filters });
  if (list !== 'compactions' || sessionId === undefined) return encode({});
  const named = encode({ s: sessionId });
  return named.length <= EARLIER_BUILDS_MAX_CURSOR_LENGTH ? named : encode({ h: sessionDigest(sessionId) });
}

/** The refusals of the lists' cursors ({@link cursorRefusals}). */
const refuse = cursorRefusals(
  'pass the nextCursor of the previous page unchanged',
  'list again without cursor (the first page) and pass its nextCursor unchanged',
);

/**
 * The range of each list's key `k` (see `cursor-fields`): a global position for the session list
 * (a session's last event's) and the erasures (an erasure record's), from 1, as SQLite and
 * PostgreSQL number events; a stream revision for a compaction history (its decision's), from 0.
 */
const KEY_RANGES: Record<KeysetList, { name: string; min: bigint; max: bigint }> = {
  sessions: { name: 'its last position', min: 1n, max: MAX_REVISION },
  erasures: { name: 'its last position', min: 1n, max: MAX_REVISION },
  compactions: { name: 'its last revision', min: 0n, max: MAX_REVISION },
};

/**
 * The refusal of a well-formed cursor of `list` whose key (bigint) is past the end of what it
 * pages, `end`: for the session list and the erasures, a global position past the log's head (no
 * page writes a position no event has had); for a compaction history, a revision past the
 * session's last revision (as the store has it). A forged cursor, or one of another log: 400
 * `invalid_query`, `cursor: is not a cursor this service made: its last position 99999999 is past
 * the end of this service's log (1043); list again without cursor (the first page) and pass its
 * nextCursor unchanged` (`its last revision 36 is past the session's last revision (35)` for a
 * compaction history). Recall refuses its cursors past the log's head the same way
 * (`recallCursorPastEnd`).
 */
export function keysetCursorPastEnd(list: KeysetList, key: bigint, end: bigint): InvalidQueryError {
  const what = list === 'compactions' ? "the session's last revision" : "the end of this service's log";
  return refuse.outOfRange(`${KEY_RANGES[list].name} ${key} is past ${what} (${end})`);
}

/**
 * Decodes a cursor made by {@link encodeKeysetCursor} for `list` (of the session `sessionId`, for
 * a compaction history; of the filters whose digest is `filters`, for the session list). Every field it reads is checked for its type and range (the rule of
 * `cursor-fields`): `k` canonical decimal text of the list's key range ({@link KEY_RANGES}), a
 * compaction-history cursor's `s` a non-empty string and `h` a digest (12 base64url characters).
 * @throws InvalidQueryError (`cursor`, 400 `invalid_query`) when it is malformed (`is not a cursor;
 *   pass the nextCursor …`), or holds a key no page writes (`is not a cursor this service made: …;
 *   list again without cursor …`), or belongs to another route (another list, or recall: the
 *   message names that route, see `cursorOfAnotherRoute`), or, for a compaction history, to another
 *   session's (the message names it when the cursor carries its id, see `cursorOfAnotherSession`). A
 *   compaction-history cursor naming no session (made before cursors named it) is read as before:
 *   for any session; so is a session-list cursor without its filters' digest. A session-list
 *   cursor of other filters is refused (`belongs to the session list with other filters …`).
 * @throws CursorOfAnotherReleaseError (`cursor`, 400 `cursor_expired`) when it carries another
 *   format version: another release made it.
 */
export function decodeKeysetCursor(list: KeysetList, text: string, sessionId?: string, filters?: string): bigint {
  const fields = cursorFields(text);
  if (fields === null) throw refuse.malformed();
  const { v, l, k, f, s, h, q } = fields;
  const version = cursorVersion(v);
  if (version !== undefined && version !== KEYSET_CURSOR_VERSION && typeof l === 'string')
    throw new CursorOfAnotherReleaseError(version, KEYSET_CURSOR_VERSION, 'list again without cursor (the first page) and follow the new nextCursor');
  // A recall cursor (any version carries `v` and the fingerprint `f`) was sent to a list.
  if (version !== undefined && typeof f === 'string' && l === undefined) throw cursorOfAnotherRoute('recall');
  if (v !== KEYSET_CURSOR_VERSION || typeof k !== 'string' || typeof l !== 'string') throw refuse.malformed();
  if (l === 'sessions' || l === 'compactions' || l === 'erasures') {
    if (l !== list) throw cursorOfAnotherRoute(l);
  } else throw new InvalidQueryError('cursor', `is a cursor of another list (${quoteInput(l)}); pass the nextCursor of the previous page unchanged`);
  const digest = (value: unknown) => value !== undefined && (typeof value !== 'string' || !/^[A-Za-z0-9_-]{12}$/.test(value));
  if ((s !== undefined && (typeof s !== 'string' || s === '')) || digest(h) || digest(q)) throw refuse.malformed();
  const key = cursorInteger(k, KEY_RANGES[list], refuse);
  // A session list's cursor of other filters; one without `q` (made before cursors carried it) is read as before.
  if (list === 'sessions' && filters !== undefined && typeof q === 'string' && q !== filters)
    throw new InvalidQueryError(
      'cursor',
      'belongs to the session list with other filters (userId, updatedSince, updatedBefore); pass the nextCursor of the previous page unchanged, with the same filters',
    );
  if (list === 'compactions' && sessionId !== undefined) {
    if (typeof s === 'string' && s !== sessionId) throw cursorOfAnotherSession(s);
    if (typeof h === 'string' && h !== sessionDigest(sessionId)) throw cursorOfAnotherSession();
  }
  return key;
}
