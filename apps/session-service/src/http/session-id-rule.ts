/**
 * The one rule for session ids, in paths, NATS subjects and recall's `sessionId` filter: letters,
 * digits and `_ - : @ .`, 1–128 characters, but not `.` or `..` (URL clients resolve those path
 * segments away: fetch turns `/v1/sessions/%2e%2e/window` into `/v1/window`, so such a session could
 * be written but never read by the typed client or `/ui`). A refusal names what to fix and where
 * ({@link sessionIdProblem}): a `*` in a NATS subject's session token, say, is pointed at.
 */
import { codePointLength, unicodeName } from '@lib/session';

/** Session ids: see the module doc. */
export const SESSION_ID_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9_\-:@.]{1,128}$/;

/** Longest session id, in characters (all of them ASCII, so also UTF-16 code units and bytes). */
export const MAX_SESSION_ID_LENGTH = 128;

/** What to fix in a session id that does not match {@link SESSION_ID_PATTERN} (400 `invalid_session_id`, in a path or a filter). */
export const SESSION_ID_RULE = `use 1 to ${MAX_SESSION_ID_LENGTH} ASCII letters, digits or _ - : @ . (not "." or "..")`;

/** One character a session id may hold. */
const ALLOWED = /[A-Za-z0-9_\-:@.]/;
/** Characters shown as themselves in a refusal (visible ones and the plain space; not a combining mark, which would join the quote: ncrecheck69 N6); others only by their code point. */
const VISIBLE = /^[\p{L}\p{N}\p{P}\p{S} ]$/u;

/**
 * What is wrong with `id` as a session id: {@link SESSION_ID_RULE} followed by where it fails
 * (`: "*" (U+002A) is character 3`, `: it has 130 characters`, `: it is empty`, `: "." alone names
 * no session`), or undefined when {@link SESSION_ID_PATTERN} accepts it. Positions and lengths are in
 * characters (Unicode code points); the id itself is never quoted (it may be long or a secret).
 */
export function sessionIdProblem(id: string): string | undefined {
  if (SESSION_ID_PATTERN.test(id)) return undefined;
  if (id.length === 0) return `${SESSION_ID_RULE}: it is empty`;
  if (id === '.' || id === '..') return `${SESSION_ID_RULE}: "${id}" alone names no session`;
  let at = 0;
  for (const char of id) {
    at += 1;
    if (ALLOWED.test(char)) continue;
    const codePoint = char.codePointAt(0)!;
    const shown = VISIBLE.test(char) ? `"${char}" (${unicodeName(codePoint)})` : unicodeName(codePoint);
    return `${SESSION_ID_RULE}: ${shown} is character ${at}`;
  }
  return `${SESSION_ID_RULE}: it has ${codePointLength(id)} characters`;
}
