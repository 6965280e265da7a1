/**
 * Recall snippets cut and marked between grapheme clusters (newcomer report ncmultilingual, F1 and
 * F2). The documented rule (docs/strategies-and-triggers.md): "Every cut the service makes in text … is on a grapheme cluster boundary"
 * (a flag, a ZWJ sequence, an emoji and its skin tone, a keycap or a letter and its combining marks
 * is never split), and matches are marked as whole clusters.
 *
 * - FTS5's `snippet()` cuts a document in tokens and knows nothing of clusters: a cut of the
 *   trigram index falls between any two code points (`क्षत्रिय` shown as `क…`, `👨‍👩‍👧‍👦` as
 *   `👨‍👩‍👧‍…`), one of the word index at a word's end (`🏴` without its tag characters).
 *   {@link snippetCutsOnClusters} moves such a cut outwards to the nearest cluster boundary of the
 *   indexed text.
 * - A match found inside a longer cluster (a part of an emoji sequence finds it: `👍` finds `👍🏿`,
 *   `1` finds `1️⃣`, `👩` finds `👨‍👩‍👧‍👦`) was marked alone, and a `<mark>` inside a sequence shows it
 *   as separate emoji. {@link marksOnClusters} widens every mark to whole clusters.
 *
 * Marks are the control characters `\u0001` (open) and `\u0002` (close), as `snippet()` writes them.
 * Positions are UTF-16 code units; cluster boundaries are `graphemeBoundary`'s (`@lib/compaction`,
 * the service's one rule of where text is cut). Pure functions.
 */
import { graphemeBoundary } from '@lib/compaction';

const OPEN = '\u0001';
const CLOSE = '\u0002';
/** What FTS5 writes where `snippet()` cut the document (the fifth argument recall gives it). */
const ELLIPSIS = '…';

/**
 * `raw`, a snippet FTS5's `snippet()` cut from `body` (the index row's text it was taken from,
 * script boundaries `\u0003` included, as `raw` holds them), with each cut FTS5 made (a leading or
 * trailing `…`) moved outwards to the nearest grapheme cluster boundary of `body`:
 * `graphemeBoundary(body, start, 'before')` and `graphemeBoundary(body, end, 'after')`, the code
 * points between added to the snippet (inside the mark when a mark touches the cut: `\u0002…`,
 * `…\u0001`). A cut that reaches the start or the end of `body` that way loses its `…` (nothing is
 * cut there). The snippet's text is found in `body` by {@link snippetPlaceIn}.
 *
 * Returns `raw` unchanged when it has no `…` at either end, or when its text is not found in
 * `body` (then there is nothing sure to add). Lengths grow by at most a cluster at each end;
 * the caller bounds the snippet afterwards (`boundSnippet`).
 */
export function snippetCutsOnClusters(raw: string, body: string): string {
  const place = snippetPlaceIn(raw, body);
  if (place === undefined) return raw;
  const { cutBefore, cutAfter, inner, start, end } = place;
  const from = cutBefore ? graphemeBoundary(body, start, 'before') : start;
  const to = cutAfter ? graphemeBoundary(body, end, 'after') : end;
  const head = body.slice(from, start);
  const tail = body.slice(end, to);
  let out = inner;
  if (head !== '') out = out.startsWith(OPEN) ? OPEN + head + out.slice(OPEN.length) : head + out;
  if (tail !== '') out = out.endsWith(CLOSE) ? out.slice(0, -CLOSE.length) + tail + CLOSE : out + tail;
  return (cutBefore && from > 0 ? ELLIPSIS : '') + out + (cutAfter && to < body.length ? ELLIPSIS : '');
}

/** Where a cut snippet's text is in its row's text: see {@link snippetPlaceIn}. */
export interface SnippetPlace {
  /** Whether the snippet starts (ends) with the `…` of a cut. */
  cutBefore: boolean;
  cutAfter: boolean;
  /** The snippet without those `…`, marks kept. */
  inner: string;
  /** `[start, end)` of `inner`'s text (marks removed) in the row's text, UTF-16 code units. */
  start: number;
  end: number;
}

/**
 * Where the text of `raw` (a snippet FTS5's `snippet()` cut from `body`, marks `\u0001`/`\u0002`,
 * `…` where it was cut) is in `body`: FTS5 starts a cut snippet at a token after the first (so never
 * at index 0 of `body`) and ends an uncut one at the end of `body`; the text (marks and the end `…`
 * removed) is looked for accordingly, at its first such place when it occurs several times.
 * Undefined when `raw` has no `…` at either end, its text is empty, or it is not found.
 */
export function snippetPlaceIn(raw: string, body: string): SnippetPlace | undefined {
  const cutBefore = raw.startsWith(ELLIPSIS);
  const cutAfter = raw.length > ELLIPSIS.length && raw.endsWith(ELLIPSIS);
  if (!cutBefore && !cutAfter) return undefined;
  const inner = raw.slice(cutBefore ? ELLIPSIS.length : 0, cutAfter ? raw.length - ELLIPSIS.length : raw.length);
  const text = inner.replace(/[\u0001\u0002]/g, '');
  if (text === '') return undefined;
  let start: number;
  if (!cutBefore) start = body.startsWith(text) ? 0 : -1;
  else if (!cutAfter) start = body.length - text.length >= 1 && body.endsWith(text) ? body.length - text.length : -1;
  else start = body.indexOf(text, 1);
  return start < 0 ? undefined : { cutBefore, cutAfter, inner, start, end: start + text.length };
}

/**
 * `marked` (a snippet with `\u0001`/`\u0002` marks, `…` where it was cut) with every mark widened to
 * whole grapheme clusters of its text (marks removed): a mark's start moved to the boundary at or
 * before it, its end to the boundary at or after it (`graphemeBoundary`), never over a `…` that
 * starts or ends the snippet; marks that then overlap or touch are merged into one. So
 * `family 👨‍\u0001👩\u0002‍👧‍👦` → `family \u0001👨‍👩‍👧‍👦\u0002`, `press \u00011\u0002️⃣` →
 * `press \u00011️⃣\u0002`. An open mark left open closes at the end; an empty mark is dropped.
 * Returns `marked` itself when it has no mark.
 */
export function marksOnClusters(marked: string): string {
  if (!marked.includes(OPEN)) return marked;
  const { text, marks } = unmarked(marked);
  const first = text.startsWith(ELLIPSIS) ? ELLIPSIS.length : 0;
  const last = text.length > first && text.endsWith(ELLIPSIS) ? text.length - ELLIPSIS.length : text.length;
  const merged: Array<[number, number]> = [];
  for (const [open, close] of marks) {
    if (close <= open) continue;
    const from = open >= first ? Math.max(first, graphemeBoundary(text, open, 'before')) : open;
    const to = close <= last ? Math.min(last, graphemeBoundary(text, close, 'after')) : close;
    const previous = merged[merged.length - 1];
    if (previous !== undefined && from <= previous[1]) previous[1] = Math.max(previous[1], to);
    else merged.push([from, to]);
  }
  let out = '';
  let copied = 0;
  for (const [from, to] of merged) {
    out += text.slice(copied, from) + OPEN + text.slice(from, to) + CLOSE;
    copied = to;
  }
  return out + text.slice(copied);
}

/** `raw` without its marks, and the marks as [open, close) pairs of UTF-16 indexes of that text, in order (an open mark left open closes at the end). */
export function unmarked(raw: string): { text: string; marks: Array<[number, number]> } {
  const marks: Array<[number, number]> = [];
  let text = '';
  let open = -1;
  for (const part of raw.split(/([\u0001\u0002])/)) {
    if (part === OPEN) {
      if (open < 0) open = text.length;
    } else if (part === CLOSE) {
      if (open >= 0) marks.push([open, text.length]);
      open = -1;
    } else text += part;
  }
  if (open >= 0) marks.push([open, text.length]);
  return { text, marks };
}
