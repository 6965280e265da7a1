/**
 * The one rule for client-chosen ids, on every route (native events and OpenAI messages, their
 * tool-call ids, `userId`): 1 to 256 characters (Unicode code points: an emoji such as 😀 counts
 * one), no control characters (Cc), no format
 * characters (Cf: bidi overrides and isolates such as U+202E, zero-width U+200B–U+200D, U+FEFF,
 * soft hyphen), no line or paragraph separators, no lone surrogates. Such characters are invisible
 * or reorder text: two ids that look the same could differ, and an id could display as another.
 */
import { codePointLength, LENGTH_UNIT } from '@lib/compaction';

/** Longest client id, in characters (Unicode code points). */
export const MAX_CLIENT_ID_LENGTH = 256;

export { codePointLength, LENGTH_UNIT } from '@lib/compaction';

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `id` as a client id (a message to follow the field name), or undefined when it is valid. */
export function clientIdProblem(id: string): string | undefined {
  if (id.length === 0 || (id.length > MAX_CLIENT_ID_LENGTH && codePointLength(id) > MAX_CLIENT_ID_LENGTH) || INVISIBLE.test(id))
    return `must be 1 to ${MAX_CLIENT_ID_LENGTH} ${LENGTH_UNIT} without control characters or invisible format characters (bidi controls, zero-width characters)`;
  if (LONE_SURROGATE.test(id)) return 'contains a lone UTF-16 surrogate; send valid Unicode';
  return undefined;
}
