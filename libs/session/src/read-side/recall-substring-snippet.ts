import { boundSnippet } from './recall-snippet-bound';

/**
 * Snippets of recall hits found by substring (words of one or two characters of an unspaced
 * script, or emoji: `東京`, `😀`, which neither FTS5 tokenizer can match as a phrase; see
 * `recallQueryPlan`). FTS5's `snippet()` cannot mark them, so the excerpt and the marks are made
 * here (a grapheme cluster is not cut where a boundary is near, a surrogate pair never).
 *
 * Marks are the control characters `\u0001` (open) and `\u0002` (close), as `snippet()` is asked
 * to write them; the caller escapes the text and turns them into `<mark>` tags.
 */

/** Code points of an excerpt, `…` included (64 of text between the two `…` of a cut, as the excerpts were). */
const LENGTH = 66;

/** The first occurrence of any of `terms` in `text` (UTF-16 index and length), case-insensitively for letters with case; undefined when none. */
function firstOccurrence(text: string, terms: readonly string[]): { index: number; length: number } | undefined {
  const m = termsPattern(terms)?.exec(text);
  return m ? { index: m.index, length: m[0].length } : undefined;
}

function termsPattern(terms: readonly string[]): RegExp | null {
  const sorted = [...new Set(terms)].filter((t) => t !== '').sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return null;
  return new RegExp(sorted.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'giu');
}

/**
 * An excerpt of `body` of at most 66 code points (`…` included) around the first occurrence of
 * any of `terms`, with `…` where text was cut, cut between grapheme clusters as every snippet is
 * ({@link boundSnippet}); the start of `body` when no term occurs (a hit always holds one, but
 * stay total).
 */
export function substringExcerpt(body: string, terms: readonly string[]): string {
  const first = firstOccurrence(body, terms);
  if (first === undefined) return boundSnippet(body, LENGTH);
  const end = first.index + first.length;
  return boundSnippet(`${body.slice(0, first.index)}\u0001${body.slice(first.index, end)}\u0002${body.slice(end)}`, LENGTH).replace(/[\u0001\u0002]/g, '');
}

/**
 * `text` with every occurrence of `terms` wrapped in `\u0001`…`\u0002`, outside the parts
 * already marked (no nested marks).
 */
export function markSubstrings(text: string, terms: readonly string[]): string {
  const pattern = termsPattern(terms);
  if (pattern === null) return text;
  return text
    .split(/(\u0001[^\u0002]*\u0002)/u)
    .map((part) => (part.startsWith('\u0001') ? part : part.replace(pattern, (m) => `\u0001${m}\u0002`)))
    .join('');
}
