/**
 * A recall snippet whose cut falls inside a match shows the whole match, marked (newcomer ncrecheck66 F3, ncrecheck67
 * F2). FTS5's `snippet()` closes a mark where its window of tokens ends, so a phrase the window takes only part of was
 * shown cut and marked, `…<mark>東京タワ</mark>…` for `東京タワー` (the trigram index counts a token per character), or
 * cut and unmarked when the window starts inside it (`…京タワーと…`) or ends at its first token (`…</mark>東…`). Marks
 * are the control characters `\u0001` (open) and `\u0002` (close), positions UTF-16 code units. Pure functions.
 */
import { snippetPlaceIn, unmarked } from './recall-snippet-clusters';

const OPEN = '\u0001';
const CLOSE = '\u0002';
const ELLIPSIS = '…';

/** Longest phrase (in UTF-16 code units of its loose form) whose cut match is completed: a longer one is left as FTS5 cut it. */
const LONGEST_COMPLETED_PHRASE = 64;

/**
 * `raw` (a snippet FTS5 cut from `body`, after `snippetCutsOnClusters`) with a match of one of `phrases` (the plan's
 * quoted phrases, `"…"` with `""` for a quote; compared as {@link looseForm}s) that a cut falls inside made whole and
 * marked: at the end cut, the earliest match starting in the snippet's last characters and ending past it; at the
 * start cut, the earliest match starting before the snippet and ending in it. The text added goes inside the mark (a
 * mark it meets is merged with it); a `…` stays unless the match reaches that end of `body`. Returns `raw` unchanged
 * when it is not cut, its place in `body` is not found, or no match is cut (a phrase's tokens the tokenizer separates
 * with other characters than the query's are not followed, nor phrases over {@link LONGEST_COMPLETED_PHRASE}).
 * Cost: at most (longest phrase)² loose comparisons per phrase and cut, plus `snippetPlaceIn`'s search of `body`.
 */
export function cutMarkCompleted(raw: string, body: string, phrases: readonly string[]): string {
  const place = snippetPlaceIn(raw, body);
  if (place === undefined) return raw;
  const words = phrases.map((phrase) => looseForm(phrase.slice(1, -1).replace(/""/g, '"'))).filter((w) => w !== '' && w.length <= LONGEST_COMPLETED_PHRASE);
  if (words.length === 0) return raw;
  const reach = Math.max(...words.map((w) => w.length));
  const { marks } = unmarked(place.inner);
  let from = place.start;
  let to = place.end;
  const added: Array<[number, number]> = [];
  if (place.cutAfter) {
    // The earliest match starting in the snippet's last `reach` code units and ending past it.
    for (let at = Math.max(place.start, place.end - reach); at < place.end && to === place.end; at++) {
      if (isLowSurrogate(body, at)) continue;
      const end = longestMatchEnd(body, at, words);
      if (end !== undefined && end > place.end) {
        to = end;
        added.push([at, end]);
      }
    }
  }
  if (place.cutBefore) {
    // The earliest match starting before the snippet and ending in it (or past its start).
    for (let at = Math.max(0, place.start - reach); at < place.start && from === place.start; at++) {
      if (isLowSurrogate(body, at)) continue;
      const end = longestMatchEnd(body, at, words);
      if (end !== undefined && end > place.start) {
        from = at;
        added.push([at, end]);
      }
    }
  }
  if (added.length === 0) return raw;
  // Marks as body positions, the added ones with them, merged where they meet.
  const all = [...marks.map(([open, close]): [number, number] => [place.start + open, place.start + close]), ...added].sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [open, close] of all) {
    const last = merged[merged.length - 1];
    if (last !== undefined && open <= last[1]) last[1] = Math.max(last[1], close);
    else merged.push([Math.max(open, from), Math.min(close, to)]);
  }
  let out = '';
  let copied = from;
  for (const [open, close] of merged) {
    out += `${body.slice(copied, open)}${OPEN}${body.slice(open, close)}${CLOSE}`;
    copied = close;
  }
  out += body.slice(copied, to);
  return `${place.cutBefore && from > 0 ? ELLIPSIS : ''}${out}${place.cutAfter && to < body.length ? ELLIPSIS : ''}`;
}

/** The end of the longest of `words` that `body` spells (loosely) from `at`, undefined when none. */
function longestMatchEnd(body: string, at: number, words: readonly string[]): number | undefined {
  let longest: number | undefined;
  for (const word of words) {
    const end = endOfLooseMatch(body, at, word);
    if (end !== undefined && (longest === undefined || end > longest)) longest = end;
  }
  return longest;
}

/** Whether `at` is inside a surrogate pair of `text` (not a code point's start). */
function isLowSurrogate(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The index just past the code points of `body` from `at` whose {@link looseForm} is `word`, undefined when they do not spell it. */
function endOfLooseMatch(body: string, at: number, word: string): number | undefined {
  let spelled = '';
  let i = at;
  while (i < body.length && spelled.length < word.length) {
    const codePoint = String.fromCodePoint(body.codePointAt(i)!);
    spelled += looseForm(codePoint);
    i += codePoint.length;
    if (!word.startsWith(spelled)) return undefined;
  }
  return spelled === word ? i : undefined;
}

/** `text` folded as both indexes fold a query and a document at least: canonical decomposition, combining marks dropped, lower case. */
function looseForm(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}
