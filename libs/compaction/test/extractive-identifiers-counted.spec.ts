/**
 * At every summary budget, each identifier of the archived events is in the extractive summary or
 * counted in its `(+N more)` (newcomer ncverify52): with `rolling-summary` at `summarizeAtTokens`
 * 60–100 the budget was 30–50 tokens, the compact form listed one identifier on its
 * `Identifiers:` line and dropped the others (a ticket, an e-mail address, a refund id, a path)
 * with no marker; from 120 the packed sections counted them.
 */
import fc from 'fast-check';
import { eventCost, extractiveSummary, getEstimator, minCompactSummaryUnits, summaryTextBudget, type SummaryRequest, type TokenEstimator } from '../src';
import { summaryRequest } from './summary-request';

const cl100k = getEstimator('cl100k_base');

const cost = (request: SummaryRequest, text: string, estimator: TokenEstimator) =>
  eventCost({ id: 'x', type: 'summary', shadowPrompt: request.shadowPrompt, text }, estimator);

/**
 * The budgets the summary must keep to (the extractive summary's docstring): all but those whose
 * text budget is under the compact form's floor (`minCompactSummaryUnits` of content plus the
 * omission marker, here costed for the whole archived text's length, its longest form).
 */
function promisedWithin(request: SummaryRequest, estimator: TokenEstimator): boolean {
  const archived = request.toSummarize.join('\n').length;
  const floor = minCompactSummaryUnits(estimator) + estimator.count(` [… ${archived} characters omitted …] `);
  return (summaryTextBudget(request, estimator) ?? 0) >= floor;
}

/** The `(+N more)` of the line listing identifiers (the packed sections' artefacts, or the compact form's identifiers), or 0. */
function countedIdentifiers(text: string): number {
  const lines = text.split('\n');
  const at = lines.indexOf('Artefacts (identifiers, values, paths):');
  const line = at >= 0 ? lines[at + 1] : lines.find((l) => l.startsWith('Identifiers: '));
  const m = line === undefined ? null : /\(\+(\d+) more\)$/.exec(line);
  return m === null ? 0 : Number(m[1]);
}

/** `ids` neither in `text` nor counted: how many are missing beyond the identifiers line's count (≤ 0: none lost). */
function lost(text: string, ids: readonly string[]): number {
  return ids.filter((id) => !text.includes(id)).length - countedIdentifiers(text);
}

describe('extractive summary: every identifier listed or counted, at every budget', () => {
  const ids = ['TCK-2024-00917', 'dana.ross@example.com', 'RF-55301', '/var/log/refunds/app.log', 'ZQ7-88412'];
  const events = [
    'User: My ticket TCK-2024-00917 is about a failed refund, write to dana.ross@example.com when it is done',
    'Assistant: I looked at it: the refund RF-55301 failed because the card on file had expired.',
    'Tool [responses: lookup_refund -> {"refund": "RF-55301", "log": "/var/log/refunds/app.log"}]',
    'Assistant: The log /var/log/refunds/app.log shows the error, and order ZQ7-88412 is affected too.',
    'User: Please retry the order ZQ7-88412 now.',
  ];

  it.each(Array.from({ length: 131 }, (_, i) => 20 + i))('budget %i (cl100k_base)', (budget) => {
    const req = summaryRequest(events, budget);
    const text = extractiveSummary(req, { estimator: cl100k });
    expect(lost(text, ids)).toBeLessThanOrEqual(0);
    if (promisedWithin(req, cl100k)) expect(cost(req, text, cl100k)).toBeLessThanOrEqual(budget);
  });

  it("the newcomer's budget (summarizeAtTokens 80: 40 tokens) lists what fits and counts the rest on the identifiers line", () => {
    const text = extractiveSummary(summaryRequest(events, 40), { estimator: cl100k });
    expect(text).toMatch(/\nIdentifiers: .*\(\+\d+ more\)$/);
    expect(lost(text, ids)).toBeLessThanOrEqual(0);
  });
});

describe('extractive summary: identifiers listed or counted, the packed sections and the unbudgeted form', () => {
  it('packed sections whose user messages fill the budget still hold the artefacts heading and their count (cl100k_base, 101 tokens)', () => {
    const ids = ['OS-195002', 'UY-2025-48549', 'oshp.ohuy@example.com', 'MVA-2025-77762', 'kceaofyi.euq@example.org', 'xviegfuv.vdsuy@example.io', 'OR9A67'];
    const events = [
      'User: build again /tja/uvzk/hsg/qhcmqvon/cxuq/gascubbm.json about customer',
      `User: about deployment failed order check retry customer about ${ids[0]} refund order nightly deployment check retry the order`,
      `Tool [responses: lookup -> {"ref": "${ids[1]}", "note": "retry check deployment wrote build"}]`,
      `Assistant: order ${ids[2]} card about again refund nightly`,
      `Tool [responses: lookup -> {"ref": "${ids[3]}", "note": "retry please nightly"}]`,
      `User: build card card ${ids[4]} order the check card failed failed refund refund failed card`,
      `Tool [responses: lookup -> {"ref": "${ids[5]}", "note": "retry customer order nightly failed"}]`,
      `User: retry deployment check wrote card check again card deployment deployment ${ids[6]} again`,
    ];
    const req = summaryRequest(events, 101);
    const text = extractiveSummary(req, { estimator: cl100k });
    expect(text).toContain('\nArtefacts (identifiers, values, paths):\n');
    expect(lost(text, ids)).toBeLessThanOrEqual(0);
    expect(cost(req, text, cl100k)).toBeLessThanOrEqual(101);
  });

  it('a summary that fits its budget as it is, but shortens an identifier over 100 characters, is packed: the identifier listed whole or counted', () => {
    const path = `/srv/${'nested/'.repeat(14)}report-2024.json`;
    const ids = ['TCK-2024-00917', path];
    const req = summaryRequest([`User: ticket ${ids[0]} failed, see ${path} for the trace`, 'Assistant: I will look at it.', 'User: thanks'], 400);
    const text = extractiveSummary(req, { estimator: cl100k });
    expect(path.length).toBeGreaterThan(100);
    expect(text).not.toContain('characters omitted');
    expect(lost(text, ids)).toBeLessThanOrEqual(0);
    expect(cost(req, text, cl100k)).toBeLessThanOrEqual(400);
  });
});

describe('extractive summary: identifiers listed or counted (property)', () => {
  const upper = fc.stringMatching(/^[A-Z]{2,4}$/);
  const lower = fc.stringMatching(/^[a-z]{3,8}$/);
  const identifier = fc.oneof(
    fc.tuple(upper, fc.integer({ min: 100, max: 999_999 })).map(([a, n]) => `${a}-${n}`), // RF-55301
    fc.tuple(upper, fc.integer({ min: 2000, max: 2099 }), fc.integer({ min: 10_000, max: 99_999 })).map(([a, y, n]) => `${a}-${y}-${n}`), // TCK-2024-00917
    fc.stringMatching(/^[A-Z][A-Z0-9]{2,5}[0-9]$/), // ZQ7K2
    fc.tuple(lower, lower, fc.constantFrom('com', 'org', 'io')).map(([a, b, tld]) => `${a}.${b}@example.${tld}`), // e-mail
    // paths up to about 130 characters (over 100, the unbudgeted list shortens them)
    fc
      .tuple(fc.array(lower, { minLength: 1, maxLength: 14 }), lower, fc.constantFrom('log', 'ts', 'json'))
      .map(([dirs, f, ext]) => `/${dirs.join('/')}/${f}.${ext}`),
  );
  const WORDS = ['the', 'refund', 'ticket', 'failed', 'please', 'check', 'order', 'customer', 'wrote', 'again', 'about', 'card', 'retry', 'nightly', 'build'];
  const filler = fc.array(fc.constantFrom(...WORDS), { maxLength: 40 }).map((w) => w.join(' '));
  /** One archived event mentioning `id`, in one of the formatter's shapes. */
  const eventWith = (id: string) =>
    fc.tuple(fc.constantFrom('User', 'Assistant', 'Tool'), filler, filler).map(([role, before, after]) => {
      if (role === 'Tool') return `Tool [responses: lookup -> {"ref": "${id}", "note": "${before}"}]`;
      return `${role}: ${before} ${id} ${after}`.replace(/\s+/g, ' ');
    });
  // distinct ids, none inside another (a listed longer one would hold it, but its count would not)
  const noneInside = (xs: string[]) => xs.every((a) => xs.every((b) => a === b || !b.includes(a)));
  const ids = fc.uniqueArray(identifier, { minLength: 1, maxLength: 30 }).filter(noneInside);
  // user messages without identifiers: long enough to fill a tight budget before the identifiers
  const prose = fc.array(
    filler.map((f) => `User: ${f} ok`),
    { maxLength: 8 },
  );
  const scenario = ids.chain((xs) => fc.tuple(fc.constant(xs), fc.tuple(...xs.map(eventWith)), prose));

  it('for random identifiers and a budget of 1 to 400 tokens: each is in the summary or counted, within the budget when promised', () => {
    fc.assert(
      fc.property(scenario, fc.integer({ min: 1, max: 400 }), fc.boolean(), ([xs, mentions, talk], budget, talkFirst) => {
        const toSummarize = talkFirst ? [...talk, ...mentions] : [...mentions, ...talk];
        const req = summaryRequest(toSummarize, budget);
        const text = extractiveSummary(req, { estimator: cl100k });
        expect(lost(text, xs)).toBeLessThanOrEqual(0);
        if (promisedWithin(req, cl100k)) expect(cost(req, text, cl100k)).toBeLessThanOrEqual(budget);
      }),
      { numRuns: 400 },
    );
  });
});
