import { quoteInput } from '@lib/compaction';
import { InvalidQueryError } from './invalid-query-error';

/**
 * Longest cursor text any paging route accepts, in characters (base64url): the longest the service
 * makes on any route (a recall `relevance` cursor of 32 ranked words is about 700; a compaction
 * history cursor of a 256-character session id about 1,430). Every route reads cursors up to it
 * before telling which route one belongs to, so a cursor of another route is named whatever its
 * length; a longer text is no cursor of this service.
 */
export const MAX_CURSOR_LENGTH = 2048;

/**
 * The route whose pages each kind of paging cursor continues: recall's cursors, and the keyset
 * cursors of the session list, of a session's compaction history and of the erasures (`KeysetList`).
 */
export const CURSOR_ROUTES = {
  recall: 'GET /v1/recall',
  sessions: 'GET /v1/sessions',
  compactions: 'GET /v1/sessions/{sessionId}/compactions',
  erasures: 'GET /v1/erasures',
} as const;

/** A kind of paging cursor, named by the route it pages ({@link CURSOR_ROUTES}). */
export type CursorKind = keyof typeof CURSOR_ROUTES;

/**
 * The error for a well-formed cursor of kind `kind` sent to another route's `cursor` (e.g. a
 * recall cursor sent to the session list): 400 `invalid_query` naming `cursor` and the route the
 * cursor belongs to, e.g. `cursor: this cursor belongs to GET /v1/recall; pass the nextCursor this
 * route gave`. The client passed it unchanged; it mixed up pagings, so "is not a cursor" would mislead.
 */
export function cursorOfAnotherRoute(kind: CursorKind): InvalidQueryError {
  return new InvalidQueryError('cursor', `this cursor belongs to ${CURSOR_ROUTES[kind]}; pass the nextCursor this route gave`);
}

/**
 * The error for a compaction-history cursor sent to the compaction history of another session than
 * the one whose page made it: 400 `invalid_query` naming `cursor` and that session (`sessionId`,
 * quoted and cut as error messages repeat client values), e.g. `cursor: this cursor belongs to the
 * compactions of session "A" (GET /v1/sessions/{sessionId}/compactions with sessionId "A"); pass the
 * nextCursor this session's list gave, or omit cursor for its first page`. Without `sessionId`
 * (a cursor naming its session by a digest only: an id too long to carry) the session is not named.
 */
export function cursorOfAnotherSession(sessionId?: string): InvalidQueryError {
  const whose = sessionId === undefined ? 'another session' : `session ${quoteInput(sessionId)}`;
  return new InvalidQueryError(
    'cursor',
    `this cursor belongs to the compactions of ${whose}, not of this session; pass the nextCursor this session's list gave, or omit cursor for its first page`,
  );
}
