/**
 * Bounded summarizer input (DESIGN §3.7): splitting a summary request that does not fit into
 * chunks summarized oldest first, each folding into the running summary.
 */
import type { SummaryRequest } from './compaction-types';
import { InvalidParameterError } from './invalid-parameter-error';
import { buildSummarizerMessages, SUMMARIZER_SECTION } from './summarizer-prompt';
import { truncateMiddle } from './text';
import type { TokenEstimator } from './token-estimators';

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
 * The longest middle-truncation of `text` (see `truncateMiddle`) whose cost is ≤ `maxTokens`;
 * `text` itself when it fits. Cost: one count of `text`, then counts of truncations no longer
 * than about twice the answer: the kept length grows from `maxTokens` code units by doubling while
 * it fits, then a binary search between the last two sizes. So a 1,000,000-unit text cut to a few
 * thousand tokens costs one full count plus O(answer · log answer) code units counted, where a
 * bisection from the middle reads n/2 + n/4 + … more (issue 17, item 1). Assumes, as any search here must, that keeping more never costs less.
 * `options.atWords` is passed to `truncateMiddle` (cut between words, never through one).
 */
export function fitTextToTokens(text: string, maxTokens: number, estimator: TokenEstimator, options: { atWords?: boolean } = {}): string {
  if (estimator.count(text) <= maxTokens) return text;
  const fits = (kept: number) => estimator.count(truncateMiddle(text, kept, options)) <= maxTokens;
  let lo = 0; // longest kept length known to fit (0: the marker alone, the fallback)
  let hi = text.length - 1; // longest kept length not yet ruled out
  for (let kept = Math.max(1, maxTokens); kept <= hi; kept *= 2) {
    if (!fits(kept)) {
      hi = kept - 1;
      break;
    }
    lo = kept;
  }
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return truncateMiddle(text, lo, options);
}

function fitEach(texts: readonly string[], room: number, estimator: TokenEstimator): string[] {
  if (texts.length === 0) return [];
  const cost = texts.reduce((s, t) => s + estimator.count(t) + 1, 0);
  if (cost <= room) return [...texts];
  const share = Math.max(1, Math.floor(room / texts.length) - 1);
  return texts.map((t) => fitTextToTokens(t, share, estimator));
}

/**
 * Splits `request` so that every chunk's summarizer input ({@link buildSummarizerMessages},
 * system + user, counted with `estimator`) fits `maxInputTokens` (DESIGN §3.7).
 *
 * - If the whole request fits, returns `[request]` unchanged.
 * - Otherwise `toSummarize` is split oldest first into consecutive chunks, none dropped or
 *   reordered. Chunk 1 carries `currentSummaries` (truncated in the middle if they alone would
 *   take more than half the room); later chunks have `currentSummaries: []` and reserve
 *   `summaryReserve` tokens (default {@link defaultSummaryReserve}) for the running summary:
 *   the caller summarizes chunk k, then sends chunk k+1 with `currentSummaries = [reply k]`.
 *   The reply to the last chunk is the new summary.
 * - `overlap` (context not to summarize) goes with the last chunk only, shortened if it would
 *   take more than 15 % of the room.
 * - A single event that does not fit a chunk on its own is truncated in the middle with a
 *   `[… N characters omitted …]` marker; events are never dropped, so the newest archived
 *   events are always summarized.
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

  const empty: SummaryRequest = { ...request, currentSummaries: [], toSummarize: [], overlap: [] };
  const fixed = summarizerInputCost(empty, estimator);
  const available = maxInputTokens - fixed - JOIN_SLACK;
  const minimum = 32;
  if (available < minimum) {
    throw new InvalidParameterError('maxInputTokens', `at least ${fixed + JOIN_SLACK + minimum} (the prompt alone costs ${fixed})`);
  }
  const headerCost = (heading: string) => estimator.count(heading) + 2;

  // overlap: last chunk only, at most 15 % of the room
  const overlapRoomMax = Math.floor(available * 0.15);
  let overlap = request.overlap;
  let overlapRoom = 0;
  if (overlap.length > 0) {
    const h = headerCost(SUMMARIZER_SECTION.context);
    overlap = fitEach(overlap, Math.max(1, overlapRoomMax - h), estimator);
    overlapRoom = h + overlap.reduce((s, t) => s + estimator.count(t) + 1, 0);
  }

  // running summary room for chunks 2…, and the first chunk's actual summaries
  const summaryHeader = headerCost(SUMMARIZER_SECTION.previousSummary);
  const afterOverlap = available - overlapRoom;
  const reserve = Math.min(options.summaryReserve ?? defaultSummaryReserve(maxInputTokens), Math.floor(afterOverlap / 2));
  const laterSummaryRoom = summaryHeader + Math.max(0, reserve);
  let summaries = request.currentSummaries;
  let firstSummaryRoom = 0;
  if (summaries.length > 0) {
    const cap = Math.max(reserve, Math.floor(afterOverlap / 2)) - summaryHeader;
    summaries = fitEach(summaries, Math.max(1, cap), estimator);
    firstSummaryRoom = summaryHeader + summaries.reduce((s, t) => s + estimator.count(t) + 2, 0);
  }
  const roomFirst = afterOverlap - firstSummaryRoom;
  const roomLater = afterOverlap - laterSummaryRoom;
  const roomMin = Math.min(roomFirst, roomLater);
  if (roomMin < MIN_EVENT_ROOM) {
    throw new InvalidParameterError(
      'maxInputTokens',
      `at least ${maxInputTokens + MIN_EVENT_ROOM - roomMin} for this request (prompt, summary and context sections leave only ${roomMin} for events)`,
    );
  }

  // pack events oldest first; an event too large for any chunk is truncated
  const chunks: string[][] = [];
  let current: string[] = [];
  let used = 0;
  for (const original of request.toSummarize) {
    const text = fitTextToTokens(original, roomMin - 1, estimator);
    const cost = estimator.count(text) + 1;
    const room = chunks.length === 0 ? roomFirst : roomLater;
    if (current.length > 0 && used + cost > room) {
      chunks.push(current);
      current = [];
      used = 0;
    }
    current.push(text);
    used += cost;
  }
  if (current.length > 0 || chunks.length === 0) chunks.push(current);

  const build = (texts: string[], index: number, last: boolean): SummaryRequest => ({
    systemPrompt: request.systemPrompt,
    shadowPrompt: request.shadowPrompt,
    currentSummaries: index === 0 ? summaries : [],
    toSummarize: texts,
    overlap: last ? overlap : [],
    coveredIds: [...request.coveredIds],
  });
  // verify with the real count (tokenizers are not exactly additive); split or shrink if needed
  const result: string[][] = [];
  const queue = [...chunks];
  while (queue.length > 0) {
    const texts = queue.shift()!;
    const index = result.length;
    const last = queue.length === 0;
    const cost = summarizerInputCost(build(texts, index, last), estimator) + (index === 0 ? 0 : laterSummaryRoom);
    if (cost <= maxInputTokens) {
      result.push(texts);
    } else if (texts.length > 1) {
      const half = Math.ceil(texts.length / 2);
      queue.unshift(texts.slice(0, half), texts.slice(half));
    } else {
      const excess = cost - maxInputTokens;
      const shrunk = fitTextToTokens(texts[0], Math.max(0, estimator.count(texts[0]) - excess - JOIN_SLACK), estimator);
      if (shrunk === texts[0] || shrunk.length === 0) {
        result.push([shrunk]); // cannot do better: keep the marker at least
      } else {
        queue.unshift([shrunk]);
      }
    }
  }
  return result.map((texts, i) => build(texts, i, i === result.length - 1));
}
