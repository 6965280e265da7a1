/**
 * The bound on a recall snippet's length, in characters (newcomer report ncintl, F5). FTS5's
 * `snippet()` cuts a document in tokens (24), and a run of Chinese or Japanese without spaces, or
 * of emoji, is one unicode61 token however long: a word found through the word index next to
 * such a run got the whole document (up to 262,144 characters) as its snippet. Every snippet is
 * cut here to at most {@link RECALL_SNIPPET_MAX_LENGTH} code points around its first match, on
 * grapheme cluster boundaries where one is near, never inside a surrogate pair.
 *
 * Marks are the control characters `\u0001` (open) and `\u0002` (close) as `snippet()` writes
 * them; they do not count and are kept balanced.
 */

/**
 * Most characters (Unicode code points, `…` included, marks and HTML escaping not) a recall
 * snippet shows: what FTS5's 24 tokens give English text, so such snippets are not cut. Measured
 * on the shared conversations (4,212 snippets of 339 words of the word index): median 151,
 * 99th percentile 216, longest 231.
 */
export const RECALL_SNIPPET_MAX_LENGTH = 240;

/** Share of the room around the first match put before it (when the text has that much). */
const BEFORE_SHARE = 0.3;
/** Code points either side of a cut segmented to find the grapheme cluster boundary nearest it. */
const CLUSTER_CONTEXT = 64;
const OPEN = '\u0001';
const CLOSE = '\u0002';
const ELLIPSIS = '…';

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/**
 * `raw` (a snippet with `\u0001`/`\u0002` marks) cut to at most `max` code points of text, `…`
 * where it was cut, keeping the first match whole when it fits: a start and an end moved inwards
 * to the grapheme cluster boundary nearest them (see `clusterBoundariesNear`), but never past
 * the first match (a cluster reaching into it, or longer than the context looked at, is then cut
 * between code points). A match longer than the room is cut too (its mark closed at the cut).
 * Returned as it is when its text is short enough. Reads `raw` only around its first match (and,
 * in a run of regional indicators, that run back to its start).
 */
export function boundSnippet(raw: string, max: number = RECALL_SNIPPET_MAX_LENGTH): string {
  if (raw.length <= max || visiblePointsUpTo(raw, max + 1) <= max) return raw;
  // Only the part of `raw` around its first match is read (copying a whole 200,000-unit snippet
  // without its marks cost ~4 ms): enough for the snippet and the context of its cuts, even if
  // every character there were a one-character match (three units each).
  const reach = 4 * (max + CLUSTER_CONTEXT);
  const first = Math.max(0, raw.indexOf(OPEN));
  const close = raw.indexOf(CLOSE, first);
  let lo = Math.max(0, first - reach);
  let hi = Math.min(raw.length, Math.min(close < 0 ? first : close, first + reach) + reach);
  if (lo > 0 && isLowSurrogate(raw.charCodeAt(lo))) lo--;
  if (lo > 0 && isRegionalIndicator(raw.codePointAt(lo)) && regionalIndicatorsBefore(raw, lo) % 2 === 1) lo -= 2;
  if (hi < raw.length && isLowSurrogate(raw.charCodeAt(hi))) hi++;
  const { text, marks } = unmarked(raw.slice(lo, hi));
  const [matchStart, matchEnd] = marks[0] ?? [0, 0];
  const room = max - 2; // one `…` each side
  const matchLength = codePointsUpTo(text, matchStart, matchEnd, room);
  let start: number;
  let end: number;
  if (matchLength >= room) {
    start = matchStart;
    end = advance(text, matchStart, room);
  } else {
    const free = room - matchLength;
    const available = { before: codePointsUpTo(text, 0, matchStart, free), after: codePointsUpTo(text, matchEnd, text.length, free) };
    const before = Math.min(available.before, Math.max(Math.floor(free * BEFORE_SHARE), free - available.after));
    start = retreat(text, matchStart, before);
    end = advance(text, matchEnd, Math.min(available.after, free - before));
    if (start > 0) start = clusterBoundaryAtOrAfter(text, start, matchStart);
    // (`text` starts at a pair of a run of regional indicators, and far enough before the match
    // that the context of this cut is inside it.)
    if (end < text.length) end = clusterBoundaryAtOrBefore(text, end, matchEnd);
  }
  let out = start > 0 || lo > 0 ? ELLIPSIS : '';
  let copied = start;
  for (const [from, to] of marks) {
    if (to <= start || from >= end) continue;
    const a = Math.max(from, start);
    const b = Math.min(to, end);
    out += text.slice(copied, a) + OPEN + text.slice(a, b) + CLOSE;
    copied = b;
  }
  return out + text.slice(copied, end) + (end < text.length || hi < raw.length ? ELLIPSIS : '');
}

/** Code points of `raw` but its marks, counted up to `cap`. */
function visiblePointsUpTo(raw: string, cap: number): number {
  let points = 0;
  for (let i = 0; i < raw.length && points < cap; i++) {
    const unit = raw.charCodeAt(i);
    if (unit === 1 || unit === 2) continue;
    points++;
    if (isHighSurrogate(unit) && isLowSurrogate(raw.charCodeAt(i + 1))) i++;
  }
  return points;
}

/** How many regional indicators come right before UTF-16 index `at` of `text`. */
function regionalIndicatorsBefore(text: string, at: number): number {
  let run = 0;
  while (at - 2 * (run + 1) >= 0 && isRegionalIndicator(text.codePointAt(at - 2 * (run + 1)))) run++;
  return run;
}

/**
 * `raw` without its marks, and the marks as [open, close) pairs of UTF-16 indexes of that text,
 * in order (an open mark left open closes at the end). Found with `indexOf` (a character loop
 * over a 200,000-unit snippet cost ~4 ms).
 */
function unmarked(raw: string): { text: string; marks: Array<[number, number]> } {
  const marks: Array<[number, number]> = [];
  let text = '';
  let copied = 0;
  let open = -1;
  let nextOpen = raw.indexOf(OPEN);
  let nextClose = raw.indexOf(CLOSE);
  while (nextOpen >= 0 || nextClose >= 0) {
    const isOpen = nextClose < 0 || (nextOpen >= 0 && nextOpen < nextClose);
    const at = isOpen ? nextOpen : nextClose;
    text += raw.slice(copied, at);
    copied = at + 1;
    if (isOpen) {
      open = text.length;
      nextOpen = raw.indexOf(OPEN, at + 1);
    } else {
      if (open >= 0) marks.push([open, text.length]);
      open = -1;
      nextClose = raw.indexOf(CLOSE, at + 1);
    }
  }
  text += raw.slice(copied);
  if (open >= 0) marks.push([open, text.length]);
  return { text, marks };
}

/** Code points of `text` between UTF-16 indexes `from` and `to`, counted up to `cap` (then `cap`). */
function codePointsUpTo(text: string, from: number, to: number, cap: number): number {
  let points = 0;
  for (let i = from; i < to && points < cap; i++) {
    points++;
    if (isHighSurrogate(text.charCodeAt(i)) && i + 1 < to && isLowSurrogate(text.charCodeAt(i + 1))) i++;
  }
  return points;
}

/** The UTF-16 index `points` code points after `from` (at most the end). */
function advance(text: string, from: number, points: number): number {
  let i = from;
  for (let n = 0; n < points && i < text.length; n++) i += isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
  return i;
}

/** The UTF-16 index `points` code points before `from` (at least 0). */
function retreat(text: string, from: number, points: number): number {
  let i = from;
  for (let n = 0; n < points && i > 0; n++) i -= i >= 2 && isLowSurrogate(text.charCodeAt(i - 1)) && isHighSurrogate(text.charCodeAt(i - 2)) ? 2 : 1;
  return i;
}

/** The first grapheme cluster boundary at or after `at`, when it is at most `limit` (else `at`). */
function clusterBoundaryAtOrAfter(text: string, at: number, limit: number): number {
  const boundary = clusterBoundariesNear(text, at).find((b) => b >= at);
  return boundary !== undefined && boundary <= limit ? boundary : at;
}

/** The last grapheme cluster boundary at or before `at`, when it is at least `limit` (else `at`). */
function clusterBoundaryAtOrBefore(text: string, at: number, limit: number): number {
  const boundary = clusterBoundariesNear(text, at)
    .filter((b) => b <= at)
    .pop();
  return boundary !== undefined && boundary >= limit ? boundary : at;
}

/**
 * Grapheme cluster boundaries of `text` (UTF-16 indexes, ascending) within {@link CLUSTER_CONTEXT}
 * code points of `at`, as `Intl.Segmenter` finds them in that piece (segmenting the whole text
 * costs ~11 ms per 262,144 units, for each call). The piece starts at a whole pair of a run of
 * regional indicators (they pair from the run's start); its first two boundaries, which may
 * depend on what comes before it (a ZWJ sequence it starts inside), are not used.
 */
function clusterBoundariesNear(text: string, at: number): number[] {
  let from = retreat(text, at, CLUSTER_CONTEXT);
  if (from > 0 && isRegionalIndicator(text.codePointAt(from)) && regionalIndicatorsBefore(text, from) % 2 === 1) from -= 2;
  const to = advance(text, at, CLUSTER_CONTEXT);
  const boundaries: number[] = [];
  let skip = from === 0 ? 0 : 2;
  for (const { index } of graphemes.segment(text.slice(from, to))) if (skip-- <= 0) boundaries.push(from + index);
  if (to === text.length) boundaries.push(to);
  return boundaries;
}

function isRegionalIndicator(point: number | undefined): boolean {
  return point !== undefined && point >= 0x1f1e6 && point <= 0x1f1ff;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
