/**
 * A summary folding a previous one says, under each of the previous section's groups, how many of
 * that group's items it left out, and nothing else: the count under `Earlier user messages:` is
 * of user messages. Until 2026-12-05 the previous section had one `(+N more)`, at its end, under
 * whichever group came last, counting every item left out of the section (user messages, last
 * events, tools, and the counts carried from the summaries folded before): under
 * `Earlier user messages:` it read as a count of user messages, and 6 of 122 merged summaries of a
 * newcomer's run claimed more user messages than were ever sent (35 where 20 exist: ncverify56 F1).
 */
import fc from 'fast-check';
import { extractiveSummary, getEstimator } from '../src';
import { summaryRequest } from './summary-request';
import { archivedUserMessages, bareLines, COUNT, keeps } from './summary-reading';

const cl100k = getEstimator('cl100k_base');

const EARLIER_USERS = 'Earlier user messages:';

/**
 * How many user messages `summary` counts under its `Earlier user messages:` groups: the
 * `(+N more)` lines under that heading (in the packed form's previous section and in the compact
 * form's text alike), and `N earlier user messages` on its `Left out:` line.
 */
function earlierUserCount(summary: string): number {
  let heading = '';
  let n = 0;
  for (const raw of summary.split('\n')) {
    const line = raw.trim();
    if (line === '' || /^[A-Z][^:]*:$/.test(line)) {
      heading = line;
      continue;
    }
    const count = COUNT.exec(line);
    if (count !== null && heading === EARLIER_USERS) n += Number(count[1]);
    if (line.startsWith('Left out: ')) n += Number(/(\d+) earlier user messages?/.exec(line)?.[1] ?? 0);
  }
  return n;
}

/**
 * The user messages of `earlier` archives (each as a summary writes it) that `summary` does not
 * keep on a line of its own, whole or shortened at a word: the most its earlier-user counts may say.
 */
function earlierUsersLeftOut(earlier: readonly (readonly string[])[], summary: string): number {
  const lines = bareLines(summary);
  return earlier.flatMap((archive) => archivedUserMessages(summaryRequest([...archive]))).filter((m) => !keeps(lines, m)).length;
}

describe('extractive summary: a folded summary’s groups count their own items only', () => {
  // the first pass: 3 user messages, tools and last events, all kept in its 600-token summary
  const first = [
    'User: m1z I need to change the flight on reservation AB1234 to Friday',
    'Assistant [tool calls: get_reservation_details({"reservation_id":"AB1234"})]',
    'Tool [responses: get_reservation_details -> {"reservation_id": "AB1234", "status": "confirmed"}]',
    'User: m2z the morning one please, window seat',
    'Assistant [tool calls: search_direct_flight({"origin":"JFK","destination":"SEA"})]',
    'Tool [responses: search_direct_flight -> [{"flight_number": "HAT136"}, {"flight_number": "HAT039"}]]',
    'User: m3z yes book HAT136',
    'Assistant: Done, your reservation AB1234 now holds flight HAT136 on Friday morning, seat 12A by the window.',
    'Tool [responses: update_reservation_flights -> {"reservation_id": "AB1234", "flights": ["HAT136"]}]',
    'Assistant: Is there anything else I can help you with today?',
  ];
  const second = ['User: m4z and add one checked bag', 'Assistant: One checked bag is added to AB1234.'];

  it('a small budget keeps one earlier user message: its group counts the 2 others, not the last events and tools too (ncverify56 F1)', () => {
    const previous = extractiveSummary(summaryRequest(first, 600), { estimator: cl100k });
    // the previous summary keeps all 3 user messages, its tools and its 3 last events
    expect(bareLines(previous).filter((l) => /^m\dz /.test(l.text))).toHaveLength(3);
    const text = extractiveSummary(summaryRequest(second, 170, [previous]), { estimator: cl100k });
    // was `Earlier user messages:`, m1z, m3z, then `(+5 more)`: 2 user messages, the tools line, 3 last events
    expect(text).toContain(`${EARLIER_USERS}\n- m1z I need to change the flight on reservation AB1234 to Friday\n- (+2 more)\n`);
    expect(text).toMatch(/\nLeft out: 1 earlier tools line, 3 earlier last events, 2 last events$/);
    expect(earlierUserCount(text)).toBe(2);
    // and at every budget from 100 to 300 tokens, no more than the 3 sent
    for (let budget = 100; budget <= 300; budget += 2) {
      const t = extractiveSummary(summaryRequest(second, budget, [previous]), { estimator: cl100k });
      expect(earlierUserCount(t)).toBeLessThanOrEqual(earlierUsersLeftOut([first], t));
    }
  });

  it('a compact summary’s archived lines after its text’s last group are no item of that group when folded (ncrecheck58 F1)', () => {
    // a compact form: the previous summary's text (ending in a group) and then the archived lines, one line each
    const compact = [
      'Earlier user messages:',
      '- m1z I need to change the flight on reservation AB1234 to Friday',
      'Earlier last events:',
      '- Assistant: Your reservation AB1234 is confirmed.',
      'User: m2z please go ahead with the cancellation',
      'Assistant: The cancellation of AB1234 is done.',
    ].join('\n');
    // the archived lines are the previous summary's own lines (under no group), the one last event its group's
    const text = extractiveSummary(summaryRequest(second, 120, [compact]), { estimator: cl100k });
    expect(text).toContain('\n\nPrevious summary (merged):\nUser: m2z please go ahead with the cancellation\n(+1 more)\n\n');
    expect(text).toMatch(/\n\nLeft out: 1 earlier user message, 1 earlier last event, 2 last events$/);
    // and at no budget is a line of the archive after the group counted as one of the group's
    for (let budget = 100; budget <= 300; budget += 2)
      expect(extractiveSummary(summaryRequest(second, budget, [compact]), { estimator: cl100k })).not.toMatch(
        /\d+ earlier last events|Earlier last events:\n(?:- .*\n)*- \(\+[2-9]/,
      );
  });

  it('a compact summary cut through the previous summary writes the title of the group its tail continues again after the cut (property seed -1228711968)', () => {
    const call = 'Assistant [tool calls: get_reservation_details({"reservation_id":"AA000"})]';
    const result = 'Tool [responses: get_reservation_details -> {"reservation_id": "AA000", "note": ""}]';
    const s1 = extractiveSummary(summaryRequest(['Assistant: the', result], 78), { estimator: cl100k });
    const a2 = [
      call,
      call,
      call,
      'Assistant: the',
      'Assistant: the',
      'User: m105z',
      'Assistant: the',
      'Assistant: the',
      call,
      'User: m109z AA000',
      call,
      result,
    ];
    a2.push('Assistant: the', 'Assistant: the', result, 'Assistant: the', result, result);
    a2.push('Assistant [tool calls: get_reservation_details({"reservation_id":"AA001"})]', 'Assistant: the', 'Assistant: the');
    const s2 = extractiveSummary(summaryRequest(a2, 121, [s1]), { estimator: cl100k });
    // a budget of 1: the compact form, cut in the middle, through the previous summary's groups
    const s3 = extractiveSummary(summaryRequest(['Assistant: the'], 1, [s2]), { estimator: cl100k });
    // was `- m109z AA000 [… 87 characters omitted …] - Assistant: the`, then `- (+4 more)`: 4 last events read as user messages
    expect(s3).toMatch(/^Earlier user messages:\n- m105z\n- m109z \[… \d+ characters omitted …\]\nEarlier last events:\n- Assistant: the\n- \(\+4 more\)\n/);
    expect(earlierUserCount(s3)).toBe(0);
  });

  const WORDS = ['the', 'flight', 'refund', 'please', 'check', 'booking', 'seat', 'window', 'my', 'again', 'cancel', 'tomorrow', 'card', 'bags'];
  const words = (min: number, max: number) => fc.array(fc.constantFrom(...WORDS), { minLength: min, maxLength: max }).map((w) => w.join(' '));
  const code = fc.stringMatching(/^[A-Z]{2}[0-9]{3,5}$/);
  /** One archived event; user messages are told apart by `k` (`m<k>z`, no one's prefix). */
  const event = (k: number) =>
    fc.oneof(
      fc.tuple(words(0, 25), fc.option(code)).map(([w, c]) => ['User:', `m${k}z`, w, c ?? ''].filter((x) => x !== '').join(' ')),
      words(1, 40).map((w) => `Assistant: ${w}`),
      fc.tuple(code, words(0, 12)).map(([c, w]) => `Assistant [tool calls: get_reservation_details({"reservation_id":"${c}"})]${w === '' ? '' : ` ${w}`}`),
      fc.tuple(code, words(0, 12)).map(([c, w]) => `Tool [responses: get_reservation_details -> {"reservation_id": "${c}", "note": "${w}"}]`),
    );
  const archive = (offset: number) => fc.integer({ min: 1, max: 25 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => event(offset + i))));
  const budget = fc.integer({ min: 1, max: 600 });

  it('three passes (each folding the one before) at budgets of 1 to 600: every count under “Earlier user messages” is at most the earlier user messages left out', () => {
    fc.assert(
      fc.property(archive(0), archive(100), archive(200), budget, budget, budget, (a1, a2, a3, b1, b2, b3) => {
        const s1 = extractiveSummary(summaryRequest(a1, b1), { estimator: cl100k });
        const s2 = extractiveSummary(summaryRequest(a2, b2, [s1]), { estimator: cl100k });
        const s3 = extractiveSummary(summaryRequest(a3, b3, [s2]), { estimator: cl100k });
        expect(earlierUserCount(s2)).toBeLessThanOrEqual(earlierUsersLeftOut([a1], s2));
        expect(earlierUserCount(s3)).toBeLessThanOrEqual(earlierUsersLeftOut([a1, a2], s3));
      }),
      { numRuns: 300 },
    );
  });
});
