/**
 * Bounded summarizer input (DESIGN §3.7): splitting a summary request that does not fit into
 * chunks summarized oldest first, each folding into the running summary.
 */
import type { SummaryRequest } from './compaction-types';
import { InvalidParameterError } from './invalid-parameter-error';
import { buildSummarizerMessages, SUMMARIZER_SECTION } from './summarizer-prompt';
import { graphemeBoundary } from './grapheme-boundary';
import { cutMiddle, omissionMarker, truncateMiddle } from './text';
import { fitsTokens, type TokenEstimator } from './token-estimators';

/** Upper bound of the default running-summary reserve, in estimator units (tokens). */
export const MAX_DEFAULT_SUMMARY_RESERVE = 4096;

/** Least room (estimator units) a chunk must leave for events; below it the budget is rejected (see `summarizerEventRoom`). */
export const MIN_EVENT_ROOM = 48;

/** Tokens kept free in every chunk to absorb tokenizer effects at the joins. */
export const JOIN_SLACK = 8;

/**
 * Default room reserved in chunks 2… for the running summary (the reply to the previous chunk):
 * min(25 % of `maxInputTokens`, {@link MAX_DEFAULT_SUMMARY_RESERVE}), in the estimator's unit.
 * Callers should cap the summarizer's reply at this size (e.g. the model's `max_tokens`).
 */
export function defaultSummaryReserve(maxInputTokens: number): number {
  return Math.min(Math.floor(maxInputTokens / 4), MAX_DEFAULT_SUMMARY_RESERVE);
}

/** Cost of the messages `buildSummarizerMessages(request)` (system + user), estimator units. */
export function summarizerInputCost(request: SummaryRequest, estimator: TokenEstimator): number {
  const m = buildSummarizerMessages(request);
  return estimator.count(m.system) + estimator.count(m.user);
}

/**
 * The middle-truncation of `text` keeping the most of it whose cost is ≤ `maxTokens`; `text` itself
 * when it fits. The search walks the content kept (`cutMiddle`), not the result's length: the
 * marker (`[… N characters omitted …]`, ~30 code units, ~8 tokens) is longer in code units than
 * many token-dense texts it shortens, so bounding the length kept far less than the budget allowed
 * (a 55-unit, 41-token text cut to 40 tokens kept 19 units). When even the marker alone does not
 * fit, the longest prefix that fits (as `truncateMiddle` with a bound under the marker's length).
 * Cost: one count of `text`, then counts of truncations no longer than about twice the answer:
 * the kept length grows from `maxTokens` code units by doubling while it fits, then a binary search
 * between the last two sizes. So a 1,000,000-unit text cut to a few thousand tokens costs one full
 * count plus O(answer · log answer) code units counted, where a bisection from the middle reads
 * n/2 + n/4 + … more (issue 17, item 1). Assumes, as any search here must, that keeping more never
 * costs less. `options.atWords` is passed on (cut between words, never through one).
 */
export function fitTextToTokens(text: string, maxTokens: number, estimator: TokenEstimator, options: { atWords?: boolean } = {}): string {
  if (fitsTokens(text, maxTokens, estimator)) return text;
  const cut = (kept: number) => cutMiddle(text, kept, options);
  if (!fitsTokens(cut(0), maxTokens, estimator)) return longestFittingPrefix(text, maxTokens, estimator);
  return cut(longestFitting(text.length - 1, (kept) => fitsTokens(cut(kept), maxTokens, estimator), maxTokens));
}

/** The longest prefix of `text` (never ending inside a marker or a surrogate pair) that costs ≤ `maxTokens`; maybe empty. */
function longestFittingPrefix(text: string, maxTokens: number, estimator: TokenEstimator): string {
  const prefix = (n: number) => truncateMiddle(text, n);
  return prefix(longestFitting(text.length - 1, (n) => fitsTokens(prefix(n), maxTokens, estimator), maxTokens));
}

/**
 * The largest n in [0, `max`] with `fits(n)` (0 when none is; `fits(0)` is assumed), for a `fits`
 * that holds up to some n and not beyond: n grows from `start` by doubling while it fits, then a
 * binary search between the last two values.
 */
function longestFitting(max: number, fits: (n: number) => boolean, start: number): number {
  let lo = 0;
  let hi = max;
  for (let n = Math.max(1, start); n <= hi; n *= 2) {
    if (!fits(n)) {
      hi = n - 1;
      break;
    }
    lo = n;
  }
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The overlap (events kept in the window, sent as context not to summarize) within `room` estimator units, each text
 * followed by a line break (1 unit): all of it when it fits; else the first k texts (those right after the archived
 * part), for the largest k whose equal shares (`room / k`, less the line break) take each of them whole or cut in the
 * middle ({@link fitTextToTokens}) keeping at least as much of it as the omission marker costs; none when not even
 * one text gets that. Sharing the room among all of them at a small `SUMMARIZER_MAX_INPUT_TOKENS` sent the marker
 * alone, `Us [… 73 characters omitted …] .`, which tells the model nothing (newcomers ncllm65 F2, ncdesign65 F2).
 */
function fitContext(texts: readonly string[], room: number, estimator: TokenEstimator): string[] {
  const costs = texts.map((t) => estimator.count(t));
  if (costs.reduce((s, c) => s + c + 1, 0) <= room) return [...texts];
  const worthCutting = 2 * estimator.count(omissionMarker(99_999));
  for (let k = texts.length; k >= 1; k--) {
    const share = Math.floor(room / k) - 1;
    if (share >= worthCutting || costs.slice(0, k).every((c) => c <= share)) return texts.slice(0, k).map((t) => fitTextToTokens(t, share, estimator));
  }
  return [];
}

/**
 * The marker before each part of an event split across chunks: `[part 2/3 of one event] `. A part
 * split again (a later, tighter plan) gets `[part 2/3, piece 1/2 of one event] `.
 */
export function eventPartMarker(label: string): string {
  return `[part ${label} of one event] `;
}

/**
 * The marker before each part of a previous summary split across chunks:
 * `[part 2/3 of one previous summary] `; a part split again gets
 * `[part 2/3, piece 1/2 of one previous summary] ` (as {@link eventPartMarker}).
 */
export function summaryPartMarker(label: string): string {
  return `[part ${label} of one previous summary] `;
}

/** A leading {@link eventPartMarker}, its label captured. */
const EVENT_PART_MARKER = /^\[part (\d+\/\d+(?:, piece \d+\/\d+)*) of one event\] /;

/** A leading {@link summaryPartMarker}, its label captured. */
const SUMMARY_PART_MARKER = /^\[part (\d+\/\d+(?:, piece \d+\/\d+)*) of one previous summary\] /;

/**
 * Where to end a piece of `text` that starts at `from` and may run to `end` at most: after the
 * last line break in the second half of that span, else after its last whitespace, else at its
 * last word edge (between a letter or digit and another character), else at `end`; always on a
 * grapheme cluster boundary ({@link graphemeBoundary}: never inside a surrogate pair, a flag, a ZWJ
 * sequence or a letter with its marks), moved back to the one before, or, when that would leave
 * the piece empty, forward to the end of the first cluster after `from`.
 */
function pieceEnd(text: string, from: number, end: number): number {
  const cut = rawPieceEnd(text, from, end);
  const back = graphemeBoundary(text, cut, 'before');
  return back > from ? back : graphemeBoundary(text, from + 1, 'after');
}

/** {@link pieceEnd} before its move to a grapheme cluster boundary. */
function rawPieceEnd(text: string, from: number, end: number): number {
  if (end >= text.length) return text.length;
  const half = from + Math.max(1, Math.floor((end - from) / 2));
  const span = text.slice(half, end);
  const line = span.lastIndexOf('\n');
  if (line >= 0) return half + line + 1;
  const space = span.search(/\s\S*$/);
  if (space >= 0) return half + space + 1;
  for (let p = end; p > half; p--) if (/[\p{L}\p{N}_]/u.test(text[p - 1]) !== /[\p{L}\p{N}_]/u.test(text[p])) return p;
  return end;
}

/** A piece is taken once it uses this share of its room (finding the longest one would count each piece ~log₂ p times). */
const PIECE_FILL = 0.9;

/**
 * `text` cut into consecutive pieces, each costing at most `maxTokens` with `estimator` (as far
 * as a shorter text never costs more: the planner checks the chunks it builds), whose
 * concatenation is `text` exactly: nothing is left out. Each piece is a prefix of the rest that
 * uses {@link PIECE_FILL} of `maxTokens` or more (its length guessed from the code units per unit
 * seen so far, then corrected in proportion to its cost), cut back to a line break, else to
 * whitespace (which stays at the end of the piece), else to a word edge, within the second half
 * of that prefix; a text with no boundary there is cut anyway; every cut on a grapheme cluster
 * boundary (never inside a surrogate pair, a flag, a ZWJ sequence, an emoji with its skin tone).
 * Each piece has at least one grapheme cluster, whatever `maxTokens`. Cost: a few counts of each piece
 * (usually one or two), so about linear in the text.
 */
export function splitTextToTokens(text: string, maxTokens: number, estimator: TokenEstimator): string[] {
  const pieces: string[] = [];
  const goal = Math.max(1, maxTokens);
  let perUnit = 1; // code units per estimator unit, learnt from the pieces counted
  for (let from = 0; from < text.length;) {
    const rest = text.length - from;
    const cost = (length: number) => estimator.count(text.slice(from, from + length));
    let best = 0; // longest length seen to fit
    let length = Math.max(1, Math.min(rest, Math.floor(goal * perUnit * PIECE_FILL)));
    let tooLong = rest + 1; // shortest length seen not to fit
    for (let step = 0; step < 32; step++) {
      const c = cost(length);
      if (c > 0) perUnit = length / c;
      if (c <= maxTokens) {
        best = Math.max(best, length);
        if (length === rest || c >= goal * PIECE_FILL) break;
      } else tooLong = Math.min(tooLong, length);
      // next guess: in proportion to the cost when that falls strictly between what fits and
      // what does not, else halfway between them
      const upper = Math.min(rest, tooLong - 1);
      if (upper <= best) break;
      const guess = c > 0 ? Math.floor((length * goal * (1 + PIECE_FILL)) / 2 / c) : length * 2;
      length = guess > best && guess <= upper ? guess : Math.ceil((best + upper) / 2);
    }
    const end = best >= rest ? text.length : pieceEnd(text, from, from + Math.max(1, best));
    pieces.push(text.slice(from, end));
    from = end;
  }
  return pieces;
}

/**
 * How {@link planSummaryChunks} shares a call's room (estimator units) for `request` within
 * `maxInputTokens`: `overlap` as it is sent (shortened to fit 15 % of the room: {@link fitContext}) and the
 * room it takes, `summaryHeader` (the previous-summary heading's cost), `afterOverlap` (what the
 * prompt, the headings and the context leave), `reserve` (the room chunks 2… keep for the running
 * summary: `summaryReserve`, by default {@link defaultSummaryReserve}, at most half of
 * `afterOverlap`) and `firstSummaryCap` (the most previous summaries a chunk carries whole before
 * its events: the running summary goes whole into the next call when it costs at most this, its
 * joining blank line included).
 * @throws InvalidParameterError (`maxInputTokens`) when the prompt leaves fewer than 32 units.
 */
function chunkRooms(request: SummaryRequest, maxInputTokens: number, estimator: TokenEstimator, options: { summaryReserve?: number }) {
  const empty: SummaryRequest = { ...request, currentSummaries: [], toSummarize: [], overlap: [] };
  const fixed = summarizerInputCost(empty, estimator);
  const available = maxInputTokens - fixed - JOIN_SLACK;
  const minimum = 32;
  if (available < minimum) {
    throw new InvalidParameterError('maxInputTokens', `at least ${fixed + JOIN_SLACK + minimum} (the prompt alone costs ${fixed})`);
  }
  // overlap: last chunk only, at most 15 % of the room
  const overlapRoomMax = Math.floor(available * 0.15);
  let overlap = request.overlap;
  let overlapRoom = 0;
  if (overlap.length > 0) {
    const h = headerCost(SUMMARIZER_SECTION.context, estimator);
    overlap = fitContext(overlap, Math.max(1, overlapRoomMax - h), estimator);
    overlapRoom = overlap.length === 0 ? 0 : h + overlap.reduce((s, t) => s + estimator.count(t) + 1, 0);
  }
  // room for the running summary in chunks 2…; chunk 1 has none, and carries whole the leading
  // previous summaries that fit in about half its room (as many as fit, oldest first)
  const summaryHeader = headerCost(SUMMARIZER_SECTION.previousSummary, estimator);
  const afterOverlap = available - overlapRoom;
  const reserve = Math.min(options.summaryReserve ?? defaultSummaryReserve(maxInputTokens), Math.floor(afterOverlap / 2));
  const firstSummaryCap = Math.max(reserve, Math.floor(afterOverlap / 2)) - summaryHeader;
  return { overlap, overlapRoom, summaryHeader, afterOverlap, reserve, firstSummaryCap };
}

/** A section heading's cost in a call: the heading and its blank line. */
function headerCost(heading: string, estimator: TokenEstimator): number {
  return estimator.count(heading) + 2;
}

/**
 * The most a reply to a chunk that is not the last of a plan of `request` within
 * `maxInputTokens` may cost (estimator units) and still go whole into the next call beside that
 * call's events, as {@link planSummaryChunks} plans it: its reserve for the running summary, less
 * the heading and the joining blank line, so a model that writes no more than it is asked never
 * fails the pass (newcomer ncsumm62 F1: with a long `systemPrompt` a call was asked for a quarter
 * of the bound while the next one kept less). Undefined when no plan fits the bound.
 */
export function runningSummaryRoom(request: SummaryRequest, maxInputTokens: number, estimator: TokenEstimator): number | undefined {
  try {
    const { reserve, firstSummaryCap } = chunkRooms(request, maxInputTokens, estimator, {});
    return Math.max(0, Math.min(reserve, firstSummaryCap - 2));
  } catch {
    return undefined;
  }
}

/**
 * Splits `request` so that every chunk's summarizer input ({@link buildSummarizerMessages},
 * system + user, counted with `estimator`) fits `maxInputTokens` (DESIGN §3.7).
 *
 * - If the whole request fits, returns `[request]` unchanged.
 * - Otherwise `currentSummaries` (the previous summaries, oldest first), then `toSummarize`, are
 *   split oldest first into consecutive chunks, none dropped, shortened or reordered: a chunk's
 *   summaries go in its `currentSummaries`, its events in its `toSummarize`. Summaries that fit
 *   go whole in chunk 1 beside the first events; summaries too large for one chunk are split like
 *   events (below) into parts marked `[part k/n of one previous summary] ` that fill the first
 *   chunks, so every part of them reaches the model once, before any archived event. Chunks 2…
 *   reserve `summaryReserve` tokens (default {@link defaultSummaryReserve}) for the running
 *   summary: the caller summarizes chunk k, then sends chunk k+1 with
 *   `currentSummaries = [reply k, ...chunk k+1's currentSummaries]` (the running summary first:
 *   it covers older content). The reply to the last chunk is the new summary.
 * - `overlap` (context not to summarize) goes with the last chunk only, shortened if it would
 *   take more than 15 % of the room: its first events, each whole or cut keeping a useful part
 *   (see `fitContext`), the others left out, all of it when not even one gets a useful part.
 * - A single event that does not fit a chunk on its own is split ({@link splitTextToTokens}) into
 *   parts sent in consecutive chunks, each part starting with {@link eventPartMarker}
 *   (`[part k/n of one event] `) and within the room of a chunk; the parts' texts after their
 *   markers put together are the event's text, nothing left out. A text that already starts with
 *   a part marker (a part planned again) is split into `[part k/n, piece j/m of one event] `.
 *   A previous summary is split the same way, with {@link summaryPartMarker}.
 *   Events and summaries are never dropped nor shortened, so the newest archived events are
 *   always summarized. There is no bound on the number of chunks: a text of N units takes about
 *   N / (the room of a chunk) chunks.
 * - Every chunk keeps the request's `systemPrompt`, `shadowPrompt` and full `coveredIds`.
 *
 * Units: `maxInputTokens` and `summaryReserve` are in `estimator`'s unit.
 * @throws InvalidParameterError (`maxInputTokens`) when it is not a positive integer, or too
 *   small to hold the prompt, the section headings, the summary reserve and at least 48 units
 *   of events per chunk (the message says the least acceptable value).
 */
export function planSummaryChunks(
  request: SummaryRequest,
  maxInputTokens: number,
  estimator: TokenEstimator,
  options: { summaryReserve?: number } = {},
): SummaryRequest[] {
  if (!Number.isInteger(maxInputTokens) || maxInputTokens <= 0) {
    throw new InvalidParameterError('maxInputTokens', 'a positive integer');
  }
  if (summarizerInputCost(request, estimator) <= maxInputTokens) return [request];

  const { overlap, summaryHeader, afterOverlap, reserve, firstSummaryCap } = chunkRooms(request, maxInputTokens, estimator, options);
  const laterSummaryRoom = summaryHeader + Math.max(0, reserve);
  let leading = 0; // how many summaries go whole in chunk 1
  let leadingCost = 0;
  for (const text of request.currentSummaries) {
    const cost = estimator.count(text) + 2;
    if (leadingCost + cost > firstSummaryCap) break;
    leading++;
    leadingCost += cost;
  }
  const firstSummaries = request.currentSummaries.slice(0, leading);
  const roomFirst = afterOverlap - (request.currentSummaries.length > 0 ? summaryHeader : 0) - leadingCost;
  const roomLater = afterOverlap - laterSummaryRoom;
  const roomMin = Math.min(roomFirst, roomLater);
  if (roomMin < MIN_EVENT_ROOM) {
    throw new InvalidParameterError(
      'maxInputTokens',
      `at least ${maxInputTokens + MIN_EVENT_ROOM - roomMin} for this request (prompt, summary and context sections leave only ${roomMin} for events)`,
    );
  }

  // The other previous summaries, then the events, are one sequence of items packed oldest first
  // after those; a summary item goes in its chunk's previous-summary section (joined by a blank
  // line: 2 units), an event in its conversation section (1 unit). An item too large for the
  // smallest room is split into parts, each marked with its place, so the first item always fits
  // in chunk 1 beside the leading summaries (a caller folding its running summary in as the first
  // of them always makes progress); the marker is costed at its widest (`[part L/L …]`, L the
  // text's length), so numbering never overflows.
  interface Item {
    source: number;
    body: string;
  }
  const sourceOf = (text: string, summary: boolean) => {
    const marked = (summary ? SUMMARY_PART_MARKER : EVENT_PART_MARKER).exec(text);
    const base = marked ? `${marked[1]}, piece ` : '';
    return { text, summary, base, body: marked ? text.slice(marked[0].length) : text, split: false };
  };
  const sources = [...request.currentSummaries.slice(leading).map((t) => sourceOf(t, true)), ...request.toSummarize.map((t) => sourceOf(t, false))];
  const markerOf = (i: number, label: string) => (sources[i].summary ? summaryPartMarker(label) : eventPartMarker(label));
  const joinCost = (i: number) => (sources[i].summary ? 2 : 1);
  const sizing = (i: number) => markerOf(i, `${sources[i].base}${sources[i].text.length}/${sources[i].text.length}`);
  const sized = (item: Item) => (sources[item.source].split ? sizing(item.source) + item.body : item.body);
  /**
   * The parts of `item` (a whole text, or a part) costing at most `room` with their marker, or
   * undefined when it cannot be cut (one grapheme cluster); its text is then marked split.
   */
  const splitItem = (item: Item, room: number): Item[] | undefined => {
    const source = sources[item.source];
    const body = source.split ? item.body : source.body;
    const pieces = splitTextToTokens(body, Math.max(1, room - estimator.count(sizing(item.source))), estimator);
    if (pieces.length < 2) return undefined;
    source.split = true;
    return pieces.map((piece) => ({ source: item.source, body: piece }));
  };
  const items: Item[] = [];
  sources.forEach((source, i) => {
    const whole = { source: i, body: source.text };
    const room = roomMin - joinCost(i);
    items.push(...((estimator.count(source.text) <= room ? undefined : splitItem(whole, room)) ?? [whole]));
  });

  // pack oldest first
  const chunks: Item[][] = [];
  let current: Item[] = [];
  let used = 0;
  for (const item of items) {
    const cost = estimator.count(sized(item)) + joinCost(item.source);
    const room = chunks.length === 0 ? roomFirst : roomLater;
    if (current.length > 0 && used + cost > room) {
      chunks.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += cost;
  }
  if (current.length > 0 || chunks.length === 0) chunks.push(current);

  const build = (chunk: Item[], render: (item: Item) => string, index: number, last: boolean): SummaryRequest => ({
    systemPrompt: request.systemPrompt,
    shadowPrompt: request.shadowPrompt,
    currentSummaries: [...(index === 0 ? firstSummaries : []), ...chunk.filter((item) => sources[item.source].summary).map(render)],
    toSummarize: chunk.filter((item) => !sources[item.source].summary).map(render),
    overlap: last ? overlap : [],
    coveredIds: [...request.coveredIds],
  });
  // verify with the real count (tokenizers are not exactly additive); split chunks, or parts, if needed
  const result: Item[][] = [];
  const queue = [...chunks];
  while (queue.length > 0) {
    const chunk = queue.shift()!;
    const index = result.length;
    const last = queue.length === 0;
    const built = build(chunk, sized, index, last);
    // chunks 2… add the running summary: to their own previous-summary section when they have one
    const running = index === 0 ? 0 : built.currentSummaries.length > 0 ? laterSummaryRoom - summaryHeader + 2 : laterSummaryRoom;
    const cost = summarizerInputCost(built, estimator) + running;
    if (cost <= maxInputTokens) {
      result.push(chunk);
    } else if (chunk.length > 1) {
      const half = Math.ceil(chunk.length / 2);
      queue.unshift(chunk.slice(0, half), chunk.slice(half));
    } else {
      const [item] = chunk;
      const pieces = splitItem(item, estimator.count(sized(item)) - (cost - maxInputTokens) - JOIN_SLACK);
      if (pieces) queue.unshift(pieces);
      else result.push(chunk); // one code point over the bound: cannot do better, and nothing is left out
    }
  }
  // number the parts of each split text in order
  const counts = new Map<number, number>();
  for (const chunk of result) for (const item of chunk) counts.set(item.source, (counts.get(item.source) ?? 0) + 1);
  const seen = new Map<number, number>();
  const render = (item: Item) => {
    const source = sources[item.source];
    if (!source.split) return item.body;
    const k = (seen.get(item.source) ?? 0) + 1;
    seen.set(item.source, k);
    return markerOf(item.source, `${source.base}${k}/${counts.get(item.source)}`) + item.body;
  };
  return result.map((chunk, i) => build(chunk, render, i, i === result.length - 1));
}
