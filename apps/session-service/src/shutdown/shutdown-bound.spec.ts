import { ExtractiveSummarizer, type Summarizer, type SummarizeOptions } from '@lib/session';
import { abortedAtShutdown, settlesWithin, SHUTDOWN_ABORT_REASON } from './shutdown-bound';

/** A summarizer whose call resolves only when its signal aborts (as the OpenAI client does: `ok: false`, `aborted`). */
function hangingSummarizer(): Summarizer {
  return {
    identity: { kind: 'openai-compatible', model: 'm' },
    summarize: (_request, options: SummarizeOptions = {}) =>
      new Promise((resolve) =>
        options.signal?.addEventListener('abort', () => resolve({ ok: false, reason: 'aborted', calls: 1, promptTokens: 0, completionTokens: 0 })),
      ),
  };
}

const request = { events: [], previousSummary: null, maxSummaryTokens: 100 } as unknown as Parameters<Summarizer['summarize']>[0];

describe('abortedAtShutdown', () => {
  it("aborts a running call when the shutdown fires, the pass failing with the shutdown's reason", async () => {
    const shutdown = new AbortController();
    const call = abortedAtShutdown(hangingSummarizer(), shutdown.signal).summarize(request);
    shutdown.abort();
    // `interrupted`: not the model's failure, so the auto-compaction backoff does not count it
    await expect(call).resolves.toMatchObject({ ok: false, reason: SHUTDOWN_ABORT_REASON, interrupted: 'shutdown', calls: 1 });
  });

  it("keeps the caller's own abort reason, and the summarizer's identity", async () => {
    const shutdown = new AbortController();
    const own = new AbortController();
    const summarizer = abortedAtShutdown(hangingSummarizer(), shutdown.signal);
    expect(summarizer.identity).toEqual({ kind: 'openai-compatible', model: 'm' });
    const call = summarizer.summarize(request, { signal: own.signal });
    own.abort();
    await expect(call).resolves.toMatchObject({ ok: false, reason: 'aborted' });
    await expect(call).resolves.not.toHaveProperty('interrupted');
  });

  it("keeps the wrapped summarizer's identity, input bound and rate-limit pause", async () => {
    const inner = new ExtractiveSummarizer();
    const summarizer = abortedAtShutdown(inner, new AbortController().signal);
    expect(summarizer.identity).toEqual(inner.identity);
    expect(summarizer.inputBound).toBe((inner as Summarizer).inputBound);
    // the extractive summarizer never pauses; a model summarizer's rate-limit pause is read through the wrapper
    expect('pauseRemainingMs' in summarizer).toBe(false);
    const paused = abortedAtShutdown({ ...hangingSummarizer(), pauseRemainingMs: () => 1234 }, new AbortController().signal);
    expect(paused.pauseRemainingMs?.()).toBe(1234);
  });
});

describe('settlesWithin', () => {
  it('is true for work that settles (resolved or rejected) and false for work that does not in time', async () => {
    await expect(settlesWithin(Promise.resolve(1), 0)).resolves.toBe(true);
    await expect(settlesWithin(Promise.reject(new Error('x')), 0)).resolves.toBe(true);
    await expect(settlesWithin(new Promise(() => undefined), 0)).resolves.toBe(false);
  });
});
