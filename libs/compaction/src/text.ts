/**
 * Small text helpers shared by the summarizer-side code. Lengths are UTF-16 code units.
 */

/**
 * Shortens `text` to at most `maxChars` UTF-16 code units by cutting out its middle and putting
 * a marker `[… N characters omitted …]` there (both ends are kept: the start usually says what
 * a message is, the end what it concluded). Returns `text` unchanged when it fits. Never splits
 * a surrogate pair. With `maxChars` smaller than the marker, returns a prefix of the marker
 * budget (possibly empty). Deterministic.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  const limit = Math.max(0, Math.floor(maxChars));
  if (text.length <= limit) return text;
  const omitted = (n: number) => ` [… ${n} characters omitted …] `;
  let marker = omitted(text.length);
  if (limit <= marker.length) return text.slice(0, safeEnd(text, limit));
  const keep = limit - marker.length;
  const head = safeEnd(text, Math.ceil(keep / 2));
  const tailStart = safeStart(text, text.length - (keep - head));
  marker = omitted(tailStart - head);
  // the real marker is never longer than the one sized for text.length
  return text.slice(0, head) + marker + text.slice(tailStart);
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
