/**
 * The deterministic extractive summarizer (DESIGN §3.7), used when no model endpoint is
 * configured. It calls no model: it extracts what it can from the formatted events.
 */
import type { SummaryRequest } from './compaction-types';
import { summaryTextBudget } from './summary-budget';
import { fitTextToTokens } from './summary-chunks';
import { truncateMiddle } from './text';
import { eventCost, type TokenEstimator } from './token-estimators';

/** Name and version of the extractive summarizer, recorded as the summarizer identity of every decision it makes. */
export const EXTRACTIVE_SUMMARIZER_MODEL = 'extractive-v1';

/** Default bound of an extractive summary, in UTF-16 code units. */
export const DEFAULT_EXTRACTIVE_MAX_CHARS = 6000;

/** Smallest accepted `maxChars` (smaller values are raised to it). */
export const MIN_EXTRACTIVE_MAX_CHARS = 200;

const MAX_ARTEFACTS = 80;
const MAX_ARTEFACT_LENGTH = 100;

// Each pattern costs linear time on any text (issue 17, item 1): the e-mail local part starts
// only where a run of its characters starts (else every position of a long run rescans it), and
// identifiers are looked for word by word (see IDENTIFIER).
const ARTEFACT_PATTERNS: RegExp[] = [
  /https?:\/\/[^\s"'<>)\]]+/g, // URLs
  /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, // e-mail addresses
  /(?:~|\.{1,2})?(?:\/[\w.@-]+){2,}\/?|[A-Za-z]:\\[\w .\\-]+/g, // paths
  /"([A-Za-z_][\w-]{0,40})"\s*:\s*("(?:[^"\\]|\\.){1,80}"|-?\d+(?:\.\d+)?|true|false)/g, // JSON key/value pairs
  /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b/g, // dates
  /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b/g, // snake_case / camelCase names
  /(?<![\w.])[$€£]?\d+(?:[.,:]\d+)+%?|(?<![\w.])[$€£]?\d{2,}%?(?![\w.])/g, // numbers, amounts, times
];

/**
 * Identifiers mixing letters and digits. Its lookaheads rescan the rest of a `[\w-]` run from every
 * word start, so on a run without a digit or without a letter (`a-a-a-…`, 1,000,000 characters)
 * it is quadratic; it is therefore applied only to runs holding both ({@link IDENTIFIER_RUN}), where
 * it matches exactly what it matches in the whole text (a match never leaves its run).
 */
const IDENTIFIER = /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{2,}\b/g;
/** The runs {@link IDENTIFIER} is applied to. */
const IDENTIFIER_RUN = /[\w-]+/g;

function collectArtefacts(texts: readonly string[]): string[] {
  const found: { at: number; index: number; value: string }[] = [];
  texts.forEach((text, index) => {
    for (const pattern of ARTEFACT_PATTERNS) {
      pattern.lastIndex = 0;
      for (const m of text.matchAll(pattern)) {
        let value = m[0];
        if (m[1] !== undefined && m[2] !== undefined) value = `${m[1]}=${m[2].replace(/^"|"$/g, '')}`;
        found.push({ at: m.index ?? 0, index, value: truncateMiddle(value, MAX_ARTEFACT_LENGTH) });
      }
    }
    for (const run of text.matchAll(IDENTIFIER_RUN)) {
      const word = run[0];
      if (!/\d/.test(word) || !/[A-Za-z]/.test(word)) continue;
      for (const m of word.matchAll(IDENTIFIER)) found.push({ at: (run.index ?? 0) + (m.index ?? 0), index, value: truncateMiddle(m[0], MAX_ARTEFACT_LENGTH) });
    }
  });
  found.sort((a, b) => a.index - b.index || a.at - b.at || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of found) {
    if (seen.has(f.value)) continue;
    seen.add(f.value);
    out.push(f.value);
  }
  return out;
}

/** Marker of an assistant line's tool calls (see the formatter). */
const TOOL_CALLS = ' [tool calls: ';

/**
 * The `…` of an assistant line `Assistant [tool calls: …]` or `Assistant: text [tool calls: …]`
 * (from the first marker after the text's start), or undefined. Linear in the line; the regex it
 * replaces, `/^Assistant(?::[\s\S]*?)? \[tool calls: ([\s\S]*)\]$/`, rescanned the rest of the
 * line at every marker when the line does not end with `]` (O(n²): 40,000 characters took 1 s).
 */
function toolCallsPart(text: string): string | undefined {
  if (!text.endsWith(']')) return undefined;
  let at = -1;
  if (text.startsWith('Assistant:')) at = text.indexOf(TOOL_CALLS, 'Assistant:'.length);
  else if (text.startsWith(`Assistant${TOOL_CALLS}`)) at = 'Assistant'.length;
  return at < 0 ? undefined : text.slice(at + TOOL_CALLS.length, -1);
}

function toolNames(texts: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);
  for (const text of texts) {
    const calls = toolCallsPart(text);
    if (calls !== undefined) for (const m of calls.matchAll(/(?:^|\), )([\w.:-]+)\(/g)) add(m[1]);
    const responses = /^Tool \[responses: ([\s\S]*)\]$/.exec(text);
    if (responses) for (const m of responses[1].matchAll(/(?:^|, )([\w.:-]+) -> /g)) add(`${m[1]} (result)`);
  }
  return counts;
}

function section(title: string, body: string[]): string {
  return body.length === 0 ? '' : `${title}\n${body.join('\n')}`;
}

function fitLines(lines: string[], budget: number, perLineFloor: number): string[] {
  if (lines.length === 0) return [];
  const total = lines.reduce((s, l) => s + l.length + 1, 0);
  if (total <= budget) return lines;
  const perLine = Math.max(perLineFloor, Math.floor(budget / lines.length) - 1);
  const shortened = lines.map((l) => truncateMiddle(l, perLine));
  let used = shortened.reduce((s, l) => s + l.length + 1, 0);
  if (used <= budget) return shortened;
  // still too long: keep the first and the newest lines, say how many in between were left out
  const head: string[] = [shortened[0]];
  const tail: string[] = [];
  used = shortened[0].length + 1 + 60;
  for (let i = shortened.length - 1; i > 0 && used + shortened[i].length + 1 <= budget; i--) {
    tail.unshift(shortened[i]);
    used += shortened[i].length + 1;
  }
  const omitted = shortened.length - head.length - tail.length;
  return omitted > 0 ? [...head, `- [… ${omitted} more omitted …]`, ...tail] : [...head, ...tail];
}

/** Section titles of an extractive summary. */
const TITLES = {
  previous: 'Previous summary (merged):',
  users: 'User messages (oldest first):',
  tools: 'Tools used:',
  artefacts: 'Artefacts (identifiers, values, paths):',
  last: 'Last events before the cut:',
} as const;

/**
 * How the sections of a previous extractive summary are titled once merged into the next one
 * (the same title for every generation, so merging again never nests or renames them).
 */
const EARLIER_TITLES: ReadonlyArray<{ title: string; from: readonly string[] }> = [
  { title: 'Earlier user messages:', from: [TITLES.users, 'Earlier user messages:'] },
  { title: 'Earlier tools used:', from: [TITLES.tools, 'Earlier tools used:'] },
  { title: 'Earlier artefacts:', from: [TITLES.artefacts, 'Earlier artefacts:'] },
  { title: 'Earlier last events:', from: [TITLES.last, 'Earlier last events:'] },
];

/** The header line of an extractive summary (any version, any count). */
const HEADER_LINE = /^\[Extractive summary \([^)\n]*\)[^\n]*? of \d+ earlier events?\]$/;

/**
 * The previous summaries as one flat text for the "Previous summary (merged)" section, without
 * the framing of earlier extractive summaries: their header lines and "Previous summary
 * (merged):" titles are dropped (their content stays), and their other sections are gathered by
 * kind under one "Earlier …:" title each, oldest lines first, identical lines once. Text that is
 * not in a section (a model's summary, the content of a merged previous summary) comes first, as
 * it is. So summarizing a summary of a summary … keeps one header and one "Previous summary"
 * title, and the caller bounds the result. Deterministic.
 */
function mergePreviousSummaries(summaries: readonly string[]): string {
  const loose: string[] = [];
  const sections = new Map<string, string[]>(EARLIER_TITLES.map((t) => [t.title, []]));
  const titleOf = new Map<string, string>();
  for (const t of EARLIER_TITLES) for (const f of t.from) titleOf.set(f, t.title);
  for (const summary of summaries) {
    let target = loose;
    for (const raw of summary.split('\n')) {
      const line = raw.trimEnd();
      const trimmed = line.trim();
      if (HEADER_LINE.test(trimmed) || trimmed === TITLES.previous) {
        target = loose;
        continue;
      }
      const title = titleOf.get(trimmed);
      if (title !== undefined) {
        target = sections.get(title)!;
        continue;
      }
      if (trimmed === '') continue;
      // a previous summary cut in the middle may have lost its header line's end: drop a leftover
      target.push(line.replace(/^\[Extractive summary \([^)\n]*\)[^\]\n]*\]\s*/, '').replace(/Previous summary \(merged\):\s*/g, ''));
    }
  }
  const dedupe = (lines: string[]) => {
    const seen = new Set<string>();
    return lines.filter((l) => l.trim() !== '' && !seen.has(l) && seen.add(l) !== undefined);
  };
  const blocks = [dedupe(loose).join('\n')];
  for (const t of EARLIER_TITLES) {
    const body = dedupe(sections.get(t.title)!);
    if (body.length > 0) blocks.push(`${t.title}\n${body.join('\n')}`);
  }
  return blocks.filter((b) => b !== '').join('\n');
}

/** What an extractive summary is made of, extracted once from a request (rendering only sizes it). */
interface ExtractedParts {
  header: string;
  previous: string;
  userLines: string[];
  tools: string[];
  artefacts: string[];
  lastLines: string[];
  /** Every archived event's formatted text on one line (whitespace runs collapsed), oldest first. */
  eventLines: string[];
}

function extractParts(request: SummaryRequest): ExtractedParts {
  const events = request.toSummarize;
  return {
    header: `[Extractive summary (${EXTRACTIVE_SUMMARIZER_MODEL}, no model) of ${events.length} earlier event${events.length === 1 ? '' : 's'}]`,
    previous: mergePreviousSummaries(request.currentSummaries),
    userLines: events.filter((t) => t.startsWith('User: ')).map((t) => `- ${t.slice('User: '.length).replace(/\s+/g, ' ').trim()}`),
    tools: [...toolNames(events)].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)),
    artefacts: collectArtefacts(events).slice(0, MAX_ARTEFACTS),
    lastLines: events.slice(-3).map((t) => `- ${t.replace(/\s+/g, ' ').trim()}`),
    eventLines: events.map((t) => t.replace(/\s+/g, ' ').trim()),
  };
}

/** Each section's share of the room (fractions; their sum stays under 1). */
interface Shares {
  previous: number;
  users: number;
  tools: number;
  artefacts: number;
  last: number;
}

/** The shares of an unbudgeted summary. */
const DEFAULT_SHARES: Shares = { previous: 0.35, users: 0.3, tools: 0.08, artefacts: 0.12, last: 0.12 };

/**
 * The shares within a summary budget: the artefacts (identifiers, values, paths, dates: the
 * facts an agent needs verbatim, densely listed) get the most after the previous summary; the
 * last events, which the kept window continues, and the tool names get less.
 */
const BUDGET_SHARES: Shares = { previous: 0.32, users: 0.15, tools: 0.02, artefacts: 0.44, last: 0.04 };

/**
 * The summary of `parts` bounded by `maxChars` (UTF-16 code units), each section with its share
 * of `shareBase` (default `maxChars`; the budget search passes `maxChars` less the header and the
 * section titles, so that the final bound never has to cut through them).
 */
function renderParts(parts: ExtractedParts, maxChars: number, shareBase = maxChars, shares: Shares = DEFAULT_SHARES): string {
  const previousBlock = parts.previous !== '' ? truncateMiddle(parts.previous, Math.floor(shareBase * shares.previous)) : '';
  const users = fitLines(parts.userLines, Math.floor(shareBase * shares.users), 60);
  const toolsLine = parts.tools.length > 0 ? truncateMiddle(parts.tools.join(', '), Math.floor(shareBase * shares.tools)) : '';
  const artefactsLine = parts.artefacts.length > 0 ? truncateMiddle(parts.artefacts.join(', '), Math.floor(shareBase * shares.artefacts)) : '';
  const last = fitLines(parts.lastLines, Math.floor(shareBase * shares.last), 60);
  const sections = [
    parts.header,
    previousBlock ? section(TITLES.previous, [previousBlock]) : '',
    section(TITLES.users, users),
    toolsLine ? section(TITLES.tools, [toolsLine]) : '',
    artefactsLine ? section(TITLES.artefacts, [artefactsLine]) : '',
    section(TITLES.last, last),
  ].filter((p) => p !== '');
  return truncateMiddle(sections.join('\n\n'), maxChars);
}

/** Code units of the header, the titles of the sections `parts` fills and their separators. */
function renderOverhead(parts: ExtractedParts): number {
  const titles = [
    parts.previous !== '' ? TITLES.previous : '',
    parts.userLines.length > 0 ? TITLES.users : '',
    parts.tools.length > 0 ? TITLES.tools : '',
    parts.artefacts.length > 0 ? TITLES.artefacts : '',
    parts.lastLines.length > 0 ? TITLES.last : '',
  ].filter((t) => t !== '');
  return parts.header.length + titles.reduce((sum, t) => sum + t.length + 3, 0);
}

/** Least room (estimator units) the compact form is given, whatever the budget: a shorter text would say nothing. */
export const MIN_COMPACT_SUMMARY_TOKENS = 32;

/**
 * The compact form used when even the smallest sectioned summary would exceed the budget (a small
 * pass): no header or headings, the previous summary's content then the archived events as they
 * are (one line each), middle-truncated to `textBudget` but to no less than
 * {@link MIN_COMPACT_SUMMARY_TOKENS}, so the oldest and the newest lines stay. Never blank.
 */
function compactSummary(parts: ExtractedParts, textBudget: number, estimator: TokenEstimator): string {
  const text = [parts.previous, ...parts.eventLines].filter((l) => l !== '').join('\n');
  const fitted = fitTextToTokens(text, Math.max(textBudget, MIN_COMPACT_SUMMARY_TOKENS), estimator).trim();
  return fitted !== '' ? fitted : parts.header;
}

/**
 * A deterministic extractive summary of `request` (DESIGN §3.7): same input, same output; no
 * model, no randomness, no clock. Never blank when `toSummarize` is non-empty.
 *
 * Contents, each section bounded (all lengths in UTF-16 code units):
 * - a header naming {@link EXTRACTIVE_SUMMARIZER_MODEL} and the number of events covered;
 * - the previous summary text(s), merged (at most ~35 % of `maxChars`, middle-truncated); an
 *   earlier extractive summary is merged without its own header and "Previous summary" title,
 *   its sections gathered under "Earlier …:" titles, so repeated summarizing never nests;
 * - every user message, oldest first (each truncated; if there are too many, the first and
 *   the newest are kept and the number left out is stated);
 * - the tools used (names and counts; call ids are not part of the formatted text, DESIGN §3.1);
 * - concrete artefacts found by pattern: URLs, paths, e-mails, JSON `key=value` pairs, dates,
 *   identifiers mixing letters and digits, snake/camel case names, numbers and amounts;
 * - the last events before the cut (the work in progress).
 *
 * The overlap is not summarized. `maxChars` (default {@link DEFAULT_EXTRACTIVE_MAX_CHARS}, at
 * least {@link MIN_EXTRACTIVE_MAX_CHARS}) bounds the whole result.
 *
 * The summary budget: with `options.estimator` (the one the events were costed with) and
 * `request.maxSummaryTokens`, the summary event (shadow prompt and text, DESIGN §3.1) is kept
 * within that budget: the largest bound ≤ `maxChars` whose summary fits is used, the sections
 * sharing what the header and titles leave of it (so every kind of line stays represented, each
 * middle-truncated or thinned to its first and newest lines). When even
 * {@link MIN_EXTRACTIVE_MAX_CHARS} for the sections does not fit, the compact form (the previous summary's content and the archived events as they are, no
 * headings) is middle-truncated to the budget, or to {@link MIN_COMPACT_SUMMARY_TOKENS} when the
 * budget leaves less for the text (the summary then costs more than its budget).
 * Never throws.
 */
export function extractiveSummary(request: SummaryRequest, options: { maxChars?: number; estimator?: TokenEstimator } = {}): string {
  const requested = options.maxChars;
  const maxChars = Math.max(MIN_EXTRACTIVE_MAX_CHARS, Number.isFinite(requested) ? Math.floor(requested as number) : DEFAULT_EXTRACTIVE_MAX_CHARS);
  const parts = extractParts(request);
  const full = renderParts(parts, maxChars);
  const estimator = options.estimator;
  if (!estimator || request.maxSummaryTokens === undefined || !Number.isFinite(request.maxSummaryTokens)) return full;
  const budget = Math.floor(request.maxSummaryTokens);
  const fits = (text: string) => eventCost({ id: 'budget', type: 'summary', shadowPrompt: request.shadowPrompt, text }, estimator) <= budget;
  if (fits(full)) return full;
  // sections share what the header and titles leave, so the bound never cuts through them
  const overhead = renderOverhead(parts);
  const render = (bound: number) => renderParts(parts, bound, bound - overhead, BUDGET_SHARES);
  const lowest = Math.max(MIN_EXTRACTIVE_MAX_CHARS, overhead + MIN_EXTRACTIVE_MAX_CHARS);
  if (lowest >= maxChars || !fits(render(lowest))) return compactSummary(parts, summaryTextBudget(request, estimator) ?? 0, estimator);
  // the largest bound whose summary fits (checked: only a bound seen to fit is used)
  let lo = lowest;
  let hi = maxChars - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(render(mid))) lo = mid;
    else hi = mid - 1;
  }
  return render(lo);
}
