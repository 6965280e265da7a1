import { plansFromOptions } from './policy-forms';
import { renderFidelity, renderHtml, renderMarkdown, reportTitle } from './report';
import { FidelityCollector } from './run-fidelity';
import type { ReplayReport } from './run-replay';
import { serviceSummarizerDescription, summarizerDescription } from './summarizer-description';

const URL = 'http://127.0.0.1:4101';
/** The environment of a shell without any summarizer variable (the replay's own, not the service's). */
const BARE_ENV: NodeJS.ProcessEnv = {};

function reportWith(summarizer: string): ReplayReport {
  return {
    file: 'sessions.json',
    service: URL,
    estimator: 'cl100k_base',
    startedAt: '2026-01-01T00:00:00.000Z',
    wallTimeMs: 1,
    concurrency: 1,
    strategies: [],
    examples: { lines: [] },
    validationFailures: 0,
    summarizer,
  };
}

describe('summarizer description against --url', () => {
  it("names the summarizer the service's compaction records named, not the replay's environment", () => {
    const d = serviceSummarizerDescription(URL, [
      { kind: 'openai-compatible', model: 'gpt-4o-mini' },
      { kind: 'openai-compatible', model: 'gpt-4o-mini' },
    ]);
    expect(d).toEqual({ text: `summarizer openai-compatible/gpt-4o-mini of the service at ${URL}`, model: true });
    expect(summarizerDescription(BARE_ENV).text).toBe('extractive summarizer (OPENAI_BASE_URL not set)');
    const title = reportTitle(reportWith(d.text));
    expect(title).toBe(`Replay report: summarizer openai-compatible/gpt-4o-mini of the service at ${URL}`);
    expect(title).not.toContain('extractive');
  });

  it('says when no compaction called a summarizer, rather than guessing from the environment', () => {
    expect(serviceSummarizerDescription(URL, [])).toEqual({
      text: `the summarizer of the service at ${URL} (no compaction of the run called it)`,
      model: false,
    });
    expect(serviceSummarizerDescription(URL, [{ kind: 'extractive', model: 'extractive-v1' }]).model).toBe(false);
  });

  it('the fidelity section against a service leaves out the "first characters" baseline and says why', async () => {
    const plans = plansFromOptions('rolling-summary:2,800', 'token-count:2500');
    const d = serviceSummarizerDescription(URL, [{ kind: 'openai-compatible', model: 'gpt-4o-mini' }]);
    const remote = await new FidelityCollector([], 0, 'cl100k_base', BARE_ENV, URL).report(plans, 0, d);
    expect(remote.summarizer).toBe(d.text);
    expect(remote.modelSummarizer).toBe(true);
    expect(remote.rows.map((r) => r.kind)).not.toContain('first-chars');
    expect(remote.notes).toEqual([expect.stringContaining(`first 12,000 chars baseline: left out`)]);
    expect(remote.notes[0]).toContain(URL);
    const text = renderFidelity(remote);
    expect(text).toContain(`Context fidelity (${d.text})`);
    expect(text).not.toContain("same summarizer's summary");
    expect(text).toContain('first 12,000 chars baseline: left out');
    const report = { ...reportWith(d.text), fidelity: remote };
    expect(renderMarkdown(report)).toContain(`# Replay report: ${d.text}`);
    expect(renderHtml(report, 0)).toContain('first 12,000 chars baseline: left out');
  });

  it('in process the baseline is kept and the section names the summarizer the environment selects', async () => {
    const plans = plansFromOptions('rolling-summary:2,800', 'token-count:2500');
    const local = await new FidelityCollector([], 0, 'cl100k_base', BARE_ENV).report(plans, 0, summarizerDescription(BARE_ENV));
    expect(local.summarizer).toBe('extractive summarizer (OPENAI_BASE_URL not set)');
    expect(local.rows.map((r) => r.kind)).toContain('first-chars');
    expect(local.notes).toEqual([]);
  });
});
