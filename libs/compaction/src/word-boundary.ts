/**
 * Word boundaries of text written without spaces (Chinese, Japanese, Thai, …), where a cut may go
 * when there is no whitespace or punctuation to cut at: ICU's word segmentation (UAX #29 with its
 * dictionaries for those scripts, `Intl.Segmenter` with granularity `word`), and grapheme cluster
 * boundaries where it finds none.
 */
import { hasSpacelessLetter } from './script-runs';

/** A fixed locale, so the boundaries never depend on the environment's. */
const WORDS = new Intl.Segmenter('en', { granularity: 'word' });
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Code units segmented on each side of a cut: room for a few words of context (a dictionary word is
 * rarely over 20 characters), and a bound on the cost whatever the text's length (segmenting is
 * far slower than a scan: a whole text of megabytes is never handed to it).
 */
export const WORD_BOUNDARY_WINDOW = 64;

/** `p` moved off the second half of a surrogate pair (towards `step`). */
function pairSafe(text: string, p: number, step: -1 | 1): number {
  const code = text.charCodeAt(p);
  const before = text.charCodeAt(p - 1);
  const inside = p > 0 && p < text.length && code >= 0xdc00 && code <= 0xdfff && before >= 0xd800 && before <= 0xdbff;
  return inside ? p + step : p;
}

/**
 * The word boundary nearest `index` in text written without spaces: for `'before'` the largest
 * boundary ≤ `index` (where a kept head may end), for `'after'` the smallest ≥ `index` (where a
 * kept tail may start). Only the {@link WORD_BOUNDARY_WINDOW} code units either side of `index`
 * are segmented and looked at.
 *
 * @param text any string; lengths and positions in UTF-16 code units.
 * @param index a position in `text` (0…`text.length`).
 * @param direction the side of `index` the boundary is looked for on.
 * @returns undefined when that window holds no letter of a script written without spaces (see
 *   `SPACELESS_LETTER`: the caller's whitespace and punctuation rules are all there is
 *   to it, as in English); else the nearest ICU word boundary on that side within the window
 *   (the ends of `text` count), else, the last resort, the nearest grapheme cluster boundary (so
 *   never inside a surrogate pair, a Thai syllable's marks or an emoji sequence). Deterministic
 *   for a given ICU version (Node's).
 */
export function spacelessWordBoundary(text: string, index: number, direction: 'before' | 'after'): number | undefined {
  const i = Math.max(0, Math.min(text.length, Math.floor(index)));
  const from = pairSafe(text, Math.max(0, i - WORD_BOUNDARY_WINDOW), -1);
  const to = pairSafe(text, Math.min(text.length, i + WORD_BOUNDARY_WINDOW), 1);
  const window = text.slice(from, to);
  if (!hasSpacelessLetter(window)) return undefined;
  return nearest(WORDS, window, from, i, direction, text.length) ?? nearest(GRAPHEMES, window, from, i, direction, text.length) ?? i;
}

/**
 * The boundary of `segmenter` in `window` (which starts at `from` in a text `length` long) nearest
 * `i` on the `direction` side; the window's own ends count only where they are the text's.
 */
function nearest(segmenter: Intl.Segmenter, window: string, from: number, i: number, direction: 'before' | 'after', length: number): number | undefined {
  const to = from + window.length;
  let best: number | undefined;
  for (const s of segmenter.segment(window)) {
    for (const b of [from + s.index, from + s.index + s.segment.length]) {
      if ((b === from && from > 0) || (b === to && to < length)) continue;
      if (direction === 'before' ? b <= i && (best === undefined || b > best) : b >= i && (best === undefined || b < best)) best = b;
    }
    if (direction === 'after' && best !== undefined) break;
  }
  return best;
}
