import { EXTRACTIVE_SUMMARIZER_MODEL, type SummaryRequest } from '@lib/compaction';
import { ExtractiveSummarizer } from './extractive-summarizer';
import { OpenAiSummarizer } from './openai-summarizer';
import { SummarizerConfigError, summarizerFromEnv } from './summarizer-config';

const KEY = 'sk-secret-should-never-show';

function configError(env: NodeJS.ProcessEnv): SummarizerConfigError {
  try {
    summarizerFromEnv(env);
  } catch (e) {
    expect(e).toBeInstanceOf(SummarizerConfigError);
    return e as SummarizerConfigError;
  }
  throw new Error('expected a SummarizerConfigError');
}

describe('summarizerFromEnv', () => {
  it('is extractive when neither OPENAI_BASE_URL nor OPENAI_API_KEY is set (empty counts as unset)', () => {
    for (const env of [{}, { OPENAI_BASE_URL: '', OPENAI_API_KEY: '  ' }, { SUMMARIZER_MODEL: 'gpt-4o' }]) {
      const s = summarizerFromEnv(env);
      expect(s).toBeInstanceOf(ExtractiveSummarizer);
      expect(s.identity).toEqual({ kind: 'extractive', model: EXTRACTIVE_SUMMARIZER_MODEL });
    }
  });

  it('is OpenAI-compatible with defaults when a key is set', () => {
    const s = summarizerFromEnv({ OPENAI_API_KEY: KEY });
    expect(s).toBeInstanceOf(OpenAiSummarizer);
    expect(s.identity).toEqual({ kind: 'openai-compatible', model: 'gpt-4o-mini' });
    expect((s as OpenAiSummarizer).settings).toEqual({
      baseURL: 'https://api.openai.com/v1',
      timeoutMs: 60000,
      maxRetries: 2,
      maxInputTokens: 12000,
      maxCallsPerPass: 250,
      estimator: 'cl100k_base',
    });
    expect(JSON.stringify((s as OpenAiSummarizer).settings)).not.toContain(KEY);
  });

  it('is OpenAI-compatible with only a base URL, and reads every setting', () => {
    const s = summarizerFromEnv({
      OPENAI_BASE_URL: ' http://127.0.0.1:9999/v1 ',
      SUMMARIZER_MODEL: 'llama3',
      SUMMARIZER_TIMEOUT_MS: '1500',
      SUMMARIZER_MAX_RETRIES: '0',
      SUMMARIZER_MAX_INPUT_TOKENS: '4000',
      SUMMARIZER_MAX_CALLS_PER_PASS: '7',
    }) as OpenAiSummarizer;
    expect(s.identity).toEqual({ kind: 'openai-compatible', model: 'llama3' });
    expect(s.settings).toMatchObject({ baseURL: 'http://127.0.0.1:9999/v1', timeoutMs: 1500, maxRetries: 0, maxInputTokens: 4000, maxCallsPerPass: 7 });
  });

  it.each<[string, NodeJS.ProcessEnv]>([
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'not a url', OPENAI_API_KEY: KEY }],
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'ftp://host/v1' }],
    ['SUMMARIZER_MODEL', { OPENAI_API_KEY: KEY, SUMMARIZER_MODEL: '   ' }],
    ['SUMMARIZER_TIMEOUT_MS', { OPENAI_API_KEY: KEY, SUMMARIZER_TIMEOUT_MS: '0' }],
    ['SUMMARIZER_TIMEOUT_MS', { OPENAI_API_KEY: KEY, SUMMARIZER_TIMEOUT_MS: '1.5' }],
    ['SUMMARIZER_TIMEOUT_MS', { OPENAI_API_KEY: KEY, SUMMARIZER_TIMEOUT_MS: '10s' }],
    ['SUMMARIZER_MAX_RETRIES', { OPENAI_API_KEY: KEY, SUMMARIZER_MAX_RETRIES: '-1' }],
    ['SUMMARIZER_MAX_RETRIES', { OPENAI_API_KEY: KEY, SUMMARIZER_MAX_RETRIES: '99' }],
    ['SUMMARIZER_MAX_INPUT_TOKENS', { OPENAI_API_KEY: KEY, SUMMARIZER_MAX_INPUT_TOKENS: '10' }],
    ['SUMMARIZER_MAX_INPUT_TOKENS', { OPENAI_API_KEY: KEY, SUMMARIZER_MAX_INPUT_TOKENS: 'lots' }],
    ['SUMMARIZER_MAX_CALLS_PER_PASS', { OPENAI_API_KEY: KEY, SUMMARIZER_MAX_CALLS_PER_PASS: '0' }],
    ['SUMMARIZER_MAX_CALLS_PER_PASS', { OPENAI_API_KEY: KEY, SUMMARIZER_MAX_CALLS_PER_PASS: '100001' }],
    ['SUMMARIZER_MAX_CALLS_PER_PASS', { SUMMARIZER_MAX_CALLS_PER_PASS: 'many' }],
    ['SUMMARIZER_MAX_RETRIES', { SUMMARIZER_MAX_RETRIES: 'x' }],
    // a fragment is never sent: it cannot be what the endpoint needs (newcomer auditfix 2)
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1#deployment', OPENAI_API_KEY: KEY }],
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1?api-version=2024-10-21#', OPENAI_API_KEY: KEY }],
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1?api-version=1&api-version=2', OPENAI_API_KEY: KEY }],
    // a port fetch refuses: every call would fail without connecting (newcomer ncverify48 F4)
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'http://127.0.0.1:4190/v1', OPENAI_API_KEY: KEY }],
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'https://user:pw@llm.internal:6000/v1' }],
    ['OPENAI_BASE_URL', { OPENAI_BASE_URL: 'http://127.0.0.1:0/v1', OPENAI_API_KEY: KEY }],
  ])('rejects a bad %s, naming it and never the key', (variable, env) => {
    const err = configError(env);
    expect(err.variable).toBe(variable);
    // one shape for every start-up refusal: `NAME=<value>: what to fix`
    expect(err.message).toMatch(new RegExp(`^${variable}=("[^"]*"|\\S+): `));
    expect(err.message).not.toContain(KEY);
  });

  it('says a base URL on a port fetch refuses is refused for its port, and accepts the default ports', () => {
    const err = configError({ OPENAI_BASE_URL: 'http://127.0.0.1:4190/v1' });
    expect(err.message).toContain('port 4190');
    expect(err.message).toContain('bad ports');
    for (const base of ['http://127.0.0.1/v1', 'https://llm.internal/v1', 'http://127.0.0.1:8080/v1', 'http://127.0.0.1:4191/v1'])
      expect(summarizerFromEnv({ OPENAI_BASE_URL: base })).toBeInstanceOf(OpenAiSummarizer);
  });

  it('refuses a base URL holding credentials, which fetch will not send (newcomer ncsec62 F2: accepted, then every call failed as connection_lost), and never shows them', () => {
    for (const base of ['http://user:secret-pw@127.0.0.1:8080/v1', 'https://user@llm.internal/v1', 'https://:secret-pw@llm.internal/v1']) {
      const err = configError({ OPENAI_BASE_URL: base, OPENAI_API_KEY: KEY });
      expect(err.variable).toBe('OPENAI_BASE_URL');
      expect(err.message).toContain('it holds credentials (user:password@)');
      expect(err.message).toContain('give the key in OPENAI_API_KEY');
      expect(err.message).not.toContain('secret-pw');
    }
  });

  it('says what is wrong with a base URL with a fragment, and accepts one with a query (Azure api-version)', () => {
    const err = configError({ OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1#deployment' });
    expect(err.message).toContain('fragment');
    expect(err.message).toContain('remove the #… part');
    expect(err.message).not.toContain('give each query parameter once');
    const azure = summarizerFromEnv({ OPENAI_BASE_URL: 'https://x.openai.azure.com/openai/v1?api-version=2024-10-21', OPENAI_API_KEY: KEY });
    expect((azure as OpenAiSummarizer).settings.baseURL).toBe('https://x.openai.azure.com/openai/v1');
  });

  it('gives a base URL with a query parameter given twice the fix of that fault, not the fragment’s (newcomer ncoperator F9)', () => {
    const err = configError({ OPENAI_BASE_URL: 'http://x/v1?a=1&a=2' });
    expect(err.message).toBe(
      'OPENAI_BASE_URL=http://x/v1?a=***&a=***: its query names the parameter "a" twice (one value per parameter is sent): give each query parameter once, e.g. https://x.openai.azure.com/openai/v1?api-version=2024-10-21',
    );
    expect(err.message).not.toContain('#');
  });
});

describe('ExtractiveSummarizer', () => {
  const request: SummaryRequest = {
    systemPrompt: 'sys',
    shadowPrompt: 'What happened?',
    currentSummaries: [],
    toSummarize: ['User: please rebook flight HAT136 for 2024-05-20', 'Assistant: Done, confirmation ABC123.'],
    overlap: [],
    coveredIds: ['u1', 'a1'],
  };

  it('summarizes deterministically, one call and no tokens, naming itself extractive', async () => {
    const s = new ExtractiveSummarizer();
    const a = await s.summarize(request);
    const b = await s.summarize(request);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ ok: true, calls: 1, promptTokens: 0, completionTokens: 0 });
    if (a.ok) {
      expect(a.text.trim()).toBe(a.text);
      expect(a.text).toContain('HAT136');
    }
    expect(s.identity).toEqual({ kind: 'extractive', model: EXTRACTIVE_SUMMARIZER_MODEL });
  });

  it('resolves an aborted call to ok:false, kind aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await new ExtractiveSummarizer().summarize(request, { signal: controller.signal })).toMatchObject({
      ok: false,
      reason: 'aborted',
      failureKind: 'aborted',
    });
  });
});
