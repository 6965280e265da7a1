/**
 * Property tests (fast-check) of the guarantees of DESIGN §3.3 and the results of §3.6, for every
 * strategy of §3.4, over random histories: mixed kinds, tool calls with and without responses,
 * parallel calls, system messages anywhere, existing summaries, random parameters.
 *
 * Expected values are derived here from the events themselves, not from the planner's figures.
 */
import fc from 'fast-check';
import {
  completePlan,
  costEvents,
  eventCost,
  evaluateTrigger,
  extractiveSummary,
  formatEvent,
  getEstimator,
  planCompaction,
  type CompactionResult,
  type CostedEvent,
  type SessionEvent,
  type Strategy,
} from '../src';
import { historyArb, strategyArbs, triggerArb } from './arbitraries';

const estimator = getEstimator('chars');
const NEW_ID = 'new-summary';
const RUNS = Number(process.env.FC_RUNS ?? 300);

const isNoticeEvent = (e: SessionEvent) => e.type === 'system' && e.notice === true;
const isReal = (e: SessionEvent) => e.type === 'user' || e.type === 'assistant' || e.type === 'tool' || isNoticeEvent(e);
const isInstructions = (e: SessionEvent) => e.type === 'system' && !isNoticeEvent(e);

/**
 * For each tool event (by id), the ids of the assistant events holding the calls its responses
 * answer: the most recent earlier call with the id (DESIGN §3.2), found by scanning back.
 */
function callHolders(events: SessionEvent[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  events.forEach((e, i) => {
    if (e.type !== 'tool') return;
    const holders: string[] = [];
    for (const r of e.responses) {
      for (let j = i - 1; j >= 0; j--) {
        const o = events[j];
        if (o.type === 'assistant' && (o.toolCalls ?? []).some((c) => c.id === r.toolCallId)) {
          holders.push(o.id);
          break;
        }
      }
    }
    out.set(e.id, holders);
  });
  return out;
}

/** Runs one pass and completes it with a usable (extractive) reply when a summary is asked for. */
function pass(costed: CostedEvent[], strategy: Strategy) {
  const plan = planCompaction(costed, strategy);
  const reply = plan.summaryRequest ? { text: extractiveSummary(plan.summaryRequest) } : undefined;
  const result = completePlan(plan, { reply, summaryId: NEW_ID, estimator });
  return { plan, result };
}

/** The active window after a result: kept events, the new summary in its place, each with its carried cost. */
function windowAfter(costed: CostedEvent[], result: CompactionResult): CostedEvent[] {
  const byId = new Map(costed.map((c) => [c.event.id, c]));
  return result.keptIds.map((id) => {
    if (id === NEW_ID) {
      const s = result.summary!;
      const event: SessionEvent = { id, type: 'summary', shadowPrompt: s.shadowPrompt, text: s.text };
      return { event, tokens: eventCost(event, estimator) };
    }
    return byId.get(id)!;
  });
}

function checkGuarantees(events: SessionEvent[], strategy: Strategy): void {
  const costed = costEvents(events, estimator);
  const { plan, result } = pass(costed, strategy);
  const index = new Map(events.map((e, i) => [e.id, i]));
  const byId = new Map(events.map((e) => [e.id, e]));
  const archived = new Set(result.archivedIds);
  const keptOld = result.keptIds.filter((id) => id !== NEW_ID);

  // kept ∪ archived = active, disjoint (plan and result)
  expect([...plan.keptIds, ...plan.archivedIds].sort()).toEqual(events.map((e) => e.id).sort());
  expect([...keptOld, ...result.archivedIds].sort()).toEqual(events.map((e) => e.id).sort());
  expect(keptOld.filter((id) => archived.has(id))).toEqual([]);

  // log order kept
  const ascending = (ids: string[]) => ids.every((id, i) => i === 0 || index.get(ids[i - 1])! < index.get(id)!);
  expect(ascending(plan.keptIds)).toBe(true);
  expect(ascending(plan.archivedIds)).toBe(true);
  expect(ascending(keptOld)).toBe(true);

  const real = events.filter(isReal);
  const archivedReal = real.filter((e) => archived.has(e.id));
  const keptReal = real.filter((e) => !archived.has(e.id));
  const firstUser = real.findIndex((e) => e.type === 'user');
  const lastUser = real.map((e) => e.type).lastIndexOf('user');

  const holders = callHolders(events);
  // a response kept in place with its kept call (inside an archived turn; DESIGN §3.3 rule 3)
  const answersKeptCall = (e: SessionEvent) => e.type === 'tool' && (holders.get(e.id) ?? []).some((h) => !archived.has(h));

  // the kept real events start at a user event once anything real is archived (turn-window: after
  // the preamble, which stays, and apart from answers kept with their preamble calls)
  if (archivedReal.length > 0) {
    let rest = keptReal;
    if (strategy.type === 'turn-window') {
      const preamble = real.slice(0, firstUser);
      expect(preamble.every((e) => !archived.has(e.id))).toBe(true);
      rest = keptReal.slice(preamble.length).filter((e) => !answersKeptCall(e));
    }
    expect(rest.length).toBeGreaterThan(0);
    expect(rest[0].type).toBe('user');
  }

  // the newest turn is kept whole; with no user event nothing real is archived
  if (lastUser < 0) expect(archivedReal).toEqual([]);
  else expect(real.slice(lastUser).every((e) => !archived.has(e.id))).toBe(true);

  // tool safety (DESIGN §3.3 rule 3): no kept response lacks its call; every kept call with a
  // response in the log has that response kept; an archived open call is abandoned (a user event
  // follows it)
  const respondedBy = new Map<string, string[]>();
  for (const [tool, hs] of holders) for (const h of hs) respondedBy.set(h, [...(respondedBy.get(h) ?? []), tool]);
  events.forEach((e, i) => {
    if (e.type === 'tool' && !archived.has(e.id)) for (const h of holders.get(e.id)!) expect(archived.has(h)).toBe(false);
    if (e.type === 'assistant' && !archived.has(e.id)) for (const t of respondedBy.get(e.id) ?? []) expect(archived.has(t)).toBe(false);
    if (e.type === 'assistant' && archived.has(e.id)) {
      for (const c of e.toolCalls ?? []) {
        const answered = (respondedBy.get(e.id) ?? []).some((t) =>
          (byId.get(t) as { responses: { toolCallId: string }[] }).responses.some((r) => r.toolCallId === c.id),
        );
        if (!answered) expect(events.slice(i + 1).some((o) => o.type === 'user')).toBe(true);
      }
    }
  });

  // system messages: the latest is pinned (kept), every other one archived
  const systems = events.filter(isInstructions);
  systems.forEach((s, i) => expect(archived.has(s.id)).toBe(i < systems.length - 1));

  // summaries: kept unless this pass wrote a new one (then all archived); no cut, no summarizer call
  const summaries = events.filter((e) => e.type === 'summary');
  if (result.summary) {
    expect(summaries.every((s) => archived.has(s.id))).toBe(true);
    expect(archivedReal.length).toBeGreaterThan(0);
    // the new summary goes immediately before the first kept real event
    const at = result.keptIds.indexOf(NEW_ID);
    expect(result.keptIds[at + 1]).toBe(keptReal[0].id);
    expect(result.summary.insertBeforeId).toBe(keptReal[0].id);
    // the summarizer got the archived real events (formatted, never a system message), the
    // current summaries, and the overlap (first kept real events)
    // (DESIGN §3.2: a call with no response is followed by its placeholder answer, as in every
    // rendering to a model, unless it is the newest message's: still running)
    const newestMessage = events.map((e) => e.type !== 'tool' && (e.type !== 'system' || (e as { notice?: boolean }).notice === true)).lastIndexOf(true);
    const asSummarized = (e: SessionEvent) => {
      const unanswered =
        e.type !== 'assistant' || events.indexOf(e) === newestMessage
          ? []
          : (e.toolCalls ?? []).filter(
              (c) =>
                !(respondedBy.get(e.id) ?? []).some((t) =>
                  (byId.get(t) as { responses: { toolCallId: string }[] }).responses.some((r) => r.toolCallId === c.id),
                ),
            );
      return [formatEvent(e), ...unanswered.map((c) => `Tool [responses: ${c.name} -> [no tool response recorded]]`)].join('\n');
    };
    const req = plan.summaryRequest!;
    expect(req.toSummarize).toEqual(archivedReal.map(asSummarized));
    expect(req.currentSummaries).toEqual(summaries.map((s) => (s as { text: string }).text));
    const overlap = strategy.type === 'recursive-summarization' ? strategy.overlapSize : 0;
    expect(req.overlap).toEqual(keptReal.slice(0, overlap).map(asSummarized));
    expect(req.coveredIds).toEqual(events.filter((e) => archived.has(e.id) && !isInstructions(e)).map((e) => e.id));
  } else {
    expect(plan.summaryRequest).toBeUndefined();
    expect(summaries.every((s) => !archived.has(s.id))).toBe(true);
    if (strategy.type === 'recursive-summarization' || strategy.type === 'rolling-summary') expect(archivedReal).toEqual([]);
  }
  if (strategy.type !== 'recursive-summarization' && strategy.type !== 'rolling-summary') expect(result.summary).toBeUndefined();

  // §3.6 figures, from the events' own costs
  const cost = new Map(costed.map((c) => [c.event.id, c.tokens]));
  const archivedCost = result.archivedIds.reduce((s, id) => s + cost.get(id)!, 0);
  const summaryCost = result.summary
    ? eventCost({ id: NEW_ID, type: 'summary', shadowPrompt: result.summary.shadowPrompt, text: result.summary.text }, estimator)
    : 0;
  expect(result.tokensEstimatedSaved).toBe(Math.max(0, archivedCost - summaryCost));
  const before = costed.reduce((s, c) => s + c.tokens, 0);
  expect(result.tokensBefore).toBe(before);
  expect(result.tokensAfter).toBe(before - archivedCost + summaryCost);
  expect(result.outcome).toBe(result.archivedIds.length > 0 || result.summary ? 'compacted' : 'noop');

  // idempotence: the same strategy on the resulting window archives nothing more and asks for no summary
  const again = planCompaction(windowAfter(costed, result), strategy);
  expect(again.archivedIds).toEqual([]);
  expect(again.summaryRequest).toBeUndefined();
  expect(again.outcome).toBe('noop');
}

describe.each(Object.keys(strategyArbs) as Strategy['type'][])('strategy %s: DESIGN §3.3 guarantees', (type) => {
  it('hold on random histories and parameters', () => {
    fc.assert(
      fc.property(historyArb(), strategyArbs[type], (events, strategy) => checkGuarantees(events, strategy)),
      { numRuns: RUNS },
    );
  });

  it('says why each archived event left: a partition of the archived ids by the rule that archived it (ncui69 F2)', () => {
    fc.assert(
      fc.property(historyArb(), strategyArbs[type], (events, strategy) => {
        const costed = costEvents(events, estimator);
        const { plan, result } = pass(costed, strategy);
        if (result.archivedIds.length === 0) return expect(plan.archiveReasons).toBeUndefined();
        const reasons = plan.archiveReasons!;
        const all = [...reasons.strategyCut, ...reasons.turnStart, ...reasons.supersededSystem, ...reasons.replacedSummaries];
        // a partition: each archived id under exactly one reason
        expect([...all].sort()).toEqual([...result.archivedIds].sort());
        const byId = new Map(events.map((e, i) => [e.id, { e, i }]));
        const systems = events.filter(isInstructions);
        expect(reasons.supersededSystem).toEqual(systems.slice(0, -1).map((e) => e.id));
        for (const id of reasons.replacedSummaries) expect(byId.get(id)!.e.type).toBe('summary');
        for (const id of [...reasons.strategyCut, ...reasons.turnStart]) expect(isReal(byId.get(id)!.e)).toBe(true);
        // the cut moved forward: what it took past the strategy's own cut comes after all the strategy cut
        const lastCut = Math.max(-1, ...reasons.strategyCut.map((id) => byId.get(id)!.i));
        for (const id of reasons.turnStart) expect(byId.get(id)!.i).toBeGreaterThan(lastCut);
      }),
      { numRuns: RUNS },
    );
  });

  it('a failed summary archives only superseded system messages, and the retry asks for the same summary', () => {
    fc.assert(
      fc.property(historyArb(), strategyArbs[type], fc.constantFrom({ text: '  \n' }, { text: '' }, { failure: 'timeout' }), (events, strategy, reply) => {
        const costed = costEvents(events, estimator);
        const plan = planCompaction(costed, strategy);
        if (!plan.summaryRequest) return;
        const result = completePlan(plan, { reply, summaryId: NEW_ID, estimator });
        const systems = events.filter(isInstructions);
        const superseded = systems.slice(0, -1).map((e) => e.id);
        expect(result.outcome).toBe('failed');
        expect(result.failureReason).toBeTruthy();
        expect(result.archivedIds).toEqual(superseded);
        expect(result.keptIds).toEqual(events.map((e) => e.id).filter((id) => !superseded.includes(id)));
        expect(result.summary).toBeUndefined();
        const cost = new Map(costed.map((c) => [c.event.id, c.tokens]));
        expect(result.tokensEstimatedSaved).toBe(superseded.reduce((s, id) => s + cost.get(id)!, 0));
        // retry on the window after the failure: superseded messages are gone, the same events are summarized
        const window = costed.filter((c) => !superseded.includes(c.event.id));
        const retry = planCompaction(window, strategy);
        expect(retry.supersededSystemIds).toEqual([]);
        expect(retry.summaryRequest?.toSummarize).toEqual(plan.summaryRequest.toSummarize);
      }),
      { numRuns: RUNS },
    );
  });

  it('a trigger that does not fire changes nothing; one that fires gives the untriggered plan', () => {
    fc.assert(
      fc.property(historyArb(), strategyArbs[type], triggerArb, (events, strategy, trigger) => {
        const costed = costEvents(events, estimator);
        const plan = planCompaction(costed, strategy, trigger);
        expect(plan.triggerFired).toBe(evaluateTrigger(trigger, costed));
        if (!plan.triggerFired) {
          expect(plan.outcome).toBe('not-triggered');
          expect(plan.archivedIds).toEqual([]);
          expect(plan.keptIds).toEqual(events.map((e) => e.id));
          expect(plan.summaryRequest).toBeUndefined();
        } else {
          const untriggered = planCompaction(costed, strategy);
          expect(plan.archivedIds).toEqual(untriggered.archivedIds);
          expect(plan.summaryRequest).toEqual(untriggered.summaryRequest);
        }
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });
});

describe('strategy limits (DESIGN §3.4)', () => {
  const realOf = (events: SessionEvent[]) => events.filter(isReal);

  it('sliding-window and recursive-summarization cut nothing while real events ≤ the limit', () => {
    fc.assert(
      fc.property(historyArb(20), fc.integer({ min: 1, max: 30 }), (events, limit) => {
        fc.pre(realOf(events).length <= limit);
        const costed = costEvents(events, estimator);
        const sw = planCompaction(costed, { type: 'sliding-window', maxEvents: limit });
        expect(sw.archivedIds).toEqual(sw.supersededSystemIds);
      }),
    );
  });

  it('turn-window cuts nothing while turns ≤ maxTurns, and archives whole turns otherwise', () => {
    fc.assert(
      fc.property(historyArb(), fc.integer({ min: 1, max: 6 }), (events, maxTurns) => {
        const costed = costEvents(events, estimator);
        const plan = planCompaction(costed, { type: 'turn-window', maxTurns });
        const real = realOf(events);
        const users = real.filter((e) => e.type === 'user').length;
        const archivedReal = real.filter((e) => plan.archivedIds.includes(e.id));
        if (users <= maxTurns) expect(archivedReal).toEqual([]);
        // whole turns: an archived real event's turn-mates are archived too, except answers kept
        // in place with their (kept) preamble calls
        const holders = callHolders(events);
        const keptAnswer = (o: SessionEvent) => o.type === 'tool' && (holders.get(o.id) ?? []).some((h) => !plan.archivedIds.includes(h));
        let turn = -1;
        const turnOf = real.map((e) => (e.type === 'user' ? ++turn : turn));
        for (const e of archivedReal) {
          const t = turnOf[real.indexOf(e)];
          expect(t).toBeGreaterThanOrEqual(0);
          real.forEach((o, i) => turnOf[i] === t && !keptAnswer(o) && expect(plan.archivedIds).toContain(o.id));
        }
      }),
    );
  });

  it('token-count keeps everything when it fits after the pinned system and summaries, and the history starts at a user event', () => {
    fc.assert(
      fc.property(historyArb(), fc.integer({ min: 1, max: 2000 }), (events, maxTokens) => {
        const costed = costEvents(events, estimator);
        const cost = (e: SessionEvent) => eventCost(e, estimator);
        const systems = events.filter(isInstructions);
        const fixed = (systems.length ? cost(systems[systems.length - 1]) : 0) + events.filter((e) => e.type === 'summary').reduce((s, e) => s + cost(e), 0);
        const real = realOf(events);
        const total = real.reduce((s, e) => s + cost(e), 0);
        fc.pre(total <= maxTokens - fixed && real.length > 0 && real[0].type === 'user');
        const plan = planCompaction(costed, { type: 'token-count', maxTokens });
        expect(plan.archivedIds).toEqual(plan.supersededSystemIds);
      }),
    );
  });

  it('token-count: when something real is archived, what it keeps beyond the newest turn fits the budget unless tool safety kept more', () => {
    fc.assert(
      fc.property(historyArb(), fc.integer({ min: 1, max: 400 }), (events, maxTokens) => {
        fc.pre(events.every((e) => e.type !== 'assistant' || !e.toolCalls));
        const costed = costEvents(events, estimator);
        const plan = planCompaction(costed, { type: 'token-count', maxTokens });
        const real = realOf(events);
        const keptReal = real.filter((e) => !plan.archivedIds.includes(e.id));
        const lastUser = real.map((e) => e.type).lastIndexOf('user');
        if (keptReal.length > real.length - lastUser && lastUser >= 0) {
          const systems = events.filter(isInstructions);
          const fixed =
            (systems.length ? eventCost(systems[systems.length - 1], estimator) : 0) +
            events.filter((e) => e.type === 'summary').reduce((s, e) => s + eventCost(e, estimator), 0);
          expect(keptReal.reduce((s, e) => s + eventCost(e, estimator), 0)).toBeLessThanOrEqual(maxTokens - fixed);
        }
      }),
    );
  });
});
