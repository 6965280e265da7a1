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
import { eventCost, extractiveSummary, getEstimator, type SessionEvent, type SummaryRequest } from '../src';
import { rollingPasses } from './rolling-passes';
import { summaryRequest } from './summary-request';
import { archivedUserMessages, bareLines, counts, keeps, OMITTED, userMessagesOf } from './summary-reading';

const cl100k = getEstimator('cl100k_base');

/**
 * The user messages of `request` (archived ones, folded as the summary folds them; the folded
 * summary's) that `text` neither keeps nor counts; none when the compact form cut its text (its
 * marker stands for the cut). `carried`: what the folded summary counted and `text` does not count again.
 */
function unaccounted(request: SummaryRequest, text: string): { archived: string[]; previous: string[]; carried: number } {
  const lines = bareLines(text);
  const archived = archivedUserMessages(request).filter((m) => !keeps(lines, m));
  const prev = userMessagesOf(request.currentSummaries.join('\n'));
  // a line the folded summary holds twice (a message among its last events too) is merged once
  const previous = [...new Set(prev.messages)].filter((m) => !keeps(lines, m));
  if (!text.startsWith('[Extractive summary')) {
    const cut = OMITTED.test(text);
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
    rollingPasses(events, at, cl100k, (request, text) => {
      if (request.currentSummaries.length > 0) folding++;
      expect(unaccounted(request, text)).toEqual({ archived: [], previous: [], carried: 0 });
      expect(within(request, text)).toBe(true);
    });
    expect(folding).toBeGreaterThan(0);
  });

  it('at a 150-token budget, the folded summary’s user messages that do not fit are counted on the “Left out:” line', () => {
    const texts: string[] = [];
    rollingPasses(events, 300, cl100k, (request, text) => {
      if (request.currentSummaries.length > 0 && !keeps(bareLines(text), turns[0][0])) texts.push(text);
    });
    expect(texts.length).toBeGreaterThan(0);
    // counted as what they are: under their group, or by kind on the Left out line (not among "previous summary lines")
    for (const text of texts) expect(text).toMatch(/Earlier user messages:\n(?:- .*\n)*- \(\+\d+ more\)$|^Left out: (?:.*, )?\d+ earlier user messages?\b/m);
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
