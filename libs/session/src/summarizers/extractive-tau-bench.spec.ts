/**
 * The extractive summarizer on a real conversation (tau-bench airline task 3, the 4th
 * conversation of the shared data): rolling-summary at 600 tokens gives each summary a budget of
 * 300 cl100k tokens, and the user's reservation ids the archived events state must stay in it,
 * with every heading whole.
 */
import * as fs from 'node:fs';
import { completePlan, costEvents, eventCost, extractiveSummary, getEstimator, parseStrategy, planCompaction, type SessionEvent } from '@lib/compaction';
import { describeWithShared, TAU_BENCH_FILE } from '../../../../test/support/shared-dir';
import { openAiMessagesToEvents } from '../domain/openai-chat-format';

const RESERVATION_IDS = ['OI5L9G', 'KA7I60', 'I57WUD', '4BMN53'];
const HEADINGS = ['User messages (oldest first):', 'Tools used:', 'Artefacts (identifiers, values, paths):', 'Last events before the cut:'];

describeWithShared('extractive summaries of tau-bench airline task 3 within 300 tokens', TAU_BENCH_FILE, () => {
  const records = JSON.parse(fs.readFileSync(TAU_BENCH_FILE, 'utf8')) as Array<{ task_id: number; traj: unknown[] }>;
  const conversation = records[3];
  const cl100k = getEstimator('cl100k_base');

  it('keeps the four reservation ids once archived, whole headings, no cut marker, within the budget, at every pass', () => {
    expect(conversation.task_id).toBe(3);
    const messages = openAiMessagesToEvents(conversation.traj, { idPrefix: 'm' });
    const strategy = parseStrategy({ type: 'rolling-summary', summarizeAtTokens: 600 });
    let window: SessionEvent[] = [];
    let passes = 0;
    let archivedIds = 0;
    for (const message of messages) {
      window.push(message);
      const plan = planCompaction(costEvents(window, cl100k), strategy);
      if (!plan.summaryRequest) continue;
      passes++;
      const request = plan.summaryRequest;
      expect(request.maxSummaryTokens).toBe(300);
      const text = extractiveSummary(request, { estimator: cl100k });
      expect(eventCost({ id: 's', type: 'summary', shadowPrompt: request.shadowPrompt, text }, cl100k)).toBeLessThanOrEqual(300);
      expect(text).not.toMatch(/omitted …\]/);
      const covered = [...request.currentSummaries, ...request.toSummarize].join('\n');
      const stated = RESERVATION_IDS.filter((id) => covered.includes(id));
      archivedIds = Math.max(archivedIds, stated.length);
      for (const id of stated) expect(text).toContain(id);
      for (const line of text.split('\n'))
        if (/^[A-Z][\w ]*[a-z]/.test(line) && line.endsWith(':'))
          expect(HEADINGS.concat('Previous summary (merged):', 'Earlier user messages:', 'Earlier tools used:', 'Earlier last events:')).toContain(line);
      const result = completePlan(plan, { reply: { text }, summaryId: `sum${passes}`, estimator: cl100k });
      const byId = new Map(window.map((e) => [e.id, e]));
      byId.set(result.summary!.id, { id: result.summary!.id, type: 'summary', shadowPrompt: result.summary!.shadowPrompt, text });
      window = result.keptIds.map((id) => byId.get(id)!);
    }
    expect(passes).toBeGreaterThan(0);
    expect(archivedIds).toBe(RESERVATION_IDS.length);
  });
});
