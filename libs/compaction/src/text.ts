/**
 * Small text helpers shared by the summarizer-side code. Lengths are UTF-16 code units.
 */

/**
 * What {@link truncateMiddle} (and the extractive summarizer's line lists) put where text was
 * left out: `[… N characters omitted …]` or `[… N more omitted …]`.
 */
export const OMISSION_MARKER = /\[… (\d+) (characters|more) omitted …\]/g;

/**
 * Shortens `text` to at most `maxChars` UTF-16 code units by cutting out its middle and putting
 * a marker `[… N characters omitted …]` there (both ends are kept: the start usually says what
 * a message is, the end what it concluded). Returns `text` unchanged when it fits. Never splits
 * a surrogate pair. Deterministic.
 *
 * Text that was already truncated keeps well-formed markers: the cut never goes through an
 * existing marker (it is widened to take the whole marker out), and a marker that the cut
 * touches or that ends up right beside the new one is folded into it, N then counting the
 * characters those markers stood for as well. So truncating again and again leaves one marker
 * per cut, never `[… 1 [… 2778 characters omitted …] ters omitted …]`.
 *
 * With `maxChars` smaller than the marker, returns a prefix within the budget (possibly empty)
 * that does not end inside a marker.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  const limit = Math.max(0, Math.floor(maxChars));
  if (text.length <= limit) return text;
  const markers = findMarkers(text);
  const omitted = (n: number) => ` [… ${n} characters omitted …] `;
  // sized for the most the new marker can ever claim, so the real one is never longer
  const claimedInText = markers.reduce((a, m) => a + (m.chars ?? 0), 0);
  const sizing = omitted(text.length + claimedInText);
  if (limit <= sizing.length) return text.slice(0, outsideMarkersBefore(markers, safeEnd(text, limit)));
  const keep = limit - sizing.length;
  let head = safeEnd(text, Math.ceil(keep / 2));
  let tailStart = safeStart(text, text.length - (keep - head));
  // never through a marker; take in markers touching the cut (only whitespace between)
  for (let changed = true; changed;) {
    changed = false;
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
  head = trimEndIndex(text, head);
  tailStart = trimStartIndex(text, tailStart);
  let count = tailStart - head;
  for (const m of markers) {
    if (m.start >= head && m.end <= tailStart) count += (m.chars ?? 0) - (m.end - m.start);
  }
  return text.slice(0, head) + omitted(Math.max(count, tailStart - head > 0 ? 1 : 0)) + text.slice(tailStart);
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

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** An end index ≤ `end` that does not split a surrogate pair. */
function safeEnd(text: string, end: number): number {
  if (end > 0 && end < text.length && isHigh(text.charCodeAt(end - 1))) return end - 1;
  return end;
}

/** A start index ≥ `start` that does not split a surrogate pair. */
function safeStart(text: string, start: number): number {
  if (start > 0 && start < text.length && isHigh(text.charCodeAt(start - 1))) return start + 1;
  return start;
}
