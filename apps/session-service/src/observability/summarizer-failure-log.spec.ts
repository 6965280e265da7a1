import { LineLimiter } from './rate-limited-lines';
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
});
