/**
 * A previous summary larger than its share of a summarizer call, through the HTTP API with a model
 * summarizer (a local OpenAI-compatible server that records every prompt): it is split into
 * marked parts folded in chunks, oldest first, so every fact of it reaches the model (DESIGN §3.4,
 * §3.7). Newcomer t17: with SUMMARIZER_MAX_INPUT_TOKENS=700 an imported 300-fact summary went to
 * the model as `fact0000 … fact0019 f [… 2339 characters omitted …] fact0280 …`, one call, and the
 * 260 facts in the cut never reached it before the summary was archived.
 * Runtime: a few seconds (in-process service on a temporary embedded store).
 */
import { summarizerFromEnv } from '@lib/session';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';

describe('a large previous summary with a model summarizer (bounded input)', () => {
  const fake = new FakeOpenAiServer();
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-previous-summary-chunks',
      SUMMARIZER_MAX_RETRIES: '0',
      SUMMARIZER_MAX_INPUT_TOKENS: '700',
    }),
  }));
  afterAll(() => fake.close());

  it('given an imported summary of 300 facts (~1,500 tokens) and a bound of 700, when recursive-summarization runs, then every fact reaches a model call once, oldest first, before the archived turns', async () => {
    fake.setDefault((request) => `SUMMARY ${request.index}`);
    const s = 'previous-summary-300-facts';
    const facts = Array.from({ length: 300 }, (_, i) => `fact${String(i).padStart(4, '0')}`);
    const events = [
      { id: 'sm0', type: 'summary', shadowPrompt: 'P', text: facts.join(' ') },
      { id: 'u1', type: 'user', text: 'USERONE' },
      { id: 'a1', type: 'assistant', text: 'ASSTONE' },
      { id: 'u2', type: 'user', text: 'USERTWO' },
      { id: 'a2', type: 'assistant', text: 'ASSTTWO' },
    ];
    await harness.http().post(`/v1/sessions/${s}/events`).send({ events }).expect(201);
    const pass = (
      await harness
        .http()
        .post(`/v1/sessions/${s}/compactions`)
        .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } })
        .expect(200)
    ).body;
    expect(pass.outcome).toBe('compacted');
    expect(pass.archived).toEqual(['sm0', 'u1', 'a1']);

    const prompts = fake.requests.map((r) => r.text);
    expect(prompts.length).toBeGreaterThan(2);
    for (const p of prompts) expect(p).not.toMatch(/omitted/);
    const calls = facts.map((f) => {
      const at = prompts.flatMap((p, k) => (p.includes(f) ? [k] : []));
      expect(at).toHaveLength(1);
      return at[0];
    });
    expect([...calls].sort((a, b) => a - b)).toEqual(calls);
    // the archived turn comes after the whole previous summary, in the last call
    const last = prompts.length - 1;
    expect(prompts[last]).toContain('User: USERONE');
    expect(prompts[last]).toContain('Assistant: ASSTONE');
    expect(calls[calls.length - 1]).toBeLessThanOrEqual(last);
    // each call after the first folds the previous reply in
    for (let k = 1; k < prompts.length; k++) expect(prompts[k]).toContain(`SUMMARY ${k - 1}`);
    expect(pass.summary.text).toBe(`SUMMARY ${last}`);
  });
});
