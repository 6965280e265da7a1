/**
 * The summary budget: how large a new summary may be (`summaryTokenBudget`), that the planner
 * asks for it, that the extractive summarizer keeps within it, and what the model is told.
 */
import fc from 'fast-check';
import {
  buildSummarizerMessages,
  completePlan,
  costEvents,
  eventCost,
  extractiveSummary,
  getEstimator,
  MIN_COMPACT_SUMMARY_TOKENS,
  minCompactSummaryUnits,
  parseStrategy,
  planCompaction,
  summaryLengthLimit,
  summaryBudgetUse,
  summaryTextBudget,
  summaryTokenBudget,
  type SessionEvent,
  type SummaryRequest,
} from '../src';
import { OMISSION_MARKER } from '../src/text';

const cl100k = getEstimator('cl100k_base');
const chars = getEstimator('chars');
const u = (id: string, text: string): SessionEvent => ({ id, type: 'user', text });
const a = (id: string, text: string): SessionEvent => ({ id, type: 'assistant', text });
const summaryCost = (request: SummaryRequest, text: string, estimator = cl100k) =>
  eventCost({ id: 'x', type: 'summary', shadowPrompt: request.shadowPrompt, text }, estimator);

/** `turns` turns of an order-desk conversation, with facts (order ids, paths, amounts) in every turn. */
function conversation(turns: number, from = 0): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let t = from; t < from + turns; t++) {
    events.push(u(`u${t}`, `Please check order number ORD${1000 + t} for customer C${t} at /srv/data/file${t}.json and update status`));
    events.push(a(`a${t}`, `Order ORD${1000 + t} updated; value ${t * 17} USD.`));
  }
  return events;
}

describe('summaryTokenBudget', () => {
  it('rolling-summary: half of summarizeAtTokens, whatever is replaced', () => {
    expect(summaryTokenBudget({ type: 'rolling-summary', summarizeAtTokens: 300 }, 10_000)).toBe(150);
    expect(summaryTokenBudget({ type: 'rolling-summary', summarizeAtTokens: 301 }, 5)).toBe(150);
    expect(summaryTokenBudget({ type: 'rolling-summary', summarizeAtTokens: 1 }, 5)).toBe(1);
  });

  it('recursive-summarization: what the summary replaces (at least 1)', () => {
    expect(summaryTokenBudget({ type: 'recursive-summarization' }, 812)).toBe(812);
    expect(summaryTokenBudget({ type: 'recursive-summarization' }, 0)).toBe(1);
  });

  it('the planner puts it in the summary request: rolling-summary half the threshold, recursive the archived real events and old summaries, never a superseded system message', () => {
    const events = [
      { id: 's0', type: 'system', text: 'old instructions' } as SessionEvent,
      { id: 's1', type: 'system', text: 'instructions' } as SessionEvent,
      { id: 'sum', type: 'summary', shadowPrompt: 'So far?', text: 'earlier things' } as SessionEvent,
      ...conversation(6),
    ];
    const costed = costEvents(events, cl100k);
    const rolling = planCompaction(costed, parseStrategy({ type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 100 }));
    expect(rolling.summaryRequest?.maxSummaryTokens).toBe(50);
    const recursive = planCompaction(costed, parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 }));
    const cost = (id: string) => costed.find((c) => c.event.id === id)!.tokens;
    const replaced = ['sum', 'u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3'].reduce((s, id) => s + cost(id), 0);
    expect(recursive.archivedIds).toEqual(['s0', 'sum', 'u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3']);
    expect(recursive.summaryRequest?.maxSummaryTokens).toBe(replaced);
  });
});

describe('extractiveSummary within the budget', () => {
  const request = (budget: number | undefined, previous: string[] = []): SummaryRequest => ({
    systemPrompt: 'S',
    shadowPrompt: 'Summarize the conversation we had so far.',
    currentSummaries: previous,
    toSummarize: conversation(12).map((e) => (e.type === 'user' ? `User: ${e.text}` : `Assistant: ${(e as { text: string }).text}`)),
    overlap: [],
    coveredIds: [],
    ...(budget === undefined ? {} : { maxSummaryTokens: budget }),
  });

  it('without a budget or an estimator, the summary is the unbudgeted one', () => {
    const unbudgeted = extractiveSummary(request(undefined));
    expect(extractiveSummary(request(undefined), { estimator: cl100k })).toBe(unbudgeted);
    expect(extractiveSummary(request(50))).toBe(unbudgeted);
  });

  it.each([60, 100, 150, 250, 400])(
    'costs at most a budget of %i cl100k tokens, deterministically, and keeps the newest user message (or its end)',
    (budget) => {
      const req = request(budget, ['[Extractive summary (extractive-v1, no model) of 9 earlier events]\nUser messages (oldest first):\n- find ORD0042']);
      const text = extractiveSummary(req, { estimator: cl100k });
      expect(summaryCost(req, text)).toBeLessThanOrEqual(budget);
      expect(summaryCost(req, extractiveSummary(request(undefined), { estimator: cl100k }))).toBeGreaterThan(400);
      expect(extractiveSummary(req, { estimator: cl100k })).toBe(text);
      expect(text).toMatch(/update status|ORD1011/);
    },
  );

  it('a roomy budget keeps the sections and every user message', () => {
    const req = request(300);
    const text = extractiveSummary(req, { estimator: cl100k });
    expect(text).toMatch(/^\[Extractive summary/);
    expect(text).toContain('User messages (oldest first):');
    expect(text).toContain('ORD1011');
    expect(summaryCost(req, text)).toBeLessThanOrEqual(300);
  });

  it('in chars: the budget is in UTF-16 code units', () => {
    const req = request(700);
    const text = extractiveSummary(req, { estimator: chars });
    expect(summaryCost(req, text, chars)).toBeLessThanOrEqual(700);
    expect(summaryCost(req, text, chars)).toBeGreaterThan(500);
  });

  it('a budget under the shadow prompt line still gives a summary that says something (MIN_COMPACT_SUMMARY_TOKENS of text, the markers not counted), over its budget', () => {
    const req = request(5);
    const text = extractiveSummary(req, { estimator: cl100k });
    expect(text.trim()).not.toBe('');
    // the omission marker and the count of identifiers left out (`(+N more)`) are no content
    expect(text).toMatch(/\nIdentifiers: .*\(\+\d+ more\)$/);
    expect(cl100k.count(text.replace(OMISSION_MARKER, '').replace(/ ?\(\+\d+ more\)$/, ''))).toBeLessThanOrEqual(MIN_COMPACT_SUMMARY_TOKENS + 2);
    expect(text).toContain('ORD1000');
    expect(text).toContain('USD.');
  });

  it('a small recursive pass (newcomer: 27 → 96 tokens) costs the archived lines and the shadow prompt, no sections', () => {
    const events: SessionEvent[] = [
      { id: 's', type: 'system', text: 'Be brief.' },
      u('u1', 'hi'),
      a('a1', 'hello'),
      u('u2', 'book 12'),
      a('a2', 'booked 12'),
      u('u3', 'thanks'),
      a('a3', 'bye'),
    ];
    const plan = planCompaction(costEvents(events, cl100k), parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 }));
    const text = extractiveSummary(plan.summaryRequest!, { estimator: cl100k });
    expect(text).toBe('User: hi\nAssistant: hello\nUser: book 12\nAssistant: booked 12');
    const result = completePlan(plan, { reply: { text }, summaryId: 'S', estimator: cl100k });
    expect(result.outcome).toBe('compacted');
    expect(result.tokensEstimatedSaved).toBe(0);
    expect(result.tokensAfter - result.tokensBefore).toBeLessThanOrEqual(cl100k.count(`User: ${plan.summaryRequest!.shadowPrompt}`) + 6);
  });

  it('rolling-summary over 80 turns: the summary stays within half the threshold, so passes come every few turns', () => {
    const strategy = parseStrategy({ type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 300 });
    let window: SessionEvent[] = [];
    let passes = 0;
    for (let t = 0; t < 80; t++) {
      window.push(...conversation(1, t));
      const plan = planCompaction(costEvents(window, cl100k), strategy);
      if (!plan.summaryRequest) continue;
      passes++;
      const text = extractiveSummary(plan.summaryRequest, { estimator: cl100k });
      expect(summaryCost(plan.summaryRequest, text)).toBeLessThanOrEqual(150);
      const result = completePlan(plan, { reply: { text }, summaryId: `sum${t}`, estimator: cl100k });
      const byId = new Map(window.map((e) => [e.id, e]));
      byId.set(result.summary!.id, { id: result.summary!.id, type: 'summary', shadowPrompt: result.summary!.shadowPrompt, text });
      window = result.keptIds.map((id) => byId.get(id)!);
    }
    expect(passes).toBeGreaterThan(5);
    expect(passes).toBeLessThanOrEqual(20); // before the budget: 70
  });
});

describe('what a model is told', () => {
  const req: SummaryRequest = {
    systemPrompt: 'S',
    shadowPrompt: 'So far?',
    currentSummaries: [],
    toSummarize: ['User: x'],
    overlap: [],
    coveredIds: [],
    maxSummaryTokens: 200,
  };

  it('the text budget is the budget less the shadow prompt line and the Assistant prefix; tokens, or characters for chars', () => {
    const text = summaryTextBudget(req, cl100k)!;
    expect(text).toBe(200 - cl100k.count('User: So far?') - cl100k.count('Assistant: '));
    expect(summaryLengthLimit(req, cl100k)).toEqual({ max: text, unit: 'tokens' });
    expect(summaryLengthLimit(req, chars)).toEqual({ max: 200 - 'User: So far?'.length - 'Assistant: '.length, unit: 'characters' });
    expect(summaryLengthLimit({ ...req, maxSummaryTokens: 3 }, cl100k)).toEqual({ max: 32, unit: 'tokens' });
    expect(summaryLengthLimit({ ...req, maxSummaryTokens: undefined }, cl100k)).toBeUndefined();
  });

  it('the user message ends with the length when one is given, and is unchanged without', () => {
    expect(buildSummarizerMessages(req).user).not.toMatch(/Length/);
    const user = buildSummarizerMessages(req, { lengthLimit: { max: 123, unit: 'tokens' } }).user;
    expect(user.startsWith(buildSummarizerMessages(req).user)).toBe(true);
    expect(user).toMatch(/## Length: write at most about 123 tokens, and no more than the conversation above/);
  });
});

describe('the compact form (a pass too small for its sections) keeps archived content whatever the estimator', () => {
  const estimators = [getEstimator('chars'), getEstimator('cl100k_base'), getEstimator('o200k_base')];
  const booking: SessionEvent[] = [
    u('u1', 'My booking code is QX7P2Z, change it to Friday'),
    a('a1', 'Done, moved to Friday.'),
    u('u2', 'thanks'),
    a('a2', 'welcome'),
  ];
  const strategy = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 });

  it.each(estimators.map((e) => [e.name, e] as const))(
    "given the newcomer's small recursive pass, when summarized with %s, then the archived lines are kept as they are",
    (_name, estimator) => {
      const plan = planCompaction(costEvents(booking, estimator), strategy);
      const text = extractiveSummary(plan.summaryRequest!, { estimator });
      // before: with chars the summary was "[… 85 characters omitted …] ." and the booking code was lost
      expect(text).toBe('User: My booking code is QX7P2Z, change it to Friday\nAssistant: Done, moved to Friday.');
    },
  );

  const longPass = (): SummaryRequest => ({
    systemPrompt: 'S',
    shadowPrompt: 'Summarize the conversation we had so far.',
    currentSummaries: [],
    toSummarize: [
      `User: ${'please look into the delay of my trip again '.repeat(6)}`,
      `Assistant: ${'checking the itinerary and the carrier notes '.repeat(4)}booking QX7P2Z found ${'with several legs and notes '.repeat(6)}`,
      `User: ${'and then move everything to the next week '.repeat(6)}`,
    ],
    overlap: [],
    coveredIds: [],
    maxSummaryTokens: 1,
  });

  it('the floor is 32 tokens for a tokenizer, four times as many code units for chars', () => {
    expect(estimators.map(minCompactSummaryUnits)).toEqual([128, 32, 32]);
  });

  it.each(estimators.map((e) => [e.name, e] as const))(
    'given a budget that leaves nothing for the text, when summarized with %s, then the floor of archived content stays (the marker not counted), the identifier the cut left out listed',
    (_name, estimator) => {
      const text = extractiveSummary(longPass(), { estimator });
      const content = estimator.count(text.replace(OMISSION_MARKER, ''));
      expect(content).toBeGreaterThanOrEqual(minCompactSummaryUnits(estimator) * 0.75);
      expect(content).toBeLessThanOrEqual(minCompactSummaryUnits(estimator) + 2);
      expect(text).toMatch(/^User: please look into/);
      expect(text).toMatch(/ characters omitted …\] [\s\S]*next week\nIdentifiers: QX7P2Z$/);
    },
  );

  it.each(estimators.map((e) => [e.name, e] as const))(
    'given emoji and ideographs (several tokens a character), when summarized with %s under a tiny budget, then the summary still holds archived text beyond the marker',
    (_name, estimator) => {
      const req: SummaryRequest = { ...longPass(), toSummarize: [`User: ${'🙂🎉 出発は金曜日 '.repeat(60)}`, `Assistant: ${'了解 🚆 '.repeat(60)}`] };
      const content = extractiveSummary(req, { estimator }).replace(OMISSION_MARKER, '');
      expect(content).toMatch(/^User: 🙂🎉 出発/);
      expect(estimator.count(content)).toBeGreaterThanOrEqual(minCompactSummaryUnits(estimator) * 0.75);
    },
  );

  /** Code units of the words (letters, digits) of `summary` that are words of `archived`, its header and omission markers left out. */
  const archivedWordChars = (summary: string, archived: string): number => {
    const words = new Set(archived.match(/[\p{L}\p{N}_]+/gu) ?? []);
    const body = summary.replace(/^\[Extractive summary[^\n]*\]/, '').replace(OMISSION_MARKER, ' ');
    return (body.match(/[\p{L}\p{N}_]+/gu) ?? []).filter((w) => words.has(w)).reduce((n, w) => n + w.length, 0);
  };

  /**
   * Code units of the whitespace-separated words of `summary` (a list's comma dropped) found in `archived` (its `User: `/`Assistant: `
   * prefixes left out), its header and omission markers left out: the property's measure, whose words are the generator's
   * (`{"k":1}`, `/srv/a/b`, `🙂` are words there: a text of them holds few letters and digits for its tokens).
   */
  const archivedTextChars = (summary: string, archived: string): number => {
    const text = archived.replace(/^(User|Assistant): /gm, '');
    const body = summary.replace(/^\[Extractive summary[^\n]*\]/, '').replace(OMISSION_MARKER, ' ');
    return body
      .split(/\s+/)
      .map((w) => w.replace(/,$/, ''))
      .filter((w) => w !== '' && text.includes(w))
      .reduce((n, w) => n + w.length, 0);
  };

  // CI counterexample of the property below (seed -1336958483): the cut kept 9 code units of words
  it('given a short token-dense pass just over the floor, when summarized with cl100k_base under a budget of 1, then most of its words stay', () => {
    const toSummarize = ['User: 0a0aA0A0a', 'User: 0A0 🙂 aeaA0 0a0A0 A 出発 A {"k":1}'];
    const req: SummaryRequest = { ...longPass(), toSummarize, currentSummaries: [], overlap: [], maxSummaryTokens: 1 };
    const archived = toSummarize.join('\n');
    expect(archivedWordChars(extractiveSummary(req, { estimator: cl100k }), archived)).toBeGreaterThanOrEqual(16);
  });

  // counterexamples of the property below on the packed path (seeds 96249508, 1320494574): the newest
  // event was left out whole while ~22 tokens of the budget stayed unused (the room reserved for
  // "(+N more)" lines), so only the header and a few artefacts remained
  it.each([
    ['cl100k_base', ['Assistant: a0a', 'Assistant: /srv/a/b A0a 出発'], 71],
    ['o200k_base', ['Assistant: 0A 🙂 /srv/a/b {"k":1} {"k":1} /srv/a/b 🙂 🙂 🙂'], 67],
  ] as const)(
    'given a budget a few tokens short of the full summary (%s), when packed, then the newest event stays, shortened, within the budget',
    (name, toSummarize, budget) => {
      const estimator = getEstimator(name);
      const req: SummaryRequest = { ...longPass(), shadowPrompt: 'So far?', toSummarize: [...toSummarize], maxSummaryTokens: budget };
      const summary = extractiveSummary(req, { estimator });
      expect(eventCost({ id: 's', type: 'summary', shadowPrompt: 'So far?', text: summary }, estimator)).toBeLessThanOrEqual(budget);
      expect(summary).toMatch(/Last events before the cut:\n(- .*\n)*- Assistant: \S+ .*…$/);
      expect(archivedWordChars(summary, toSummarize.join('\n'))).toBeGreaterThanOrEqual(16);
    },
  );

  it('property: for every estimator and budget, a non-empty archived text yields a summary holding some of its words beyond the marker', () => {
    const word = fc.oneof(fc.stringMatching(/^[A-Za-z0-9]{1,14}$/), fc.constantFrom('🙂', '出発', 'é', '—', '{"k":1}', '/srv/a/b'));
    const line = fc
      .tuple(fc.constantFrom('User: ', 'Assistant: '), fc.array(word, { minLength: 1, maxLength: 80 }))
      .map(([role, ws]) => `${role}${ws.join(' ')}`);
    fc.assert(
      fc.property(
        fc.constantFrom(...estimators),
        fc.array(line, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 400 }),
        (estimator, toSummarize, budget) => {
          const req: SummaryRequest = {
            systemPrompt: 'S',
            shadowPrompt: 'So far?',
            currentSummaries: [],
            toSummarize,
            overlap: [],
            coveredIds: [],
            maxSummaryTokens: budget,
          };
          const archived = toSummarize.join('\n');
          const summary = extractiveSummary(req, { estimator });
          const content = archived.replace(/^(User|Assistant): /gm, '');
          // At least 16 code units (or all there are) of its letters and digits, or of its words as they are: a text of
          // token-dense words (`{"k":1}` repeated, seed -471125969) keeps few letters and digits in its 32 tokens, and
          // the sections write a word differently (`{"k":1}` as an artefact `k: 1`).
          const lettersAndDigits = archivedWordChars(summary, archived) >= Math.min(16, (content.match(/[\p{L}\p{N}_]+/gu) ?? []).join('').length);
          const words = archivedTextChars(summary, archived) >= Math.min(16, content.replace(/\s+/g, '').length);
          expect({ summary, held: lettersAndDigits || words }).toEqual({ summary, held: true });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a summary against its budget (ncsummarizer A2)', () => {
  const plan = () => planCompaction(costEvents(conversation(6), cl100k), parseStrategy({ type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 100 }));

  it('a summary over its budget is kept whole, and the result says the budget, its cost, that it exceeded it and that it was kept', () => {
    const p = plan();
    expect(p.summaryRequest?.maxSummaryTokens).toBe(50);
    const text = 'an over-long recap '.repeat(40).trim();
    const result = completePlan(p, { reply: { text }, summaryId: 'S', estimator: cl100k });
    expect(result.summary?.text).toBe(text);
    expect(result.summaryBudget).toEqual({ tokens: 50, summaryTokens: result.summary!.tokens, exceeded: true, overBudget: 'kept' });
    expect(result.summary!.tokens).toBeGreaterThan(50);
  });

  it('a summary within its budget says so; a failed pass and a plan without a summary carry none', () => {
    const p = plan();
    const result = completePlan(p, { reply: { text: 'short recap' }, summaryId: 'S', estimator: cl100k });
    expect(result.summaryBudget).toEqual({ tokens: 50, summaryTokens: result.summary!.tokens, exceeded: false, overBudget: null });
    expect(completePlan(p, { reply: { failure: 'HTTP 500' }, summaryId: 'S', estimator: cl100k }).summaryBudget).toBeUndefined();
    const window = planCompaction(costEvents(conversation(6), cl100k), parseStrategy({ type: 'sliding-window', maxEvents: 4 }));
    expect(completePlan(window, { estimator: cl100k }).summaryBudget).toBeUndefined();
  });

  it('exceeded exactly when the cost is over the floored budget; kept then, null otherwise; no budget, no record (property)', () => {
    fc.assert(
      fc.property(fc.option(fc.double({ min: 0, max: 1e7, noNaN: true }), { nil: undefined }), fc.nat(2e7), (budget, cost) => {
        const use = summaryBudgetUse(budget, cost);
        if (budget === undefined) return expect(use).toBeUndefined();
        expect(use).toEqual({
          tokens: Math.floor(budget),
          summaryTokens: cost,
          exceeded: cost > Math.floor(budget),
          overBudget: cost > Math.floor(budget) ? 'kept' : null,
        });
      }),
    );
    expect(summaryBudgetUse(Infinity, 5)).toBeUndefined();
  });
});
