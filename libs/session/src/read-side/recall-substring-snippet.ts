/**
 * Snippets of recall hits found by substring (words of one or two characters of an unspaced
 * script, or emoji: `東京`, `😀`, which neither FTS5 tokenizer can match as a phrase; see
 * `recallQueryPlan`). FTS5's `snippet()` cannot mark them, so the excerpt and the marks are made
 * here, in code points, on grapheme cluster boundaries (a surrogate pair, a flag, a ZWJ sequence is never cut).
 *
 * Marks are the control characters `\u0001` (open) and `\u0002` (close), as `snippet()` is asked
 * to write them; the caller escapes the text and turns them into `<mark>` tags.
 */

import { graphemeBoundary } from '@lib/compaction';

/** Code points kept before the first match in {@link substringExcerpt}. */
const BEFORE = 20;
/** Code points of an excerpt (as long as the unmarked excerpts were: 64). */
const LENGTH = 64;

/** Index (in UTF-16 units) of the first occurrence of any of `terms` in `text`, case-insensitively for letters with case; -1 when none. */
function firstOccurrence(text: string, terms: readonly string[]): number {
  const pattern = termsPattern(terms);
  if (pattern === null) return -1;
  const m = pattern.exec(text);
  pattern.lastIndex = 0;
  return m ? m.index : -1;
}

function termsPattern(terms: readonly string[]): RegExp | null {
  const sorted = [...new Set(terms)].filter((t) => t !== '').sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return null;
  return new RegExp(sorted.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'giu');
}

/**
 * An excerpt of `body` of at most 64 code points around the first occurrence of any of `terms`
 * (20 code points before it), narrowed to grapheme cluster boundaries ({@link graphemeBoundary}),
 * with `…` where text was cut; the start of `body` when no term
 * occurs (a hit always holds one, but stay total).
 */
export function substringExcerpt(body: string, terms: readonly string[]): string {
  const at = firstOccurrence(body, terms);
  const points = Array.from(body);
  const startPoint = at < 0 ? 0 : Math.max(0, Array.from(body.slice(0, at)).length - BEFORE);
  const endPoint = Math.min(points.length, startPoint + LENGTH);
  // the same span in UTF-16 code units, narrowed to grapheme cluster boundaries (never half a flag or a ZWJ sequence)
  const from = graphemeBoundary(body, points.slice(0, startPoint).join('').length, 'after');
  const to = Math.max(from, graphemeBoundary(body, points.slice(0, endPoint).join('').length, 'before'));
  return `${from > 0 ? '…' : ''}${body.slice(from, to)}${to < body.length ? '…' : ''}`;
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
