/**
 * The audit page at `/ui` on what the summarizer cost (playwright-core driving Debian's Chromium,
 * as in audit-ui.e2e-spec.ts; README "Audit page and typed client"), as the API records it:
 *  - a compaction's details say its calls, the retries among them, the tokens the endpoint
 *    reported and the calls whose usage it did not report (their tokens unknown, never shown as 0:
 *    ncaudit2 F1), the models the replies named (`answeredModels`) and the summary against its
 *    budget (`summaryBudget`);
 *  - the session's facts carry its `summarizerSpend`, and name its compaction counts (compacted,
 *    failed) with the number the compaction list holds (ncaudit2 A2, A3).
 * A scripted summarizer stands for the model endpoint: each call's figures are set by the test.
 * Open mode; one service. Runs in about 15 s.
 */
import type { Summarizer, SummarizerOutcome } from '@lib/session';
import { describeWithChromium } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

const SESSION = 'spend-audit';

/** Answers the calls with the outcomes given, in order (a model endpoint's figures, as the OpenAI summarizer sums them). */
class ScriptedSummarizer implements Summarizer {
  readonly identity = { kind: 'openai-compatible' as const, model: 'gpt-cfg' };
  constructor(private readonly outcomes: SummarizerOutcome[]) {}
  summarize(): Promise<SummarizerOutcome> {
    const next = this.outcomes.shift();
    if (!next) throw new Error('no scripted outcome left');
    return Promise.resolve(next);
  }
}

/** A summary longer than any budget of the passes below. */
const LONG = `recap ${'of the long talk '.repeat(60)}`;
const OUTCOMES: SummarizerOutcome[] = [
  // one call whose reply had no usage: tokens unknown
  { ok: true, text: 'recap one', calls: 1, promptTokens: 0, completionTokens: 0, retries: 0, unreportedUsageCalls: 1, answeredModels: [] },
  // a 500, then a reply with usage, naming the model that answered
  { ok: true, text: LONG, calls: 2, promptTokens: 400, completionTokens: 40, retries: 1, unreportedUsageCalls: 1, answeredModels: ['gpt-cfg-2026-01-01'] },
  // a failure
  { ok: false, reason: 'model unavailable (test)', calls: 1, promptTokens: 0, completionTokens: 0, retries: 0, unreportedUsageCalls: 1, answeredModels: [] },
];

describeWithChromium('audit page: summarizer cost as recorded', () => {
  const ui = useAuditPage({ summarizer: new ScriptedSummarizer(OUTCOMES) });
  const { itInPage } = ui;
  const compactionIds: string[] = [];

  beforeAll(async () => {
    const path = { sessionId: SESSION };
    for (const round of [1, 2, 3]) {
      const events = Array.from({ length: 8 }, (_, i) => ({ type: i % 2 ? 'assistant' : 'user', text: `turn ${i} of round ${round}` }));
      await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: events as never } });
      const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path },
        body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 4 } },
      });
      expect(data!.outcome).toBe(round < 3 ? 'compacted' : 'failed');
      compactionIds.push(data!.compactionId!);
    }
  }, 120_000);

  const openCompaction = async (i: number) => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}/c/${compactionIds[i]}`);
    await ui.page.locator('#diff').waitFor();
    return ui.page.locator('#diff dl.facts').innerText();
  };

  itInPage('says a call whose usage was not reported is of unknown tokens, never 0 tokens', async () => {
    const facts = await openCompaction(0);
    expect(await ui.page.locator('#summarizer-figures').innerText()).toBe('gpt-cfg: 1 call, its usage not reported (tokens unknown)');
    expect(facts).not.toMatch(/\b0 prompt/);
    expect(await ui.page.locator('#answered-models').innerText()).toBe('no model named by the replies');
  });

  itInPage('says a retried pass’s retries and which of its calls reported the tokens; names the answering model and the summary over its budget', async () => {
    await openCompaction(1);
    expect(await ui.page.locator('#summarizer-figures').innerText()).toBe(
      "gpt-cfg: 2 calls (1 retry), 400 prompt + 40 completion tokens reported; 1 call's usage not reported (tokens unknown)",
    );
    expect(await ui.page.locator('#answered-models').innerText()).toBe('gpt-cfg-2026-01-01');
    const { data } = await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
      params: { path: { sessionId: SESSION, compactionId: compactionIds[1] } },
    });
    const budget = data!.summaryBudget!;
    expect(budget).toMatchObject({ exceeded: true, overBudget: 'kept' });
    expect(await ui.page.locator('#summary-budget').innerText()).toBe(
      `summary ${budget.summaryTokens} of ${budget.tokens} cl100k_base over budget, kept whole`,
    );
  });

  itInPage('shows the session’s summarizer spend and names its compaction counts as the list counts them', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
    await ui.page.locator('#compactions').waitFor();
    expect(await ui.page.locator('#summarizer-spend dd').innerText()).toBe(
      "4 calls (1 retry), 400 prompt + 40 completion tokens reported; 3 calls' usage not reported (tokens unknown)",
    );
    expect(await ui.page.locator('dl.facts').first().innerText()).toContain('2 compacted, 1 failed (3 in the list)');
    expect(await ui.page.locator('#compactions-heading').innerText()).toBe('Compactions (3)');
  });

  // ncsupport F9: the list read `2` and a `1 failed` badge ("2, of which 1 failed"?).
  itInPage('names the compaction counts in the session list as the session page does', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    const cell = ui.page.locator(`#sessions tr[data-session="${SESSION}"] td`).nth(4);
    await cell.waitFor();
    expect(await cell.innerText()).toBe('2 compacted, 1 failed');
  });
});
