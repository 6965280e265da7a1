/**
 * A budgeted extractive summary leaves no user message out without a count: each one of the
 * archived events and of the summary folded in is kept (whole, or shortened at a word) or counted,
 * by its section's `(+N more)` or, for a section of which nothing is kept, by the `Left out:` line;
 * what the folded summary counted is counted again. Until 2026-12-05 a section with nothing kept
 * was left out, heading and all: with `rolling-summary` at `summarizeAtTokens` 300 (a 150-token
 * summary), 363 of the 428 user messages of the folded summaries went without a count over the 150
 * shared conversations (newcomer report), and the folded summary's own counts were dropped.
 * The compact form (a pass too small for sections) keeps its text whole or cut in the middle with
 * an omission marker, which stands for what it cut.
 */
import fc from 'fast-check';
import {
  completePlan,
  costEvents,
  eventCost,
  extractiveSummary,
  getEstimator,
  parseStrategy,
  planCompaction,
  type SessionEvent,
  type SummaryRequest,
} from '../src';
import { foldRepeatedUserMessages, repeatedMessage } from '../src/repeated-user-messages';
import { summaryRequest } from './summary-request';

const cl100k = getEstimator('cl100k_base');
const USERS = 'User messages (oldest first):';
const PREVIOUS = 'Previous summary (merged):';
const USER_HEADINGS = new Set([USERS, 'Earlier user messages:']);
const COUNT = /^(?:- )?\(\+(\d+) more\)$/;

/** A line as a section writes a message: no `- `, no `User: `, no shortening ` …`. */
function bare(line: string): { text: string; shortened: boolean } {
  let text = line
    .trim()
    .replace(/^- /, '')
    .replace(/^User: /, '');
  const shortened = text.endsWith(' …');
  if (shortened) text = text.slice(0, -2);
  return { text, shortened };
}

/** Whether `summary` keeps `message` (bare) on a line of its own, whole or shortened at a word. */
function keeps(summary: string, message: string): boolean {
  return summary
    .split('\n')
    .map(bare)
    .some((l) => l.text === message || (l.shortened && l.text !== '' && message.startsWith(l.text)));
}

/**
 * What a sectioned summary counts of its user messages and of its previous summary's lines: the
 * `(+N more)` of its user section, those of its previous section (but its earlier artefacts'), and
 * the `Left out:` line.
 */
function counts(summary: string): { users: number; previous: number } {
  const out = { users: 0, previous: 0 };
  for (const block of summary.split('\n\n')) {
    const lines = block.split('\n');
    if (lines[0] === USERS) out.users += Number(COUNT.exec(lines[lines.length - 1].trim())?.[1] ?? 0);
    if (lines[0] === PREVIOUS) {
      let artefacts = false;
      for (const line of lines) {
        if (/^Earlier [^:]*:$/.test(line)) artefacts = line === 'Earlier artefacts:';
        else if (!artefacts) out.previous += Number(COUNT.exec(line.trim())?.[1] ?? 0);
      }
    }
    if (lines[0].startsWith('Left out: ')) {
      out.users += Number(/(\d+) user messages?/.exec(lines[0])?.[1] ?? 0);
      out.previous += Number(/(\d+) previous summary lines?/.exec(lines[0])?.[1] ?? 0);
    }
  }
  return out;
}

/** The user messages a summary holds (bare: its user sections' lines, its `User: …` lines), and how many it only counted. */
function userMessagesOf(summary: string): { messages: string[]; counted: number } {
  const messages: string[] = [];
  let counted = 0;
  let heading = '';
  for (const raw of summary.split('\n')) {
    const line = raw.trim();
    if (line === '' || (/^[A-Z][^:]*:$/.test(line) && !line.startsWith('- '))) {
      heading = line;
      continue;
    }
    counted += Number(/^Left out: .*?(\d+) user messages?/.exec(line)?.[1] ?? 0);
    const count = COUNT.exec(line);
    if (count) counted += USER_HEADINGS.has(heading) ? Number(count[1]) : 0;
    else if ((USER_HEADINGS.has(heading) && line.startsWith('- ')) || /^(?:- )?User: /.test(line)) messages.push(bare(line).text);
  }
  return { messages, counted };
}

/**
 * The user messages of `request` (archived ones, folded as the summary folds them; the folded
 * summary's) that `text` neither keeps nor counts; none when the compact form cut its text (its
 * marker stands for the cut). `carried`: what the folded summary counted and `text` does not count again.
 */
function unaccounted(request: SummaryRequest, text: string): { archived: string[]; previous: string[]; carried: number } {
  const archived = foldRepeatedUserMessages(request.toSummarize)
    .flatMap((e) => (e.user === undefined ? [] : [repeatedMessage(e.user.text, e.user.times)]))
    .filter((m) => !keeps(text, m));
  const prev = userMessagesOf(request.currentSummaries.join('\n'));
  // a line the folded summary holds twice (a message among its last events too) is merged once
  const previous = [...new Set(prev.messages)].filter((m) => !keeps(text, m));
  if (!text.startsWith('[Extractive summary')) {
    const cut = /\[… \d+ characters omitted …\]/.test(text);
    return { archived: cut ? [] : archived, previous: cut ? [] : previous, carried: 0 };
  }
  const c = counts(text);
  return {
    archived: archived.slice(c.users),
    previous: previous.slice(c.previous),
    carried: Math.max(0, prev.counted - Math.max(0, c.previous - previous.length)),
  };
}

const within = (request: SummaryRequest, text: string) =>
  eventCost({ id: 'x', type: 'summary', shadowPrompt: request.shadowPrompt, text }, cl100k) <= (request.maxSummaryTokens ?? Infinity);

/** Rolling-summary passes over `events` appended one by one; `check` sees each pass's request and summary. */
function rollingPasses(events: readonly SessionEvent[], summarizeAtTokens: number, check: (request: SummaryRequest, text: string) => void): void {
  const strategy = parseStrategy({ type: 'rolling-summary', keepTurns: 2, summarizeAtTokens });
  let window: SessionEvent[] = [];
  events.forEach((event, i) => {
    window.push(event);
    const plan = planCompaction(costEvents(window, cl100k), strategy);
    const request = plan.summaryRequest;
    if (request === undefined) return;
    const text = extractiveSummary(request, { estimator: cl100k });
    check(request, text);
    const result = completePlan(plan, { reply: { text }, summaryId: `s${i}`, estimator: cl100k });
    const byId = new Map(window.map((e) => [e.id, e]));
    byId.set(result.summary!.id, { id: result.summary!.id, type: 'summary', shadowPrompt: result.summary!.shadowPrompt, text });
    window = result.keptIds.map((id) => byId.get(id)!);
  });
}

describe('extractive summary: every user message kept or counted (rolling-summary, airline support)', () => {
  // an airline support conversation in the shape of the shared data (user asks, agent looks up, tools answer)
  const turns: Array<[string, string, string, string]> = [
    [
      'Hi! I want to book a one-way flight from New York to Seattle on May 20th.',
      'get_user_details',
      '{"user_id":"mia_li_3668"}',
      '{"user_id": "mia_li_3668", "address": {"address1": "975 Sunset Drive", "zip": "78750"}, "email": "mia.li3818@example.com", "payment_methods": {"certificate_4856383": {"amount": 250}}}',
    ],
    [
      'Economy, just me. I want to pay with my certificates, and not before 11 am.',
      'search_direct_flight',
      '{"origin":"JFK","destination":"SEA","date":"2024-05-20"}',
      '[{"flight_number": "HAT136", "origin": "JFK", "destination": "SEA", "price": 152}, {"flight_number": "HAT039", "price": 103}]',
    ],
    [
      'Neither of those works for me. Do you have any later flights?',
      'search_onestop_flight',
      '{"origin":"JFK","destination":"SEA","date":"2024-05-20"}',
      '[[{"flight_number": "HAT057", "price": 141}, {"flight_number": "HAT218", "price": 477}]]',
    ],
    ['I will take the first option, flight HAT136.', 'calculate', '{"expression":"152 + 103"}', '255.0'],
    [
      'Yes, please proceed with that booking. Thank you!',
      'book_reservation',
      '{"user_id":"mia_li_3668","flights":["HAT136","HAT039"]}',
      '{"reservation_id": "OI5L9G", "status": "confirmed"}',
    ],
    [
      'Can you add one checked bag to reservation OI5L9G?',
      'update_reservation_baggages',
      '{"reservation_id":"OI5L9G","total_baggages":1}',
      '{"reservation_id": "OI5L9G", "total_baggages": 1}',
    ],
    ['And what is the status of flight HAT039 on that day?', 'get_flight_status', '{"flight_number":"HAT039","date":"2024-05-20"}', '"available"'],
    ['Great, that is all. Thanks for your help!', 'think', '{"thought":"done"}', '[no text content]'],
  ];
  const events: SessionEvent[] = turns.flatMap(([user, tool, args, result], i): SessionEvent[] => [
    { id: `u${i}`, type: 'user', text: user },
    { id: `c${i}`, type: 'assistant', text: null, toolCalls: [{ id: `call${i}`, name: tool, arguments: args }] },
    { id: `r${i}`, type: 'tool', responses: [{ toolCallId: `call${i}`, name: tool, data: result }] },
    {
      id: `a${i}`,
      type: 'assistant',
      text: `Done: I called ${tool} for you. Here is what it says, what it means for your trip, the fares and rules that apply to your booking, and what we can do next; tell me which option you prefer and I will take care of it right away.`,
    },
  ]);

  it.each([150, 300, 400])('summarizeAtTokens %i: each pass keeps or counts every user message, its own and the folded summary’s, within its budget', (at) => {
    let folding = 0;
    rollingPasses(events, at, (request, text) => {
      if (request.currentSummaries.length > 0) folding++;
      expect(unaccounted(request, text)).toEqual({ archived: [], previous: [], carried: 0 });
      expect(within(request, text)).toBe(true);
    });
    expect(folding).toBeGreaterThan(0);
  });

  it('at a 150-token budget, the folded summary’s user messages that do not fit are counted on the “Left out:” line', () => {
    const texts: string[] = [];
    rollingPasses(events, 300, (request, text) => {
      if (request.currentSummaries.length > 0 && !keeps(text, turns[0][0])) texts.push(text);
    });
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts) expect(text).toMatch(/(?:^|\n)(?:\(\+\d+ more\)|Left out: \d+ previous summary lines?\b.*)$/m);
  });
});

describe('extractive summary: every user message kept or counted (property)', () => {
  const WORDS = ['the', 'flight', 'refund', 'please', 'check', 'booking', 'seat', 'window', 'my', 'again', 'cancel', 'tomorrow', 'card', 'bags'];
  const words = (min: number, max: number) => fc.array(fc.constantFrom(...WORDS), { minLength: min, maxLength: max }).map((w) => w.join(' '));
  const code = fc.stringMatching(/^[A-Z]{2}[0-9]{3,5}$/);
  /** One archived event; user messages are told apart by `k` (`m<k>`). */
  const event = (k: number) =>
    fc.oneof(
      fc.tuple(words(0, 25), fc.option(code)).map(([w, c]) => ['User:', `m${k}`, w, c ?? ''].filter((x) => x !== '').join(' ')),
      fc.constant('User: next'),
      words(1, 40).map((w) => `Assistant: ${w}`),
      fc.tuple(code, words(0, 12)).map(([c, w]) => `Assistant [tool calls: get_reservation_details({"reservation_id":"${c}"})]${w === '' ? '' : ` ${w}`}`),
      fc.tuple(code, words(0, 12)).map(([c, w]) => `Tool [responses: get_reservation_details -> {"reservation_id": "${c}", "note": "${w}"}]`),
    );
  const archive = (offset: number) => fc.integer({ min: 1, max: 30 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => event(offset + i))));

  it('an archive of 1 to 30 events folding a previous summary (or none) written at 1 to 600 tokens, at a budget of 1 to 600: each user message kept or counted, the folded counts counted again', () => {
    fc.assert(
      fc.property(
        archive(0),
        archive(100),
        fc.option(fc.integer({ min: 1, max: 600 })),
        fc.integer({ min: 1, max: 600 }),
        (earlier, now, previousBudget, budget) => {
          const previous = previousBudget === null ? [] : [extractiveSummary(summaryRequest(earlier, previousBudget), { estimator: cl100k })];
          const request = summaryRequest(now, budget, previous);
          const text = extractiveSummary(request, { estimator: cl100k });
          expect(unaccounted(request, text)).toEqual({ archived: [], previous: [], carried: 0 });
        },
      ),
      { numRuns: 400 },
    );
  });
});
