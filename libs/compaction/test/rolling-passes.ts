import {
  completePlan,
  costEvents,
  extractiveSummary,
  parseStrategy,
  planCompaction,
  type SessionEvent,
  type SummaryRequest,
  type TokenEstimator,
} from '../src';

/**
 * Replays `events` appended one by one under `rolling-summary` (`keepTurns` 2, `summarizeAtTokens`
 * in tokens of `estimator`), as the service does: every pass that fires is summarized with the
 * extractive summarizer and its summary folded into the window for the next pass. `check` sees
 * each pass's request and summary text, in order. Test and bench support (the extractive
 * summarizer's specs, `bench/summary-user-messages.ts`).
 */
export function rollingPasses(
  events: readonly SessionEvent[],
  summarizeAtTokens: number,
  estimator: TokenEstimator,
  check: (request: SummaryRequest, text: string) => void,
): void {
  const strategy = parseStrategy({ type: 'rolling-summary', keepTurns: 2, summarizeAtTokens });
  let window: SessionEvent[] = [];
  events.forEach((event, i) => {
    window.push(event);
    const plan = planCompaction(costEvents(window, estimator), strategy);
    const request = plan.summaryRequest;
    if (request === undefined) return;
    const text = extractiveSummary(request, { estimator });
    check(request, text);
    const result = completePlan(plan, { reply: { text }, summaryId: `s${i}`, estimator });
    const byId = new Map(window.map((e) => [e.id, e]));
    byId.set(result.summary!.id, { id: result.summary!.id, type: 'summary', shadowPrompt: result.summary!.shadowPrompt, text });
    window = result.keptIds.map((id) => byId.get(id)!);
  });
}
