/**
 * Planner edge cases (DESIGN §3.3, §3.6, §3.7) and the summarizer-side helpers: messages,
 * bounded input chunks, the extractive summarizer, middle truncation, turn helpers.
 */
import fc from 'fast-check';
import {
  buildSummarizerMessages,
  completePlan,
  costEvents,
  countTurns,
  defaultSummaryReserve,
  DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
  EXTRACTIVE_SUMMARIZER_MODEL,
  extractiveSummary,
  getEstimator,
  groupTurns,
  InvalidParameterError,
  planCompaction,
  planSummaryChunks,
  summarizerInputCost,
  SUMMARIZER_SECTION,
  summaryLengthSection,
  truncateMiddle,
  type SessionEvent,
  type SummaryRequest,
  type TokenEstimator,
} from '../src';

const chars = getEstimator('chars');
/** The omission marker a middle cut puts in a text (its spaces either side included). */
const OMISSION_MARKER = / ?\[… \d+ characters omitted …\] ?/g;
const u = (id: string, text = id): SessionEvent => ({ id, type: 'user', text });
const a = (id: string, text = id): SessionEvent => ({ id, type: 'assistant', text });
const call = (id: string, callId: string): SessionEvent => ({ id, type: 'assistant', text: null, toolCalls: [{ id: callId, name: 'f', arguments: '{}' }] });
const resp = (id: string, callId: string): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'f', data: 'ok' }] });
const plan = (events: SessionEvent[], strategy: Parameters<typeof planCompaction>[1]) => planCompaction(costEvents(events, chars), strategy);

describe('planner: tool safety and turns (DESIGN §3.3)', () => {
  it('an open call followed by a user event is abandoned: it is archived with its turn', () => {
    const events = [u('u1'), call('c1', 'x'), a('a1'), u('u2'), a('a2'), u('u3'), a('a3')];
    expect(plan(events, { type: 'sliding-window', maxEvents: 2 }).archivedIds).toEqual(['u1', 'c1', 'a1', 'u2', 'a2']);
  });

  it('an open call of the newest turn is not abandoned: the newest turn is kept, the noop says why', () => {
    const p = plan([u('u1'), call('c1', 'x'), a('a1')], { type: 'sliding-window', maxEvents: 1 });
    expect(p.outcome).toBe('noop');
    expect(p.noop).toEqual({ reason: 'newest-turn-only' });
  });

  it('a noop names its reason: within-limit, newest-turn-only, open-tool-call (call id and event)', () => {
    expect(plan([u('u1'), a('a1')], { type: 'sliding-window', maxEvents: 5 }).noop).toEqual({ reason: 'within-limit' });
    expect(plan([u('u1'), a('a1'), a('a2')], { type: 'sliding-window', maxEvents: 1 }).noop).toEqual({ reason: 'newest-turn-only' });
    // t1 (kept, in the newest turn) answers x, whose call c1 is in the turn being archived
    const late = [u('u1'), call('c1', 'x'), u('u2'), resp('t1', 'x'), a('a2')];
    expect(plan(late, { type: 'sliding-window', maxEvents: 2 }).noop).toEqual({ reason: 'open-tool-call', toolCallId: 'x', eventId: 'c1' });
    expect(plan([u('u1'), a('a1'), u('u2')], { type: 'turn-window', maxTurns: 1 }).noop).toBeUndefined();
  });

  it('given a preamble call answered in turn 1 and room for everything, when token-count plans, then the noop is open-tool-call (ncconf67 F1)', () => {
    // §3.4: no "everything fits" shortcut, so the preamble is a candidate; only tool safety keeps it.
    const events = [call('c0', 'p'), u('u1'), resp('r0', 'p'), a('a1')];
    const blocked = { reason: 'open-tool-call', toolCallId: 'p', eventId: 'c0' };
    expect(plan(events, { type: 'token-count', maxTokens: 1000 }).noop).toEqual(blocked);
    expect(plan(events, { type: 'token-count', maxTokens: 20 }).noop).toEqual(blocked);
    expect(plan(events, { type: 'sliding-window', maxEvents: 3 }).noop).toEqual(blocked);
    // Without the call the preamble is archived; without a preamble everything fits.
    expect(plan([a('g0'), u('u1'), a('a1')], { type: 'token-count', maxTokens: 1000 }).archivedIds).toEqual(['g0']);
    expect(plan([u('u1'), resp('r0', 'p'), a('a1')], { type: 'token-count', maxTokens: 1000 }).noop).toEqual({ reason: 'within-limit' });
  });

  it('turn-window: a preamble call answered inside an archived turn keeps its answer in place', () => {
    const events = [call('c0', 'p'), u('u1'), resp('r0', 'p'), a('a1'), u('u2'), a('a2')];
    const p = plan(events, { type: 'turn-window', maxTurns: 1 });
    expect(p.archivedIds).toEqual(['u1', 'a1']);
    expect(p.keptIds).toEqual(['c0', 'r0', 'u2', 'a2']);
  });

  it('turn-window: a kept answer that also answers an archived call moves the cut back', () => {
    const both: SessionEvent = {
      id: 'r',
      type: 'tool',
      responses: [
        { toolCallId: 'p', name: 'f', data: '1' },
        { toolCallId: 'k', name: 'f', data: '2' },
      ],
    };
    const events = [call('c0', 'p'), u('u1'), call('c1', 'k'), both, u('u2'), a('a2')];
    const p = plan(events, { type: 'turn-window', maxTurns: 1 });
    expect(p.archivedIds).toEqual([]);
    expect(p.noop).toEqual({ reason: 'open-tool-call', toolCallId: 'k', eventId: 'c1' });
  });

  it('a response kept in a later turn keeps its call: the cut moves back, repeatedly', () => {
    const events = [u('u1'), call('c1', 'x'), u('u2'), call('c2', 'y'), resp('t1', 'x'), u('u3'), resp('t2', 'y'), u('u4'), a('a4')];
    // sliding-window 2 → raw cut at u4; t2 is before it, so the cut is at u4: archived up to u4 is safe
    expect(plan(events, { type: 'sliding-window', maxEvents: 2 }).archivedIds).toEqual(['u1', 'c1', 'u2', 'c2', 't1', 'u3', 't2']);
    // sliding-window 4 → cut at u3, whose t2 answers c2 (turn u2), whose turn holds t1 answering c1 (turn u1): no cut
    expect(plan(events, { type: 'sliding-window', maxEvents: 4 }).archivedIds).toEqual([]);
  });

  it('a reused call id: a response answers the most recent earlier call with that id', () => {
    // Agents reuse a call id once it is answered (seen in real tau-bench sessions). t2 answers c2,
    // not c1, so archiving the first turn (c1 answered by t1) is safe.
    const events = [u('u1'), call('c1', 'x'), resp('t1', 'x'), a('a1'), u('u2'), call('c2', 'x'), resp('t2', 'x'), a('a2'), u('u3'), a('a3')];
    expect(plan(events, { type: 'sliding-window', maxEvents: 6 }).archivedIds).toEqual(['u1', 'c1', 't1', 'a1']);
    // c2 reusing the id while still open, in the newest turn: protected; the answered first one is not.
    const open = [u('u1'), call('c1', 'x'), resp('t1', 'x'), a('a1'), u('u2'), call('c2', 'x'), a('a2')];
    expect(plan(open, { type: 'sliding-window', maxEvents: 2 }).archivedIds).toEqual(['u1', 'c1', 't1', 'a1']);
  });

  it('token-count archives a leading preamble even when everything fits', () => {
    const events = [a('boot'), u('u1'), a('a1')];
    expect(plan(events, { type: 'token-count', maxTokens: 10_000 }).archivedIds).toEqual(['boot']);
  });

  it('turn-window keeps the preamble and archives whole turns', () => {
    const events = [a('boot'), u('u1'), a('a1'), u('u2'), a('a2'), u('u3')];
    const p = plan(events, { type: 'turn-window', maxTurns: 1 });
    expect(p.archivedIds).toEqual(['u1', 'a1', 'u2', 'a2']);
    expect(p.keptIds).toEqual(['boot', 'u3']);
  });

  it('no user event: nothing is archived but superseded system messages', () => {
    const events: SessionEvent[] = [{ id: 's1', type: 'system', text: 'a' }, a('a1'), a('a2'), { id: 's2', type: 'system', text: 'b' }, a('a3')];
    for (const strategy of [
      { type: 'sliding-window' as const, maxEvents: 1 },
      { type: 'token-count' as const, maxTokens: 1 },
      { type: 'turn-window' as const, maxTurns: 1 },
    ]) {
      expect(plan(events, strategy).archivedIds).toEqual(['s1']);
    }
  });

  it('rolling-summary: nothing changes below the threshold but superseded systems; over it, one request', () => {
    const events: SessionEvent[] = [
      { id: 's1', type: 'system', text: 'a' },
      u('u1'),
      a('a1'),
      { id: 's2', type: 'system', text: 'b' },
      u('u2'),
      a('a2'),
      u('u3'),
    ];
    const strategy = { type: 'rolling-summary' as const, keepTurns: 2, summarizeAtTokens: 100, shadowPrompt: 'S?', systemPrompt: 'P' };
    const below = plan(events, strategy);
    expect(below.archivedIds).toEqual(['s1']);
    expect(below.summaryRequest).toBeUndefined();
    const over = plan(events, { ...strategy, summarizeAtTokens: 20 }); // older = "User: u1" 8 + "Assistant: a1" 13 = 21 > 20
    expect(over.summaryRequest?.toSummarize).toEqual(['User: u1', 'Assistant: a1']);
    expect(over.summaryRequest?.overlap).toEqual([]);
    expect(over.summaryInsertBeforeId).toBe('u2');
  });
});

describe('completePlan (DESIGN §3.6, §3.7)', () => {
  const events: SessionEvent[] = [{ id: 'old', type: 'summary', shadowPrompt: 'S?', text: 'before' }, u('u1'), a('a1'), u('u2'), a('a2')];
  const strategy = { type: 'recursive-summarization' as const, maxEventsToKeep: 2, overlapSize: 1, shadowPrompt: 'S?', systemPrompt: 'P' };

  it('throws a clear error without reply or summaryId', () => {
    const p = plan(events, strategy);
    expect(() => completePlan(p, { estimator: chars, summaryId: 'n' })).toThrow(/reply/);
    expect(() => completePlan(p, { estimator: chars, reply: { text: 'x' } })).toThrow(/summaryId/);
    expect(() => completePlan(p, { estimator: chars, reply: { text: 'x' }, summaryId: 'u2' })).toThrow(/already/);
  });

  it('inserts the summary and computes the figures', () => {
    const p = plan(events, strategy);
    const r = completePlan(p, { estimator: chars, reply: { text: 'new' }, summaryId: 'n' });
    expect(r.keptIds).toEqual(['n', 'u2', 'a2']);
    expect(r.archivedIds).toEqual(['old', 'u1', 'a1']);
    // archived: "User: S?" 8 + "Assistant: before" 17 + 8 + 13 = 46; new: 8 + "Assistant: new" 14 = 22
    expect(r.summary).toEqual({ id: 'n', shadowPrompt: 'S?', text: 'new', insertBeforeId: 'u2', coveredIds: ['old', 'u1', 'a1'], tokens: 22 });
    expect(r.tokensEstimatedSaved).toBe(24);
    expect(r.tokensBefore).toBe(46 + 8 + 13);
    expect(r.tokensAfter).toBe(22 + 8 + 13);
  });

  it('floors the saving at 0 when the summary is longer than what it replaces', () => {
    const r = completePlan(plan(events, strategy), { estimator: chars, reply: { text: 'x'.repeat(500) }, summaryId: 'n' });
    expect(r.tokensEstimatedSaved).toBe(0);
  });
});

describe('buildSummarizerMessages', () => {
  const request: SummaryRequest = {
    systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
    shadowPrompt: 'S?',
    currentSummaries: ['PREV'],
    toSummarize: ['User: one', 'Assistant: two'],
    overlap: ['User: three'],
    coveredIds: [],
  };
  it('sends the previous summary, the events in order and the overlap marked as context', () => {
    const m = buildSummarizerMessages(request);
    expect(m.system).toBe(DEFAULT_SUMMARIZER_SYSTEM_PROMPT);
    const order = ['PREV', 'User: one', 'Assistant: two', SUMMARIZER_SECTION.context, 'User: three'].map((s) => m.user.indexOf(s));
    expect(order.every((p, i) => p >= 0 && (i === 0 || p > order[i - 1]))).toBe(true);
    expect(SUMMARIZER_SECTION.context).toMatch(/do not summarize/i);
  });
  it('omits empty sections', () => {
    const m = buildSummarizerMessages({ ...request, currentSummaries: [], overlap: [] });
    expect(m.user).not.toContain(SUMMARIZER_SECTION.previousSummary);
    expect(m.user).not.toContain(SUMMARIZER_SECTION.context);
  });
  it('a call holding only (parts of) a previous summary has no empty conversation section (newcomer ncsumm62 F4)', () => {
    const m = buildSummarizerMessages({ ...request, toSummarize: [], overlap: [] }, { lengthLimit: { max: 100, unit: 'tokens' } });
    expect(m.user).toContain(SUMMARIZER_SECTION.previousSummary);
    expect(m.user).toContain('PREV');
    expect(m.user).not.toContain(SUMMARIZER_SECTION.toSummarize);
    // its length instruction speaks of the summary it replaces, not of a conversation it does not hold (newcomer ncrecheck63 F6)
    expect(m.user).toMatch(/no more than the summary above, which the recap replaces/);
    expect(m.user).not.toMatch(/conversation above/);
    expect(buildSummarizerMessages(request, { lengthLimit: { max: 100, unit: 'tokens' } }).user).toMatch(/no more than the conversation above/);
    // the section a caller reserves room for (the default wording) is the longer one
    const limit = { max: 100, unit: 'tokens' } as const;
    expect(summaryLengthSection(limit).length).toBeGreaterThan(summaryLengthSection(limit, 'summary').length);
    // nothing at all keeps the section (the cost of an empty call, which the chunk planner starts from)
    expect(buildSummarizerMessages({ ...request, currentSummaries: [], toSummarize: [], overlap: [] }).user).toContain(SUMMARIZER_SECTION.toSummarize);
  });
  it('the default prompt asks for the recap of DESIGN §3.7', () => {
    for (const word of [
      "user's goal",
      'key concepts',
      'paths',
      'identifiers',
      'errors',
      'decisions',
      'every user message',
      'open tasks',
      'work in progress',
      'next step',
      'merge',
    ]) {
      expect(DEFAULT_SUMMARIZER_SYSTEM_PROMPT.toLowerCase()).toContain(word);
    }
  });
});

/** A leading part marker of planSummaryChunks. */
const PART = /^\[part (\d+)\/(\d+) of one event\] /;
/** A leading part marker of a previous summary split by planSummaryChunks. */
const SUMMARY_PART = /^\[part (\d+)\/(\d+) of one previous summary\] /;

/**
 * The texts of a chunked `toSummarize` (or, with `of: 'previous summary'`, `currentSummaries`):
 * consecutive parts `[part 1/n …]` … `[part n/n …]` put back together.
 */
function rejoinParts(texts: readonly string[], of: 'event' | 'previous summary' = 'event'): string[] {
  const marker = of === 'event' ? PART : SUMMARY_PART;
  const out: string[] = [];
  for (let i = 0; i < texts.length; i++) {
    const m = marker.exec(texts[i]);
    if (!m) {
      out.push(texts[i]);
      continue;
    }
    const n = Number(m[2]);
    expect(Number(m[1])).toBe(1);
    let whole = '';
    for (let k = 1; k <= n; k++, i++) {
      expect(texts[i].startsWith(`[part ${k}/${n} of one ${of}] `)).toBe(true);
      whole += texts[i].replace(marker, '');
    }
    i--;
    out.push(whole);
  }
  return out;
}

describe('planSummaryChunks (DESIGN §3.7)', () => {
  const base: SummaryRequest = { systemPrompt: 'Summarize.', shadowPrompt: 'S?', currentSummaries: [], toSummarize: [], overlap: [], coveredIds: ['x'] };

  it('returns the request itself when it fits', () => {
    const r = { ...base, toSummarize: ['User: hi'] };
    expect(planSummaryChunks(r, 10_000, chars)).toEqual([r]);
  });

  it('rejects a budget too small for the prompt', () => {
    expect(() => planSummaryChunks({ ...base, toSummarize: ['User: ' + 'x'.repeat(100)] }, 20, chars)).toThrow(/maxInputTokens/);
  });

  const check = (request: SummaryRequest, max: number, estimator: TokenEstimator) => {
    const chunks = planSummaryChunks(request, max, estimator);
    if (summarizerInputCost(request, estimator) <= max) {
      expect(chunks).toEqual([request]);
      return;
    }
    expect(chunks.length).toBeGreaterThan(0);
    chunks.forEach((c, i) => {
      // every chunk fits, leaving room for the running summary in chunks 2…
      expect(summarizerInputCost(c, estimator)).toBeLessThanOrEqual(max);
      // the previous summaries come before every archived event: none after a chunk with events
      if (i > 0 && chunks[i - 1].toSummarize.length > 0) expect(c.currentSummaries).toEqual([]);
      if (i < chunks.length - 1) expect(c.overlap).toEqual([]);
      expect(c.coveredIds).toEqual(request.coveredIds);
    });
    // every event and every previous summary is there, in order, whole: an oversize one in consecutive marked parts
    expect(rejoinParts(chunks.flatMap((c) => c.toSummarize))).toEqual(request.toSummarize);
    expect(
      rejoinParts(
        chunks.flatMap((c) => c.currentSummaries),
        'previous summary',
      ),
    ).toEqual(request.currentSummaries);
    for (const c of chunks) for (const t of [...c.currentSummaries, ...c.toSummarize]) expect(t).not.toContain('characters omitted');
    // the overlap: its first texts, each whole or cut keeping at least what the marker costs (never the marker alone)
    const sent = chunks[chunks.length - 1].overlap;
    expect(sent.length).toBeLessThanOrEqual(request.overlap.length);
    sent.forEach((t, i) => {
      if (t === request.overlap[i]) return;
      expect(t).toContain('characters omitted');
      expect(estimator.count(t.replace(OMISSION_MARKER, ''))).toBeGreaterThanOrEqual(estimator.count(' [… 99999 characters omitted …] '));
    });
  };

  it('sends useful context at a small bound: the first overlap events, each whole or with a useful part, never the omission marker alone (newcomers ncllm65 F2, ncdesign65 F2)', () => {
    const cl100k = getEstimator('cl100k_base');
    const toSummarize = Array.from({ length: 30 }, (_, i) => `User: user message number ${i} FACT${i} lorem ipsum dolor sit amet, consectetur adipiscing elit`);
    const overlap = ['User: User message 5: please look up reservation RES1005 for passenger Pat5.', 'Assistant: [tool call lookup {"id":"RES1005"}]'];
    for (const max of [150, 200, 300, 574, 700]) {
      let chunks: SummaryRequest[];
      try {
        chunks = planSummaryChunks({ ...base, toSummarize, overlap }, max, cl100k);
      } catch (e) {
        if (e instanceof InvalidParameterError) continue;
        throw e;
      }
      const sent = chunks[chunks.length - 1].overlap;
      for (const t of sent) expect(t.replace(OMISSION_MARKER, '').length).toBeGreaterThanOrEqual(30);
      if (max >= 300) expect(sent[0]).toContain('User: User message 5');
      if (max >= 574) expect(sent).toEqual(overlap);
    }
  });

  it('splits oldest first, keeps every event, fits every chunk (random sizes)', () => {
    const texts = fc.array(
      fc.string({ minLength: 1, maxLength: 800, size: 'max' }).map((s) => `User: ${s}`),
      { minLength: 1, maxLength: 30 },
    );
    const side = (maxLength: number) => fc.array(fc.string({ maxLength, size: 'large' }), { maxLength: 2 });
    fc.assert(
      fc.property(texts, side(600), side(300), fc.integer({ min: 120, max: 3000 }), (toSummarize, currentSummaries, overlap, max) => {
        try {
          check({ ...base, toSummarize, currentSummaries, overlap }, max, chars);
        } catch (e) {
          // a budget too small for the prompt and the section headings is rejected, never silently dropped
          if (!(e instanceof InvalidParameterError)) throw e;
          expect(e.parameter).toBe('maxInputTokens');
          expect(max).toBeLessThan(400);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('with a real tokenizer, a huge event goes whole in marked parts, the newest events after it', () => {
    const cl100k = getEstimator('cl100k_base');
    const huge = 'User: START ' + 'lorem ipsum dolor sit amet '.repeat(400) + ' END';
    const request = { ...base, currentSummaries: ['previous facts'], toSummarize: ['User: first', huge, 'Assistant: newest answer'], overlap: ['User: next'] };
    check(request, 500, cl100k);
    const chunks = planSummaryChunks(request, 500, cl100k);
    const flat = chunks.flatMap((c) => c.toSummarize);
    const n = flat.length - 2;
    expect(n).toBeGreaterThan(2);
    expect(flat[1]).toMatch(new RegExp(`^\\[part 1/${n} of one event\\] User: START lorem`));
    expect(flat[n]).toMatch(new RegExp(`^\\[part ${n}/${n} of one event\\] [\\s\\S]* END$`));
    expect(flat[n + 1]).toBe('Assistant: newest answer');
    expect(chunks[chunks.length - 1].toSummarize).toContain('Assistant: newest answer');
  });

  // the newcomer's finding: with SUMMARIZER_MAX_INPUT_TOKENS=700 a flight search result lost its middle
  const flights = (count: number) =>
    'Tool [responses: search_direct_flight -> ' +
    Array.from(
      { length: count },
      (_, i) => `- Flight HAT${100 + i}: Departure: 0${i % 10}:00 AM from JFK\n  Arrival: 1${i % 10}:30 AM at SEA, price $${200 + i}`,
    ).join('\n') +
    ']';

  it.each(['chars', 'cl100k_base', 'o200k_base'] as const)(
    'given one archived event far over the bound (%s), when planned, then each of its characters is in exactly one chunk, each chunk within the bound, parts cut at line ends',
    (name) => {
      const estimator = getEstimator(name);
      const tool = flights(120);
      const request = {
        ...base,
        currentSummaries: ['earlier: user Ana'],
        toSummarize: ['User: find me a flight', tool, 'Assistant: HAT105 is cheapest'],
        overlap: ['User: book it'],
      };
      const bound = name === 'chars' ? 2800 : 700;
      const chunks = planSummaryChunks(request, bound, estimator);
      check(request, bound, estimator);
      for (const c of chunks) expect(summarizerInputCost(c, estimator)).toBeLessThanOrEqual(bound);
      const parts = chunks.flatMap((c) => c.toSummarize).filter((t) => t.startsWith('[part '));
      expect(parts.length).toBeGreaterThan(2);
      expect(parts.map((t) => t.replace(PART, '')).join('')).toBe(tool); // nothing left out, nothing twice
      // before: one part "…Departure: 04:00 AM f [… 888 characters omitted …] - Arrival…"
      for (const t of parts.slice(0, -1)) expect(t).toMatch(/\n$/);
      for (const c of chunks) for (const t of c.toSummarize) expect(t).not.toMatch(/omitted/);
    },
  );

  it('given a text with no line break nor space over the bound, when planned, then it is cut at word edges, else anywhere but inside a surrogate pair', () => {
    const tool = `Tool [responses: f -> ${'ab😀'.repeat(900)}]`;
    const request = { ...base, toSummarize: [tool] };
    const chunks = planSummaryChunks(request, 600, chars);
    const parts = chunks.flatMap((c) => c.toSummarize);
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.map((t) => t.replace(PART, '')).join('')).toBe(tool);
    for (const t of parts) expect(t).not.toMatch(/[\ud800-\udbff]$/);
    for (const c of chunks) expect(summarizerInputCost(c, chars)).toBeLessThanOrEqual(600);
  });

  it('given a part planned again under a tighter bound (a long running summary), when planned, then it is split into numbered pieces of that part', () => {
    const part = `[part 2/3 of one event] ${'word '.repeat(300)}`;
    const chunks = planSummaryChunks({ ...base, toSummarize: [part, 'User: next'] }, 400, chars);
    const flat = chunks.flatMap((c) => c.toSummarize);
    const pieces = flat.filter((t) => t.startsWith('[part 2/3, piece '));
    expect(pieces.length).toBeGreaterThan(1);
    pieces.forEach((t, i) => expect(t.startsWith(`[part 2/3, piece ${i + 1}/${pieces.length} of one event] `)).toBe(true));
    const marker = /^\[part [\d/, piece]+ of one event\] /;
    expect(pieces.map((t) => t.replace(marker, '')).join('')).toBe(part.replace(marker, ''));
    expect(flat[flat.length - 1]).toBe('User: next');
  });

  // the newcomer's finding (t17): a 300-fact previous summary went to the model as
  // `fact0000 … fact0019 f [… 2339 characters omitted …] fact0280 …` under "do not drop them"
  it.each(['chars', 'cl100k_base', 'o200k_base'] as const)(
    'given previous summaries larger than the room (%s), when planned, then every part of them is in exactly one chunk, oldest first, before the archived events, each chunk within the bound',
    (name) => {
      const estimator = getEstimator(name);
      const facts = Array.from({ length: 600 }, (_, i) => `fact${String(i).padStart(4, '0')}`);
      const summaries = [facts.slice(0, 300).join(' '), facts.slice(300).join(' ')];
      const request = {
        ...base,
        currentSummaries: summaries,
        toSummarize: ['User: USERONE', 'Assistant: ASSTONE', 'User: newest question'],
        overlap: ['User: kept'],
      };
      const bound = name === 'chars' ? 2800 : 700;
      const chunks = planSummaryChunks(request, bound, estimator);
      check(request, bound, estimator);
      // each fact in exactly one chunk, in order across chunks; the parts put together are each summary
      const where = facts.map((f) => {
        const at = chunks.flatMap((c, i) => (c.currentSummaries.some((t) => t.includes(f)) ? [i] : []));
        expect(at).toHaveLength(1);
        return at[0];
      });
      expect([...where].sort((a, b) => a - b)).toEqual(where);
      const parts = chunks.flatMap((c) => c.currentSummaries);
      expect(parts.length).toBeGreaterThan(2);
      expect(rejoinParts(parts, 'previous summary')).toEqual(summaries);
      for (const t of parts) expect(t).toMatch(SUMMARY_PART);
      // every chunk before the archived events holds previous-summary parts only, and leaves room for the running summary
      const firstEvents = chunks.findIndex((c) => c.toSummarize.length > 0);
      expect(firstEvents).toBeGreaterThan(0);
      expect(Math.max(...where)).toBeLessThanOrEqual(firstEvents);
      chunks.forEach((c, i) => {
        const running = i === 0 ? 0 : defaultSummaryReserve(bound);
        expect(summarizerInputCost(c, estimator) + running).toBeLessThanOrEqual(bound);
      });
      expect(chunks[chunks.length - 1].toSummarize).toContain('User: newest question');
    },
  );

  it('given a previous summary part planned again beside a running summary, when planned, then it is split into numbered pieces of that part, the running summary first and whole', () => {
    const part = `[part 2/3 of one previous summary] ${'fact '.repeat(300)}`;
    const chunks = planSummaryChunks({ ...base, currentSummaries: ['RUNNING', part], toSummarize: ['User: next'] }, 600, chars);
    const flat = chunks.flatMap((c) => c.currentSummaries);
    expect(flat[0]).toBe('RUNNING');
    const pieces = flat.slice(1);
    expect(pieces.length).toBeGreaterThan(1);
    pieces.forEach((t, i) => expect(t.startsWith(`[part 2/3, piece ${i + 1}/${pieces.length} of one previous summary] `)).toBe(true));
    const marker = /^\[part [\d/, piece]+ of one previous summary\] /;
    expect(pieces.map((t) => t.replace(marker, '')).join('')).toBe(part.replace(marker, ''));
  });

  it('property: any texts, any bound: every character of every event in exactly one chunk, in order, each chunk within the bound', () => {
    const cl100k = getEstimator('cl100k_base');
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ maxLength: 3000, size: 'max', unit: fc.constantFrom('a', 'b', ' ', '\n', '😀', '出', '.', 'x1') }).map((t) => `User: ${t}`),
          { minLength: 1, maxLength: 5 },
        ),
        fc.integer({ min: 300, max: 1500 }),
        fc.constantFrom(chars, cl100k),
        (toSummarize, bound, estimator) => {
          const request = { ...base, toSummarize };
          let chunks: SummaryRequest[];
          try {
            chunks = planSummaryChunks(request, bound, estimator);
          } catch (e) {
            if (e instanceof InvalidParameterError) return;
            throw e;
          }
          for (const c of chunks) expect(summarizerInputCost(c, estimator)).toBeLessThanOrEqual(bound);
          expect(rejoinParts(chunks.flatMap((c) => c.toSummarize))).toEqual(toSummarize);
        },
      ),
      { numRuns: 120, endOnFailure: true }, // shrinking texts of thousands of characters takes minutes
    );
  });
});

describe('extractiveSummary (DESIGN §3.7)', () => {
  const request: SummaryRequest = {
    systemPrompt: 'unused',
    shadowPrompt: 'S?',
    currentSummaries: ['Earlier: the user is Ana, order 7731.'],
    toSummarize: [
      'User: Please move reservation XK42Q9 to Saturday',
      'Assistant [tool calls: get_reservation_details({"reservation_id":"XK42Q9"})]',
      'Tool [responses: get_reservation_details -> {"origin":"PVG","date":"2024-05-17","price":412.5}]',
      'Assistant: Edited /src/app/config.ts as asked.',
      'User: thanks, and check https://example.com/status',
    ],
    overlap: ['User: OVERLAP-ONLY'],
    coveredIds: [],
  };

  it('is deterministic, names itself, and keeps user messages, tools, artefacts and the previous summary', () => {
    const s = extractiveSummary(request);
    expect(extractiveSummary(request)).toBe(s);
    expect(s).toContain(EXTRACTIVE_SUMMARIZER_MODEL);
    expect(s).toContain('Please move reservation XK42Q9 to Saturday');
    expect(s).toContain('thanks, and check https://example.com/status');
    expect(s).toContain('get_reservation_details');
    for (const x of ['reservation_id=XK42Q9', 'origin=PVG', '2024-05-17', '/src/app/config.ts', 'https://example.com/status', '412.5']) expect(s).toContain(x);
    expect(s).toContain('order 7731');
    expect(s).not.toContain('OVERLAP-ONLY');
  });

  it('is never blank and stays within maxChars (random requests)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 300 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.string({ maxLength: 2000 }), { maxLength: 2 }),
        fc.integer({ min: 0, max: 3000 }),
        (toSummarize, currentSummaries, maxChars) => {
          const s = extractiveSummary({ ...request, toSummarize, currentSummaries }, { maxChars });
          expect(s.trim()).not.toBe('');
          expect(s.length).toBeLessThanOrEqual(Math.max(200, maxChars));
          expect(extractiveSummary({ ...request, toSummarize, currentSummaries }, { maxChars })).toBe(s);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('truncateMiddle and turns', () => {
  it('keeps both ends and never exceeds the limit', () => {
    expect(truncateMiddle('abcdef', 10)).toBe('abcdef');
    const t = truncateMiddle('A'.repeat(50) + 'Z'.repeat(50), 60);
    expect(t.length).toBeLessThanOrEqual(60);
    expect(t.startsWith('AAAA')).toBe(true);
    expect(t.endsWith('ZZZZ')).toBe(true);
    expect(t).toContain('characters omitted');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.nat(400), (s, n) =>
        expect(truncateMiddle(s, n).length).toBeLessThanOrEqual(Math.max(n, 0)),
      ),
    );
  });

  it('counts turns and groups the preamble', () => {
    const events = costEvents([a('p'), { id: 's', type: 'system', text: 'x' }, u('u1'), a('a1'), u('u2')], chars);
    expect(countTurns(events)).toBe(2);
    const g = groupTurns(events);
    expect(g.preamble.map((c) => c.event.id)).toEqual(['p']);
    expect(g.turns.map((t) => t.map((c) => c.event.id))).toEqual([['u1', 'a1'], ['u2']]);
  });
});
