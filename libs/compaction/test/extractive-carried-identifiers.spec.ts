/**
 * Folding a previous summary into the next (`rolling-summary`, `recursive-summarization`), every
 * identifier the previous summary holds is in the new one or counted in its `(+N more)`, and what
 * the previous summary only counted is counted again, at every budget (newcomer ncverify53 F2): with
 * `rolling-summary` at `summarizeAtTokens` ~40 the compact form looked for identifiers only in the
 * archived events and a previous sectioned summary's artefacts, so the previous compact summary's
 * `Identifiers:` line and the identifiers of its text were cut with the rest of its text, uncounted
 * (32-34 of 63 passes in the newcomer's sweep), and its `(+N more)` was dropped.
 */
import fc from 'fast-check';
import {
  completePlan,
  costEvents,
  eventCost,
  extractiveSummary,
  getEstimator,
  minCompactSummaryUnits,
  parseStrategy,
  planCompaction,
  summaryTextBudget,
  type SessionEvent,
  type SummaryRequest,
  type TokenEstimator,
} from '../src';
import { summaryRequest } from './summary-request';

const cl100k = getEstimator('cl100k_base');

const cost = (request: SummaryRequest, text: string, estimator: TokenEstimator) =>
  eventCost({ id: 'x', type: 'summary', shadowPrompt: request.shadowPrompt, text }, estimator);

/**
 * What the summary's identifier lists count (`(+N more)`): the packed sections' artefacts line, the
 * compact form's `Identifiers:` line (its last), and a previous summary's artefacts merged as they
 * are ("Earlier artefacts:", in a summary that fits its budget unpacked).
 */
function countedIdentifiers(text: string): number {
  const lines = text.split('\n');
  const lists = lines.filter((l, i) => i > 0 && ['Artefacts (identifiers, values, paths):', 'Earlier artefacts:'].includes(lines[i - 1]));
  const last = lines[lines.length - 1];
  if (last.startsWith('Identifiers: ')) lists.push(last);
  return lists.reduce((sum, line) => sum + Number(/\(\+(\d+) more\)$/.exec(line)?.[1] ?? 0), 0);
}

/**
 * Whether `text`, the summary folding `previous` into the archived events of `request`, keeps each
 * of `ids` that the previous summary or the events hold, or counts it, and counts again what the
 * previous summary counted: the ids missing from it, plus the previous count, are at most its count.
 */
function accountsFor(text: string, previous: string, request: SummaryRequest, ids: readonly string[]): { missing: string[]; carried: number; counted: number } {
  const held = ids.filter((id) => previous.includes(id) || request.toSummarize.some((e) => e.includes(id)));
  return { missing: held.filter((id) => !text.includes(id)), carried: countedIdentifiers(previous), counted: countedIdentifiers(text) };
}

/** The budgets the summary must keep to: all but those whose text budget is under the compact form's floor (its content plus the omission marker, for the longest text it may cut). */
function promisedWithin(request: SummaryRequest, estimator: TokenEstimator): boolean {
  const archived = [...request.currentSummaries, ...request.toSummarize].join('\n').length;
  const floor = minCompactSummaryUnits(estimator) + estimator.count(` [… ${archived} characters omitted …] `);
  return (summaryTextBudget(request, estimator) ?? 0) >= floor;
}

describe('extractive summary folding a previous one: its identifiers listed or counted', () => {
  const previous = [
    'User: My ticket TCK-2024-00917 is about a failed refund, write to dana.ross@example.com [… 412 characters omitted …] the order ZQ7-88412 is affected too.',
    'Identifiers: RF-55301, /var/log/refunds/app.log (+3 more)',
  ].join('\n');
  const carried = ['TCK-2024-00917', 'dana.ross@example.com', 'ZQ7-88412', 'RF-55301', '/var/log/refunds/app.log'];
  const events = [
    'User: Thanks. Can you also move my flight HAT136 to the next day?',
    'Assistant: Sure: I will look at the reservation OI5L9G for flight HAT136 and tell you what it costs.',
    'Tool [responses: get_reservation_details -> {"reservation_id": "OI5L9G", "flights": ["HAT136", "HAT039"], "payment_id": "credit_card_4421486"}]',
  ];

  it.each(Array.from({ length: 41 }, (_, i) => 10 + i))(
    'rolling-summary at summarizeAtTokens %i × 2: the previous compact summary’s identifiers and its (+3 more) are kept or counted',
    (budget) => {
      const request = summaryRequest(events, budget, [previous]);
      const text = extractiveSummary(request, { estimator: cl100k });
      const { missing, carried: before, counted } = accountsFor(text, previous, request, [...carried, 'HAT136', 'HAT039', 'OI5L9G', 'credit_card_4421486']);
      expect(before).toBe(3);
      expect(missing.length + before).toBeLessThanOrEqual(counted);
      if (promisedWithin(request, cl100k)) expect(cost(request, text, cl100k)).toBeLessThanOrEqual(budget);
    },
  );

  it('at 20 tokens the new identifiers line names or counts them, on one line: the previous one is not left in the text', () => {
    const text = extractiveSummary(summaryRequest(events, 20, [previous]), { estimator: cl100k });
    expect(text.split('\n').filter((l) => l.startsWith('Identifiers: '))).toHaveLength(1);
    expect(text.split('\n').pop()).toMatch(/^Identifiers: .*\(\+\d+ more\)$/);
  });
});

describe('extractive summary folding a previous one: identifiers listed or counted (properties)', () => {
  const upper = fc.stringMatching(/^[A-Z]{2,4}$/);
  const lower = fc.stringMatching(/^[a-z]{3,8}$/);
  const identifier = fc.oneof(
    fc.tuple(upper, fc.integer({ min: 100, max: 999_999 })).map(([a, n]) => `${a}-${n}`), // RF-55301
    fc.tuple(upper, fc.integer({ min: 2000, max: 2099 }), fc.integer({ min: 10_000, max: 99_999 })).map(([a, y, n]) => `${a}-${y}-${n}`), // TCK-2024-00917
    fc.stringMatching(/^[A-Z][A-Z0-9]{2,5}[0-9]$/), // ZQ7K2
    fc.tuple(lower, lower, fc.constantFrom('com', 'org', 'io')).map(([a, b, tld]) => `${a}.${b}@example.${tld}`), // e-mail
    fc
      .tuple(fc.array(lower, { minLength: 1, maxLength: 5 }), lower, fc.constantFrom('log', 'ts', 'json'))
      .map(([dirs, f, ext]) => `/${dirs.join('/')}/${f}.${ext}`),
  );
  const WORDS = ['the', 'refund', 'ticket', 'failed', 'please', 'check', 'order', 'customer', 'wrote', 'again', 'about', 'card', 'retry', 'nightly', 'build'];
  const filler = fc.array(fc.constantFrom(...WORDS), { maxLength: 30 }).map((w) => w.join(' '));
  /** One archived event mentioning `id`, in one of the formatter's shapes. */
  const eventWith = (id: string) =>
    fc.tuple(fc.constantFrom('User', 'Assistant', 'Tool'), filler, filler).map(([role, before, after]) => {
      if (role === 'Tool') return `Tool [responses: lookup -> {"ref": "${id}", "note": "${before}"}]`;
      return `${role}: ${before} ${id} ${after}`.replace(/\s+/g, ' ');
    });
  // distinct ids, none inside another (a listed longer one would hold it, but its count would not)
  const noneInside = (xs: string[]) => xs.every((a) => xs.every((b) => a === b || !b.includes(a)));
  const ids = fc.uniqueArray(identifier, { minLength: 2, maxLength: 24 }).filter(noneInside);
  /** Ids, the events of an earlier pass mentioning some, then those of this pass mentioning the others (and maybe some again). */
  const twoPasses = ids.chain((xs) =>
    fc
      .tuple(fc.integer({ min: 1, max: xs.length - 1 }), fc.nat(3))
      .chain(([split, again]) =>
        fc.tuple(fc.constant(xs), fc.tuple(...xs.slice(0, split).map(eventWith)), fc.tuple(...[...xs.slice(split), ...xs.slice(0, again)].map(eventWith))),
      ),
  );

  it('a previous summary written at a budget of 1 to 400 tokens, folded at a budget of 1 to 400: each of its identifiers and the events’ is in the new one or counted, its count carried', () => {
    fc.assert(
      fc.property(twoPasses, fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 400 }), ([xs, earlier, now], previousBudget, budget) => {
        const previous = extractiveSummary(summaryRequest(earlier, previousBudget), { estimator: cl100k });
        const request = summaryRequest(now, budget, [previous]);
        const text = extractiveSummary(request, { estimator: cl100k });
        const { missing, carried, counted } = accountsFor(text, previous, request, xs);
        expect(missing.length + carried).toBeLessThanOrEqual(counted);
        if (promisedWithin(request, cl100k)) expect(cost(request, text, cl100k)).toBeLessThanOrEqual(budget);
      }),
      { numRuns: 300 },
    );
  });

  /** A conversation of turns, each a user message and an answer, mentioning `xs` in turn. */
  const conversation = ids.chain((xs) =>
    fc.tuple(fc.constant(xs), fc.tuple(...xs.map(eventWith)), fc.array(filler, { minLength: xs.length, maxLength: xs.length })),
  );

  it('rolling-summary at summarizeAtTokens 2 to 800 (budgets 1 to 400), pass after pass: each identifier of the summary folded in is in the next or counted, its count carried', () => {
    let folded = 0;
    fc.assert(
      fc.property(conversation, fc.integer({ min: 2, max: 800 }), ([xs, mentions, talk], summarizeAtTokens) => {
        const strategy = parseStrategy({ type: 'rolling-summary', keepTurns: 1, summarizeAtTokens });
        let window: SessionEvent[] = [];
        mentions.forEach((mention, i) => {
          const [user, answer] = mention.startsWith('User: ') ? [mention, `Assistant: ${talk[i]}`] : [`User: ${talk[i]} ok`, mention];
          window.push({ id: `u${i}`, type: 'user', text: user.slice('User: '.length) });
          window.push(
            answer.startsWith('Tool ')
              ? { id: `a${i}`, type: 'assistant', text: answer.replace(/^Tool \[responses: lookup -> /, '').replace(/\]$/, '') }
              : { id: `a${i}`, type: 'assistant', text: answer.slice(answer.indexOf(': ') + 2) },
          );
          const plan = planCompaction(costEvents(window, cl100k), strategy);
          const request = plan.summaryRequest;
          if (request === undefined) return;
          const text = extractiveSummary(request, { estimator: cl100k });
          if (request.currentSummaries.length === 1) {
            folded++;
            const { missing, carried, counted } = accountsFor(text, request.currentSummaries[0], request, xs);
            expect(missing.length + carried).toBeLessThanOrEqual(counted);
          }
          const result = completePlan(plan, { reply: { text }, summaryId: `s${i}`, estimator: cl100k });
          const byId = new Map(window.map((e) => [e.id, e]));
          byId.set(result.summary!.id, { id: result.summary!.id, type: 'summary', shadowPrompt: result.summary!.shadowPrompt, text });
          window = result.keptIds.map((id) => byId.get(id)!);
        });
      }),
      { numRuns: 60 },
    );
    expect(folded).toBeGreaterThan(0);
  });
});
