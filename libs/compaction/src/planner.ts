/**
 * The planner (DESIGN §3.2–§3.6): (active events, strategy, optional trigger) → a compaction
 * plan, and the completion of a plan with the summarizer's reply.
 */
import type {
  ArchiveReasons,
  CompactionPlan,
  CompactionResult,
  NewSummary,
  NoopReason,
  Strategy,
  SummaryReply,
  SummaryRequest,
  Trigger,
} from './compaction-types';
import { classifyEvents } from './classify';
import { settleCut } from './cut';
import { compactionFailureKind } from './failure-kind';
import { summaryBudgetUse, summaryTokenBudget } from './summary-budget';
import { formatEventWithPlaceholders } from './formatter';
import { placeholderAnsweredCalls } from './tool-call-pairing';
import type { CostedEvent, SummaryEvent } from './session-event';
import { recursiveSummarizationCut } from './strategies/recursive-summarization';
import { rollingSummaryCut, rollingSummaryFires } from './strategies/rolling-summary';
import { slidingWindowCut } from './strategies/sliding-window';
import type { RawCut, StrategyInput } from './strategies/strategy-cut';
import { tokenCountCut } from './strategies/token-count';
import { turnWindowCut } from './strategies/turn-window';
import { eventCost, type TokenEstimator } from './token-estimators';
import { evaluateTrigger } from './triggers';
import { turnStarts } from './turns';

function checkInput(events: readonly CostedEvent[]): void {
  const seen = new Set<string>();
  for (const c of events) {
    const id = c?.event?.id;
    if (typeof id !== 'string') throw new Error('planCompaction: every event needs a string id');
    if (seen.has(id)) throw new Error(`planCompaction: duplicate event id ${JSON.stringify(id)}`);
    seen.add(id);
    if (typeof c.tokens !== 'number' || !Number.isFinite(c.tokens) || c.tokens < 0) {
      throw new Error(`planCompaction: event ${JSON.stringify(id)} has no valid carried cost (tokens must be a finite number ≥ 0)`);
    }
  }
}

function rawCutFor(strategy: Strategy, input: StrategyInput): RawCut {
  switch (strategy.type) {
    case 'sliding-window':
      return slidingWindowCut(input, strategy);
    case 'turn-window':
      return turnWindowCut(input, strategy);
    case 'token-count':
      return tokenCountCut(input, strategy);
    case 'recursive-summarization':
      return recursiveSummarizationCut(input, strategy);
    case 'rolling-summary':
      return rollingSummaryCut(input, strategy);
    default: {
      const unknown: never = strategy;
      throw new Error(`planCompaction: unknown strategy type ${JSON.stringify((unknown as { type?: unknown }).type)}`);
    }
  }
}

/**
 * Plans one compaction pass. Pure and synchronous: no summarizer call, no I/O, no tokenizing
 * (only the carried `tokens` of each event are added).
 *
 * @param events the session's ACTIVE events in log order, each with its carried cost.
 * @param strategy a validated strategy (see `parseStrategy`).
 * @param trigger optional trigger (DESIGN §3.5); absent/null always fires.
 * @returns a {@link CompactionPlan}:
 *  - trigger does not fire → outcome `not-triggered`, nothing archived (not even superseded
 *    system messages), every event kept;
 *  - otherwise the superseded system messages are archived (DESIGN §3.2) and the strategy's cut
 *    (DESIGN §3.4, settled by §3.3) archives real events `[lowest, cut)`; the pinned system
 *    message and (for non-summarizing strategies) the summaries stay in place;
 *  - a summarizing strategy that cuts (rolling-summary: only over its threshold) also archives
 *    the current summaries and returns `summaryRequest` + `summaryInsertBeforeId` (the first kept
 *    real event); call the summarizer, then {@link completePlan}. The request carries the
 *    summary's budget, `maxSummaryTokens` (see `summaryTokenBudget`);
 *  - outcome `compacted` when anything is archived or a summary is requested, else `noop` with
 *    `noop` saying why (`within-limit`, `newest-turn-only`, `open-tool-call`).
 *
 * Token figures are in the unit of the estimator the events were costed with.
 * @throws Error on malformed input (duplicate ids, missing or negative `tokens`).
 */
export function planCompaction(events: CostedEvent[], strategy: Strategy, trigger?: Trigger | null): CompactionPlan {
  checkInput(events);
  const tokensBefore = events.reduce((sum, c) => sum + c.tokens, 0);
  const triggerFired = evaluateTrigger(trigger, events);
  const activeIds = events.map((c) => c.event.id);
  const base = { strategy, trigger: trigger ?? null, triggerFired, tokensBefore, activeIds };
  if (!triggerFired) {
    return {
      ...base,
      outcome: 'not-triggered',
      archivedIds: [],
      keptIds: [...activeIds],
      supersededSystemIds: [],
      tokensArchived: 0,
      tokensSuperseded: 0,
    };
  }

  const classes = classifyEvents(events);
  const real = classes.real.map((i) => events[i]);
  const summaryTokens = classes.summaries.reduce((sum, i) => sum + events[i].tokens, 0);
  const input: StrategyInput = {
    real,
    turnStarts: turnStarts(real),
    pinnedSystemTokens: classes.pinnedSystem >= 0 ? events[classes.pinnedSystem].tokens : 0,
    summaryTokens,
  };
  const { rawCut, lowest } = rawCutFor(strategy, input);
  const settled = settleCut(real, rawCut, lowest);
  const { cut } = settled;

  const summarizing = strategy.type === 'recursive-summarization' || strategy.type === 'rolling-summary';
  let writesSummary = summarizing && cut > lowest;
  if (writesSummary && strategy.type === 'rolling-summary') {
    writesSummary = rollingSummaryFires(real, cut, summaryTokens, strategy);
  }

  // Real positions archived: [lowest, cut) minus the responses kept in place with their calls.
  const retained = new Set(settled.retained);
  const archivedReal: number[] = [];
  if (!summarizing || writesSummary) for (let k = lowest; k < cut; k++) if (!retained.has(k)) archivedReal.push(k);
  const archived = new Set<number>(classes.supersededSystems);
  for (const k of archivedReal) archived.add(classes.real[k]);
  if (writesSummary) for (const i of classes.summaries) archived.add(i);

  const archivedIds: string[] = [];
  const keptIds: string[] = [];
  // Why each is archived (ArchiveReasons): real events at or past the strategy's raw cut went with the cut moved to a turn start.
  const movedFrom = rawCut ?? lowest;
  const archiveReasons: ArchiveReasons = {
    strategyCut: archivedReal.filter((k) => k < movedFrom).map((k) => real[k].event.id),
    turnStart: archivedReal.filter((k) => k >= movedFrom).map((k) => real[k].event.id),
    supersededSystem: classes.supersededSystems.map((i) => events[i].event.id),
    replacedSummaries: writesSummary ? classes.summaries.map((i) => events[i].event.id) : [],
  };
  let tokensArchived = 0;
  events.forEach((c, i) => {
    if (archived.has(i)) {
      archivedIds.push(c.event.id);
      tokensArchived += c.tokens;
    } else {
      keptIds.push(c.event.id);
    }
  });
  const outcome = archivedIds.length > 0 || writesSummary ? 'compacted' : 'noop';
  const plan: CompactionPlan = {
    ...base,
    outcome,
    ...(outcome === 'noop' ? { noop: noopReason(real, rawCut, lowest, cut, settled.blockedBy) } : {}),
    archivedIds,
    keptIds,
    supersededSystemIds: classes.supersededSystems.map((i) => events[i].event.id),
    ...(archivedIds.length > 0 ? { archiveReasons } : {}),
    tokensArchived,
    tokensSuperseded: classes.supersededSystems.reduce((sum, i) => sum + events[i].tokens, 0),
  };
  if (writesSummary && (strategy.type === 'recursive-summarization' || strategy.type === 'rolling-summary')) {
    const overlapSize = strategy.type === 'recursive-summarization' ? strategy.overlapSize : 0;
    // DESIGN §3.2: an abandoned call is followed by its placeholder answer, as in every rendering of this window to a model.
    const unanswered = placeholderAnsweredCalls(events.map((c) => c.event));
    const covered = [...classes.summaries.filter((i) => archived.has(i)), ...archivedReal.map((k) => classes.real[k])].sort((a, b) => a - b);
    const request: SummaryRequest = {
      systemPrompt: strategy.systemPrompt,
      shadowPrompt: strategy.shadowPrompt,
      currentSummaries: classes.summaries.map((i) => (events[i].event as SummaryEvent).text),
      toSummarize: archivedReal.map((k) => formatEventWithPlaceholders(real[k].event, unanswered.get(classes.real[k]))),
      overlap: real.slice(cut, cut + overlapSize).map((c, j) => formatEventWithPlaceholders(c.event, unanswered.get(classes.real[cut + j]))),
      coveredIds: covered.map((i) => events[i].event.id),
      maxSummaryTokens: summaryTokenBudget(strategy, tokensArchived - plan.tokensSuperseded),
    };
    plan.summaryRequest = request;
    plan.summaryInsertBeforeId = real[cut].event.id;
  }
  return plan;
}

/**
 * Why a pass that archives nothing is a `noop` (DESIGN §3.6): the strategy asked for no cut, or
 * rolling-summary stayed under its threshold → `within-limit`; tool safety moved the cut back to
 * `lowest` → `open-tool-call` naming the call, also when the cut it moved back was a leading
 * preamble's, which §3.3 archives even when the strategy's raw cut is at `lowest` (token-count with
 * room for everything: newcomer ncconf67 F1, answered `within-limit` and advised a lower
 * `maxTokens`, which archives nothing more); otherwise a raw cut at `lowest` → `within-limit`,
 * and one past it whose only candidate was the newest turn → `newest-turn-only`.
 */
function noopReason(
  real: readonly CostedEvent[],
  rawCut: number | null,
  lowest: number,
  cut: number,
  blockedBy: { toolCallId: string; position: number } | undefined,
): NoopReason {
  if (rawCut === null || cut > lowest) return { reason: 'within-limit' };
  if (blockedBy) return { reason: 'open-tool-call', toolCallId: blockedBy.toolCallId, eventId: real[blockedBy.position].event.id };
  if (rawCut <= lowest) return { reason: 'within-limit' };
  return { reason: 'newest-turn-only' };
}

/**
 * True when a summarizer reply is usable: a `{ text }` whose text is not blank (DESIGN §3.7: a
 * blank, whitespace or error reply is a failure).
 */
export function isUsableSummaryReply(reply: SummaryReply | undefined): reply is { text: string } {
  return !!reply && 'text' in reply && typeof reply.text === 'string' && reply.text.trim() !== '';
}

/**
 * Completes a plan into the final result of the pass (DESIGN §3.6, §3.7).
 *
 * - No `summaryRequest`: the result is the plan's (outcome, archived, kept); saved =
 *   cost(archived).
 * - With a request and a usable reply (`{ text }`, not blank): a {@link NewSummary} with id
 *   `summaryId` is inserted immediately before `summaryInsertBeforeId` (its id appears in
 *   `keptIds` in that place); its `tokens` is {@link eventCost} of the summary event under
 *   `estimator` (the only tokenizing done here); `tokensEstimatedSaved` = cost(archived, old
 *   summaries included) − cost(new summary), floored at 0. A summary over the request's budget
 *   (`maxSummaryTokens`) is kept whole, never cut nor refused; `summaryBudget` says so
 *   (`summaryBudgetUse`).
 * - With a blank/whitespace text or a `{ failure }` reply: outcome `failed`, only the superseded
 *   system messages are archived, the old summaries and every real event stay, `failureReason`
 *   says why and `failureKind` of what kind (the reply's, `other` when it names none of the closed
 *   set; `invalid_reply` for a blank text); saved = cost(superseded system messages).
 *
 * `tokensAfter` = `tokensBefore` − cost(archived) + cost(new summary). Units: the estimator's
 * (it must be the one the events were costed with).
 *
 * @throws Error when the plan has a `summaryRequest` but `reply` or `summaryId` is missing, or
 *   when `summaryId` collides with an existing id.
 */
export function completePlan(plan: CompactionPlan, options: { reply?: SummaryReply; summaryId?: string; estimator: TokenEstimator }): CompactionResult {
  const request = plan.summaryRequest;
  if (!request) {
    return {
      outcome: plan.outcome,
      archivedIds: [...plan.archivedIds],
      keptIds: [...plan.keptIds],
      tokensBefore: plan.tokensBefore,
      tokensAfter: plan.tokensBefore - plan.tokensArchived,
      tokensEstimatedSaved: Math.max(0, plan.tokensArchived),
    };
  }
  const { reply, summaryId, estimator } = options;
  if (!reply) throw new Error('completePlan: the plan asks for a summary, but no summarizer reply was given');
  if (typeof summaryId !== 'string' || summaryId === '') {
    throw new Error('completePlan: the plan asks for a summary, but no summaryId was given');
  }
  const insertBeforeId = plan.summaryInsertBeforeId;
  if (insertBeforeId === undefined) throw new Error('completePlan: malformed plan (summaryRequest without summaryInsertBeforeId)');

  if (!isUsableSummaryReply(reply)) {
    const superseded = new Set(plan.supersededSystemIds);
    const archivedIds = plan.activeIds.filter((id) => superseded.has(id));
    const keptIds = plan.activeIds.filter((id) => !superseded.has(id));
    return {
      outcome: 'failed',
      archivedIds,
      keptIds,
      tokensBefore: plan.tokensBefore,
      tokensAfter: plan.tokensBefore - plan.tokensSuperseded,
      tokensEstimatedSaved: Math.max(0, plan.tokensSuperseded),
      failureReason: 'failure' in reply ? `summarizer failed: ${reply.failure}` : 'summarizer returned a blank summary',
      // the summarizer's kind, which it chose with its reason; a blank text is an unusable reply
      failureKind: 'failure' in reply ? compactionFailureKind(reply.failureKind) : 'invalid_reply',
    };
  }

  if (plan.keptIds.includes(summaryId) || plan.archivedIds.includes(summaryId)) {
    throw new Error(`completePlan: summaryId ${JSON.stringify(summaryId)} is already the id of an event`);
  }
  const summaryEvent: SummaryEvent = { id: summaryId, type: 'summary', shadowPrompt: request.shadowPrompt, text: reply.text };
  const tokens = eventCost(summaryEvent, estimator);
  const summary: NewSummary = {
    id: summaryId,
    shadowPrompt: request.shadowPrompt,
    text: reply.text,
    insertBeforeId,
    coveredIds: [...request.coveredIds],
    tokens,
  };
  const keptIds: string[] = [];
  for (const id of plan.keptIds) {
    if (id === insertBeforeId) keptIds.push(summaryId);
    keptIds.push(id);
  }
  return {
    outcome: 'compacted',
    archivedIds: [...plan.archivedIds],
    keptIds,
    summary,
    tokensBefore: plan.tokensBefore,
    tokensAfter: plan.tokensBefore - plan.tokensArchived + tokens,
    tokensEstimatedSaved: Math.max(0, plan.tokensArchived - tokens),
    ...withSummaryBudget(summaryBudgetUse(request.maxSummaryTokens, tokens)),
  };
}

/** `{ summaryBudget }` when there is one, else nothing (a result without the field). */
function withSummaryBudget(summaryBudget: CompactionResult['summaryBudget']): Pick<CompactionResult, 'summaryBudget'> {
  return summaryBudget ? { summaryBudget } : {};
}
