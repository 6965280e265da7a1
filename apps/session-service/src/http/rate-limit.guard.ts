/**
 * The rate limit (`RATE_LIMIT_PER_MINUTE`): @nestjs/throttler's guard, whose 429 answers also carry
 * the `X-RateLimit-Limit`, `X-RateLimit-Remaining` (0) and `X-RateLimit-Reset` (seconds until the
 * window ends) headers that its other answers carry, next to `Retry-After` (seconds), so a client
 * reads one set of headers whatever the answer.
 */
import { Injectable, type ExecutionContext } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';

/** Global guard: the throttler's, plus the X-RateLimit-* headers on 429 answers. */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /**
   * Without a limit (`skipIf` says so for every request), skips the throttler's per-request
   * metadata lookups: its own loop would skip each throttler anyway.
   */
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return this.commonOptions.skipIf?.(context) === true;
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const { res } = this.getRequestResponse(context);
    this.setResponseHeader(res, 'X-RateLimit-Limit', detail.limit);
    this.setResponseHeader(res, 'X-RateLimit-Remaining', 0);
    this.setResponseHeader(res, 'X-RateLimit-Reset', detail.isBlocked ? detail.timeToBlockExpire : detail.timeToExpire);
    return super.throwThrottlingException(context, detail);
  }
}
