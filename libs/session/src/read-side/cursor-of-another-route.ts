import { InvalidQueryError } from './invalid-query-error';

/**
 * The route whose pages each kind of paging cursor continues: recall's cursors, and the keyset
 * cursors of the session list and of a session's compaction history (`KeysetList`).
 */
export const CURSOR_ROUTES = {
  recall: 'GET /v1/recall',
  sessions: 'GET /v1/sessions',
  compactions: 'GET /v1/sessions/{sessionId}/compactions',
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
