/**
 * Small text helpers shared by the summarizer-side code. Lengths are UTF-16 code units.
 */
import { graphemeBoundary } from './grapheme-boundary';
import { spacelessWordBoundary } from './word-boundary';

/**
 * What {@link truncateMiddle} (and the extractive summarizer's line lists) put where text was
 * left out: `[… N characters omitted …]` or `[… N more omitted …]`.
 */
export const OMISSION_MARKER = /\[… (\d+) (characters|more) omitted …\]/g;

/**
 * Shortens `text` to at most `maxChars` UTF-16 code units by cutting out its middle and putting
 * a marker `[… N characters omitted …]` there (both ends are kept: the start usually says what
 * a message is, the end what it concluded). Returns `text` unchanged when it fits. Cuts only on
 * grapheme cluster boundaries ({@link graphemeBoundary}): never half a surrogate pair, a flag, a
 * ZWJ sequence, an emoji and its skin tone or a letter and its combining marks. Deterministic.
 *
 * Text that was already truncated keeps well-formed markers: the cut never goes through an
 * existing marker (it is widened to take the whole marker out), and a marker that the cut
 * touches or that ends up right beside the new one is folded into it, N then counting the
 * characters those markers stood for as well. So truncating again and again leaves one marker
 * per cut, never `[… 1 [… 2778 characters omitted …] ters omitted …]`.
 *
 * With `maxChars` smaller than the marker, returns a prefix within the budget (possibly empty)
 * that does not end inside a marker.
 *
 * With `options.atWords`, no word (a run of letters, digits and `_`) is split: the head ends and
 * the tail starts at a boundary, preferably whitespace, else structural punctuation (`,;:"'{}[]()<>|=`),
 * each looked for within half the kept side; else any boundary between a word and a non-word
 * character. Only a side that is one huge word with no boundary at all (e.g. a 300-letter Latin
 * run) is cut as without the option. In text written without spaces (Chinese, Japanese, Thai, …:
 * a letter of such a script near the cut) the nearest word boundary of its script is taken
 * instead ({@link spacelessWordBoundary}: ICU's dictionary segmentation, else a grapheme
 * boundary), as whitespace is in English. The kept ends only shrink, so the result stays within
 * `maxChars`.
 */
export function truncateMiddle(text: string, maxChars: number, options: { atWords?: boolean } = {}): string {
  const limit = Math.max(0, Math.floor(maxChars));
  if (text.length <= limit) return text;
  const markers = findMarkers(text);
  // sized for the most the new marker can ever claim, so the real one is never longer
  const sizing = omissionMarker(text.length + markers.reduce((a, m) => a + (m.chars ?? 0), 0));
  if (limit <= sizing.length) return text.slice(0, outsideMarkersBefore(markers, graphemeBoundary(text, limit, 'before')));
  return cutMiddle(text, limit - sizing.length, options);
}

/** The marker put where a cut leaves `n` characters out, with a space either side. */
export function omissionMarker(n: number): string {
  return ` [… ${n} characters omitted …] `;
}

/**
 * `text` with its middle cut out so that at most `keep` UTF-16 code units of it stay (about half
 * at each end) and the marker `[… N characters omitted …]` in place of the rest, whatever the
 * marker's own length: so the result may be longer than `text` in code units (the marker is ~30)
 * while it costs fewer tokens. This is the form {@link truncateMiddle} gives, and what a search for
 * the most text within a token budget walks (`fitTextToTokens`): there `keep` counts content only,
 * so keeping more never yields less content, which a bound on the result's length cannot promise
 * for a text not much longer than the marker. Same rules as {@link truncateMiddle}: never through a
 * marker or a grapheme cluster (so never a surrogate pair), with `options.atWords` never through a word; the kept ends only
 * shrink. `keep` ≥ `text.length` returns `text`. Deterministic.
 */
export function cutMiddle(text: string, keep: number, options: { atWords?: boolean } = {}): string {
  const kept = Math.max(0, Math.floor(keep));
  if (kept >= text.length) return text;
  const markers = findMarkers(text);
  let head = graphemeBoundary(text, Math.ceil(kept / 2), 'before');
  let tailStart = graphemeBoundary(text, text.length - (kept - head), 'after');
  // never through a marker; take in markers touching the cut (only whitespace between); with
  // atWords, never through a word either; never through a grapheme cluster (repeated: moving one
  // may land on another; the kept ends only shrink, so this ends)
  for (let changed = true; changed;) {
    changed = false;
    const h = graphemeBoundary(text, trimEndIndex(text, head), 'before');
    const t = graphemeBoundary(text, trimStartIndex(text, tailStart), 'after');
    if (h !== head || t !== tailStart) changed = true;
    head = h;
    tailStart = t;
    if (options.atWords) {
      const h = wordSafeEnd(text, head);
      const t = wordSafeStart(text, tailStart);
      if (h !== head || t !== tailStart) changed = true;
      head = h;
      tailStart = t;
    }
    for (const m of markers) {
      const insideHead = m.start < head && head < m.end;
      const besideHead = m.end <= head && text.slice(m.end, head).trim() === '' && m.start < head;
      if ((insideHead || besideHead) && m.start < head) {
        head = m.start;
        changed = true;
      }
      const insideTail = m.start < tailStart && tailStart < m.end;
      const besideTail = m.start >= tailStart && text.slice(tailStart, m.start).trim() === '' && m.end > tailStart;
      if ((insideTail || besideTail) && m.end > tailStart) {
        tailStart = m.end;
        changed = true;
      }
    }
  }
  let count = tailStart - head;
  for (const m of markers) {
    if (m.start >= head && m.end <= tailStart) count += (m.chars ?? 0) - (m.end - m.start);
  }
  return text.slice(0, head) + omissionMarker(Math.max(count, tailStart - head > 0 ? 1 : 0)) + text.slice(tailStart);
}

interface MarkerSpan {
  start: number;
  end: number;
  /** Characters the marker stands for (`characters omitted`); undefined for `more omitted` (lines). */
  chars?: number;
}

function findMarkers(text: string): MarkerSpan[] {
  if (!text.includes('[…')) return [];
  const out: MarkerSpan[] = [];
  for (const m of text.matchAll(OMISSION_MARKER)) {
    const start = m.index ?? 0;
    out.push({ start, end: start + m[0].length, chars: m[2] === 'characters' ? Number(m[1]) : undefined });
  }
  return out;
}

/** `end`, or the start of the marker it would cut through. */
function outsideMarkersBefore(markers: readonly MarkerSpan[], end: number): number {
  for (const m of markers) if (m.start < end && end < m.end) return m.start;
  return end;
}

/** Moves an end index back over whitespace (the marker brings its own spaces). */
function trimEndIndex(text: string, end: number): number {
  while (end > 0 && /\s/.test(text[end - 1])) end--;
  return end;
}

/** Moves a start index forward over whitespace. */
function trimStartIndex(text: string, start: number): number {
  while (start < text.length && /\s/.test(text[start])) start++;
  return start;
}

const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;
const STRUCTURAL = /[,;:"'{}[\]()<>|=]/;

/** {@link unitClass} bits: the unit was classified; `\s`; {@link WORD_CHAR} (alone, not as half of a pair); {@link STRUCTURAL}. */
const CLASSIFIED = 1;
const SPACE = 2;
const WORD = 4;
const STRUCT = 8;

/** {@link unitClass} of each UTF-16 code unit seen so far (0: not yet): 64 KiB, filled on first sight. */
const UNIT_CLASSES = new Uint8Array(0x10000);

/**
 * The classes of one UTF-16 code unit, as the expressions above answer for the one-unit string: a
 * cut scans up to half a kept side (hundreds of thousands of units in a search over truncations of
 * a large text), and three regular-expression tests a unit were most of a large compaction's time.
 */
function unitClass(code: number): number {
  let c = UNIT_CLASSES[code];
  if (c === 0) {
    const unit = String.fromCharCode(code);
    c = CLASSIFIED | (/\s/.test(unit) ? SPACE : 0) | (WORD_CHAR.test(unit) ? WORD : 0) | (STRUCTURAL.test(unit) ? STRUCT : 0);
    UNIT_CLASSES[code] = c;
  }
  return c;
}

function isWord(text: string, i: number): boolean {
  if (i < 0 || i >= text.length) return false;
  const code = text.charCodeAt(i);
  // a surrogate half: judge the whole code point
  if (isHigh(code)) return WORD_CHAR.test(text.slice(i, i + 2));
  if (code >= 0xdc00 && code <= 0xdfff && i > 0) return WORD_CHAR.test(text.slice(i - 1, i + 1));
  return (unitClass(code) & WORD) !== 0;
}

/**
 * How good a cut between `text[p - 1]` and `text[p]` is: 1 at whitespace, 2 at structural
 * punctuation, 3 at any other word edge (and at the ends of `text`: one side kept empty), 0 inside
 * a word or a surrogate pair.
 */
function boundaryLevel(text: string, p: number): number {
  if (p <= 0 || p >= text.length) return 3;
  const a = text.charCodeAt(p - 1);
  const b = text.charCodeAt(p);
  if (isHigh(a)) return 0;
  const classes = unitClass(a) | unitClass(b);
  if ((classes & SPACE) !== 0) return 1;
  if (isWord(text, p - 1) && isWord(text, p)) return 0;
  return (classes & STRUCT) !== 0 ? 2 : 3;
}

/**
 * The cut nearest `p` stepping by `dir` (towards the start for -1, the end for +1) that splits no
 * word: `p` itself at whitespace; in text written without spaces (a letter of such a script near
 * `p`) the nearest word boundary of {@link spacelessWordBoundary} (else a grapheme boundary);
 * else whitespace, else punctuation within half the kept `side` (at least 16), else any word edge
 * (`p` itself if it is one). `p` unchanged when `text` is a single word (no boundary inside).
 */
function wordSafeCut(text: string, p: number, dir: -1 | 1, side: number): number {
  if (p <= 0 || p >= text.length) return p;
  const here = boundaryLevel(text, p);
  if (here === 1) return p;
  // text written without spaces (CJK, Thai, …, or a code glued to it): its word boundaries are
  // what whitespace is to English, the nearest one is taken (else a grapheme boundary)
  const spaceless = spacelessWordBoundary(text, p, dir < 0 ? 'before' : 'after');
  if (spaceless !== undefined) return spaceless;
  const window = Math.max(16, Math.floor(side / 2));
  // one pass: the nearest whitespace, else the nearest punctuation seen on the way
  let punctuation = -1;
  for (let q = p + dir, steps = 1; q > 0 && q < text.length && steps <= window; q += dir, steps++) {
    const l = boundaryLevel(text, q);
    if (l === 1) return q;
    if (l === 2 && punctuation < 0) punctuation = q;
  }
  if (punctuation >= 0) return punctuation;
  if (here !== 0) return p;
  let q = p + dir;
  while (q > 0 && q < text.length && boundaryLevel(text, q) === 0) q += dir;
  if (q > 0 && q < text.length) return q;
  // the word reaches the end of the text: drop that whole side, unless the text is one word
  for (let r = 1; r < text.length; r++) if (boundaryLevel(text, r) !== 0) return q;
  return p;
}

/** A head end ≤ `end` that splits no word (see {@link truncateMiddle}). */
function wordSafeEnd(text: string, end: number): number {
  return wordSafeCut(text, end, -1, end);
}

/** A tail start ≥ `start` that splits no word (see {@link truncateMiddle}). */
function wordSafeStart(text: string, start: number): number {
  return wordSafeCut(text, start, 1, text.length - start);
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
