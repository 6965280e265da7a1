/**
 * A recall snippet whose end cut falls inside a match shows the whole match (newcomer ncrecheck66 F3). FTS5's `snippet()`
 * closes a mark where its window of tokens ends, so a phrase the window takes only part of was shown cut and marked:
 * `…<mark>東京タワ</mark>…` for `東京タワー` (the trigram index counts a token per character). Marks are the control
 * characters `\u0001` (open) and `\u0002` (close), positions UTF-16 code units. Pure functions.
 */
import { snippetPlaceIn } from './recall-snippet-clusters';

const OPEN = '\u0001';
const CLOSE = '\u0002';
const ELLIPSIS = '…';

/**
 * `raw` (a snippet FTS5 cut from `body`, after `snippetCutsOnClusters`) with a mark that touches its end cut (`\u0002…`)
 * grown to the end of the query phrase it is the start of: the longest of `phrases` (the plan's quoted phrases, `"…"`
 * with `""` for a quote) that `body` holds from the mark's start, compared as {@link looseForm}s. The text added goes
 * inside the mark; the `…` stays unless the phrase ends `body`. Returns `raw` unchanged when no mark touches the end
 * cut, its place in `body` is not found, or no phrase continues past it there (a phrase's tokens the tokenizer
 * separates with other characters than the query's are not followed: the mark is then left as FTS5 cut it).
 * Cost: linear in the longest phrase, plus `snippetPlaceIn`'s search of `body`.
 */
export function cutMarkCompleted(raw: string, body: string, phrases: readonly string[]): string {
  if (!raw.endsWith(CLOSE + ELLIPSIS)) return raw;
  const place = snippetPlaceIn(raw, body);
  if (place === undefined) return raw;
  const marked = place.inner.slice(place.inner.lastIndexOf(OPEN) + OPEN.length, -CLOSE.length);
  const markStart = place.end - marked.length;
  let end = place.end;
  for (const phrase of phrases) {
    const phraseEnd = endOfLooseMatch(body, markStart, looseForm(phrase.slice(1, -1).replace(/""/g, '"')));
    if (phraseEnd !== undefined && phraseEnd > end) end = phraseEnd;
  }
  if (end === place.end) return raw;
  return `${raw.slice(0, -(CLOSE + ELLIPSIS).length)}${body.slice(place.end, end)}${CLOSE}${end < body.length ? ELLIPSIS : ''}`;
}

/** The index just past the code points of `body` from `at` whose {@link looseForm} is `word`, undefined when they do not spell it. */
function endOfLooseMatch(body: string, at: number, word: string): number | undefined {
  if (word === '') return undefined;
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
