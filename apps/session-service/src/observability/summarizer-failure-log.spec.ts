import { AsyncLocalStorage } from 'node:async_hooks';
import { LineLimiter, RateLimitedWarnings } from './rate-limited-lines';
import { CompactionAnswered } from '@lib/session';
import { Logger } from '@nestjs/common';
import { failedPassLine, SummarizerFailureLog } from './summarizer-failure-log';
import { reasonLabel } from './compaction-metrics.handler';

describe('failed compaction pass lines', () => {
  it('names session, tenant, compaction, origin, stage and reason, the session id quoted as input', () => {
    expect(
      failedPassLine(
        {
          tenantId: 'acme',
          sessionId: 'a "b"\n',
          compactionId: 'c-1',
          stage: 'summarize',
          reason: 'rate limited: HTTP 429 after 2 retries',
          failureKind: 'rate_limited',
        },
        'auto',
      ),
    ).toBe(
      'compaction pass failed: session "a \\"b\\"\\n" (tenant "acme"), compaction c-1, origin auto, stage summarize: rate limited: HTTP 429 after 2 retries',
    );
  });

  it('logs the first 3 failures of a window one by one, counts the rest by reason, and tells them in one line when the window ends', () => {
    const limiter = new LineLimiter('compaction passes failed', 3, 60_000);
    const admitted = [0, 1, 2, 3, 4, 5].map((i) => limiter.admit(1_000 + i, i < 5 ? 'HTTP 401' : 'HTTP 500'));
    expect(admitted.map((a) => a.line)).toEqual([true, true, true, false, false, false]);
    // The first failure counted asks for a flush at the window's end; the later ones do not ask again.
    expect(admitted.map((a) => a.flushAt)).toEqual([null, null, null, 61_000, null, null]);
    expect(limiter.flush()).toBe('3 more compaction passes failed in the last 60 s, not logged one by one: 2 × HTTP 401; 1 × HTTP 500');
    expect(limiter.flush()).toBeNull();
    // Still in the window: counted; the next window's first failure gets a line and tells what the last window counted.
    expect(limiter.admit(60_999, 'HTTP 401').line).toBe(false);
    expect(limiter.admit(61_000, 'HTTP 401')).toEqual({
      line: true,
      told: '1 more compaction passes failed in the last 60 s, not logged one by one: 1 × HTTP 401',
      flushAt: null,
    });
  });

  it('logs the failure kind as a field of the line beside its message, keeps it for /health, and labels the metric with it', () => {
    const logged: unknown[] = [];
    const spy = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void logged.push(message));
    const log = new SummarizerFailureLog();
    try {
      const pass = {
        tenantId: 'default',
        sessionId: 's1',
        compactionId: 'c-9',
        stage: 'summarize' as const,
        reason: 'summarizer failed: the model endpoint rejected the credentials: HTTP 401 (invalid_api_key); check OPENAI_API_KEY',
        failureKind: 'credentials' as const,
      };
      const answered = new CompactionAnswered('auto', 'failed', undefined, false, false, pass);
      log.handle(answered);
      expect(logged).toEqual([{ msg: failedPassLine(pass, 'auto'), failureKind: 'credentials' }]);
      expect(log.lastFailure()).toEqual({ reason: pass.reason, failureKind: 'credentials', at: expect.any(String) });
      expect(reasonLabel(answered)).toBe('credentials');
      expect(reasonLabel(new CompactionAnswered('auto', 'noop', 'within-limit', false))).toBe('within-limit');
      expect(reasonLabel(new CompactionAnswered('command', 'compacted', undefined, false))).toBe('');
    } finally {
      log.onModuleDestroy();
      spy.mockRestore();
    }
  });

  it("given failures past the window's lines, when the window ends, then the telling line counts them by failure kind and carries no request's context (newcomer ncopsalerts M3)", () => {
    jest.useFakeTimers();
    const request = new AsyncLocalStorage<string>();
    const logged: Array<{ message: unknown; requestId: string | undefined }> = [];
    const logger = { warn: (message: unknown) => void logged.push({ message, requestId: request.getStore() }) };
    try {
      const lines = new RateLimitedWarnings(logger, 'compaction passes failed', 2, 60_000, 'failureKind');
      const kinds = ['credentials', 'credentials', 'credentials', 'timeout', 'credentials', 'rate_limited'];
      kinds.forEach((kind, i) => request.run(`req-${i}`, () => lines.warn(`failed ${i}`, `reason of ${kind}`, { failureKind: kind })));
      expect(logged.map((l) => l.requestId)).toEqual(['req-0', 'req-1']);
      jest.advanceTimersByTime(60_000);
      expect(logged).toHaveLength(3);
      expect(logged[2]).toEqual({
        message: {
          msg: '4 more compaction passes failed in the last 60 s, not logged one by one: 2 × reason of credentials; 1 × reason of timeout; 1 × reason of rate_limited',
          failureKindCounts: { credentials: 2, timeout: 1, rate_limited: 1 },
        },
        requestId: undefined,
      });
      // a new window's first line tells the last window's count, in no request's context either
      request.run('req-9', () => lines.warn('failed 9', 'reason of credentials', { failureKind: 'credentials' }));
      request.run('req-10', () => lines.warn('failed 10', 'reason of credentials', { failureKind: 'credentials' }));
      request.run('req-11', () => lines.warn('failed 11', 'reason of timeout', { failureKind: 'timeout' }));
      request.run('req-12', () => {
        jest.setSystemTime(Date.now() + 60_000);
        lines.warn('failed 12', 'reason of credentials', { failureKind: 'credentials' });
      });
      const told = logged.find(
        (l) => typeof l.message === 'object' && (l.message as { failureKindCounts?: unknown }).failureKindCounts !== undefined && l !== logged[2],
      );
      expect(told).toEqual({
        message: { msg: expect.stringMatching(/^1 more compaction passes failed/), failureKindCounts: { timeout: 1 } },
        requestId: undefined,
      });
      lines.close();
    } finally {
      jest.useRealTimers();
    }
  });
});
