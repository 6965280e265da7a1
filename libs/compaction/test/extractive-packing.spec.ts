/**
 * The extractive summary within a tight budget is packed whole item by whole item: headings are
 * never cut, no word is cut, the identifiers come before prose and are listed whole with
 * "(+N more)" when not all fit.
 */
import fc from 'fast-check';
import { eventCost, extractiveSummary, getEstimator, type SummaryRequest, type TokenEstimator } from '../src';
import { summaryRequest } from './summary-request';

const cl100k = getEstimator('cl100k_base');
const chars = getEstimator('chars');
const HEADINGS = [
  'User messages (oldest first):',
  'Tools used:',
  'Artefacts (identifiers, values, paths):',
  'Last events before the cut:',
  'Previous summary (merged):',
];
const cost = (request: SummaryRequest, text: string, estimator: TokenEstimator) =>
  eventCost({ id: 'x', type: 'summary', shadowPrompt: request.shadowPrompt, text }, estimator);

const request = summaryRequest;

/** Lines of `text` that look like a section heading (a capitalised line ending with a colon, or a cut one). */
const headingLike = (text: string) => text.split('\n').filter((l) => /^(User messages|Tools us|Artefacts|Last events|Previous summary|Earlier)/.test(l));

describe('extractive summary packed into a tight budget', () => {
  const ids = ['OI5L9G', 'KA7I60', 'I57WUD', '4BMN53', 'Q0ZF0J', 'OBUT9V'];
  const events: string[] = [];
  for (let i = 0; i < 24; i++) {
    events.push(
      `User: I don't remember the reservation number for my trip ${i}, but it may be ${ids[i % ids.length]}; my profile says a lot about the flights I booked over the years and the places I went to.`,
    );
    events.push(
      `Assistant: Let me look that up for you, the reservation details should tell us more about the flight and the cabin, and the payment you used, give me a moment please. [tool calls: get_reservation_details({"reservation_id":"${ids[i % ids.length]}"})]`,
    );
    events.push(`Tool [responses: get_reservation_details -> {"reservation_id": "${ids[i % ids.length]}", "cabin": "economy", "price": ${100 + i}}]`);
  }

  it.each([150, 200, 300])('budget %i: every heading whole, no cut marker or cut word, the six ids kept, within the budget', (budget) => {
    const req = request(events, budget);
    const text = extractiveSummary(req, { estimator: cl100k });
    expect(cost(req, text, cl100k)).toBeLessThanOrEqual(budget);
    for (const line of headingLike(text)) expect(HEADINGS).toContain(line);
    expect(text).toContain('User messages (oldest first):');
    expect(text).toContain('Artefacts (identifiers, values, paths):');
    expect(text).not.toMatch(/omitted …\]|\[…/);
    expect(text).not.toMatch(/\w…|…\w/); // a shortened line ends at a word: "… word …"
    for (const id of ids) expect(text).toContain(id);
    expect(extractiveSummary(req, { estimator: cl100k })).toBe(text);
  });

  it('when the identifiers do not all fit, as many as fit are listed whole, then "(+N more)"', () => {
    const many = Array.from({ length: 120 }, (_, i) => `User: please check booking BK${String(i).padStart(4, '0')}X7 and ORD-${9000 + i}-Z`);
    const req = request(many, 150);
    const text = extractiveSummary(req, { estimator: cl100k });
    expect(cost(req, text, cl100k)).toBeLessThanOrEqual(150);
    const line = text.split('\n')[text.split('\n').indexOf('Artefacts (identifiers, values, paths):') + 1];
    const m = /^(.*) \(\+(\d+) more\)$/.exec(line);
    expect(m).not.toBeNull();
    const listed = m![1].split(', ');
    expect(listed.length).toBeGreaterThan(5);
    for (const a of listed) expect(a).toMatch(/^(BK\d{4}X7|ORD-\d{4}-Z)$/);
    expect(listed.length + Number(m![2])).toBe(240);
  });
});

/** Words the random conversations are made of: prose, identifiers, paths, e-mails, amounts, dates. */
const WORDS = [
  'the',
  'flight',
  'booking',
  'please',
  'change',
  'cabin',
  'and',
  'to',
  'Denver',
  'Houston',
  'error:',
  'fixed',
  'OI5L9G',
  'KA7I60',
  'HAT229',
  'user_7287',
  'gift_card_6276644',
  '/srv/data/a.json',
  '~/notes/todo.md',
  'ann@example.com',
  '2024-05-27',
  '$120.50',
  '12.5%',
  '6276644',
  'https://example.com/a/b',
  'camelCaseName',
  'snake_case_name',
  '42',
  '1,000',
];
const sentence = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 30 }).map((w) => w.join(' '));
const eventText = fc.oneof(
  sentence.map((s) => `User: ${s}`),
  sentence.map((s) => `Assistant: ${s}`),
  fc.tuple(sentence, fc.constantFrom(...WORDS)).map(([s, w]) => `Assistant: ${s} [tool calls: lookup({"key":"${w}"})]`),
  sentence.map((s) => `Tool [responses: lookup -> ${s}]`),
);

describe('extractive summary packing (property)', () => {
  it('within the budget, deterministic, every listed artefact whole from the input', () => {
    fc.assert(
      fc.property(
        fc.array(eventText, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 60, max: 600 }),
        fc.constantFrom(cl100k, chars),
        fc.boolean(),
        (toSummarize, tokens, estimator, withPrevious) => {
          const budget = estimator === chars ? tokens * 4 : tokens;
          const previous = withPrevious ? [extractiveSummary(request(toSummarize.slice(0, 3), budget), { estimator })] : [];
          const req = request(toSummarize, budget, previous);
          const text = extractiveSummary(req, { estimator });
          expect(extractiveSummary(req, { estimator })).toBe(text);
          const full = extractiveSummary(req);
          if (cost(req, full, estimator) <= budget) return; // roomy: nothing to pack
          expect(cost(req, text, estimator)).toBeLessThanOrEqual(budget);
          const lines = text.split('\n');
          const at = lines.indexOf('Artefacts (identifiers, values, paths):');
          if (at < 0) return;
          const input = [...previous, ...toSummarize].join('\n');
          const whole = (a: string) => new RegExp(`(?<![A-Za-z0-9])${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9])`).test(input);
          for (const a of lines[at + 1].replace(/ \(\+\d+ more\)$/, '').split(', ')) {
            expect(a).not.toMatch(/…/);
            const pair = /^([A-Za-z_][\w-]*)=(.*)$/.exec(a);
            if (pair) {
              expect(input).toContain(`"${pair[1]}"`);
              expect(whole(pair[2])).toBe(true);
            } else expect(whole(a)).toBe(true);
          }
        },
      ),
      { numRuns: 200, seed: 20261201 },
    );
  });
});
