import { InvalidQueryError } from './invalid-query-error';

/** Longest `q` accepted, in UTF-16 code units. */
export const MAX_RECALL_QUERY_LENGTH = 1000;
/** Most words of `q` used (the rest are ignored). */
export const MAX_RECALL_QUERY_TERMS = 32;

const SEARCHABLE = /[\p{L}\p{N}\p{M}]/u;

/**
 * Turns user text into a safe FTS5 MATCH expression: every whitespace-separated word becomes a
 * quoted phrase (inner `"` doubled), words without any letter or digit are dropped, and the
 * phrases are ANDed. FTS5 operators in `q` (`AND`, `OR`, `NOT`, `NEAR`, `*`, `:`, `^`, `-`,
 * parentheses, quotes) are thus searched as text, never interpreted.
 *
 * Example: `read_file "src/a.ts" -x` → `"read_file" """src/a.ts""" "-x"`.
 *
 * @throws InvalidQueryError (`q`) when `q` is blank, longer than {@link MAX_RECALL_QUERY_LENGTH},
 *   or has no letter or digit at all.
 */
export function recallMatchExpression(q: string): string {
  if (typeof q !== 'string' || q.trim() === '') throw new InvalidQueryError('q', 'give at least one word to search for');
  if (q.length > MAX_RECALL_QUERY_LENGTH) throw new InvalidQueryError('q', `must be at most ${MAX_RECALL_QUERY_LENGTH} characters`);
  const terms = q
    // Control characters (a NUL ends an FTS5 string early) separate words like spaces.
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .split(/\s+/u)
    .filter((term) => SEARCHABLE.test(term))
    .slice(0, MAX_RECALL_QUERY_TERMS);
  if (terms.length === 0) throw new InvalidQueryError('q', 'must contain at least one letter or digit');
  return terms.map((term) => `"${term.replace(/"/g, '""')}"`).join(' ');
}
