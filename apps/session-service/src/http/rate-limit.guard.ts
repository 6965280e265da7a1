/**
 * The rate limit (`RATE_LIMIT_PER_MINUTE`) as a guard: @nestjs/throttler's, whose 429 answers also
 * carry the `X-RateLimit-Limit`, `X-RateLimit-Remaining` (0) and `X-RateLimit-Reset` (seconds until
 * the window ends) headers that its other answers carry, next to `Retry-After` (seconds), so a
 * client reads one set of headers whatever the answer. Every `/v1` request is counted, and a limited
 * one answered, before its body is read (`key-check-before-body.ts`, same storage and budgets): the
 * guard skips those, and counts only a request that check did not (none of today's routes: it stays
 * so that a route outside `/v1` is not left unlimited). Registered only when a limit is set
 * (`RATE_LIMIT_PER_MINUTE` > 0): without one it would answer `true` to every request, at the cost of a promise per request.
 */
import { Injectable, type ExecutionContext } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import { rateLimitCounted } from './rate-limit-budget';

/** Global guard: the throttler's, plus the X-RateLimit-* headers on 429 answers. */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /**
   * Without a limit (`skipIf` says so for every request), skips the throttler's per-request
   * metadata lookups: its own loop would skip each throttler anyway. Skips a request whose budget
   * was spent before its body was read ({@link rateLimitCounted}): it is not counted twice.
   */
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    if (this.commonOptions.skipIf?.(context) === true) return true;
    const { req } = this.getRequestResponse(context) as { req: { raw?: object } };
    return req.raw !== undefined && rateLimitCounted(req.raw);
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const { res } = this.getRequestResponse(context);
    this.setResponseHeader(res, 'X-RateLimit-Limit', detail.limit);
    this.setResponseHeader(res, 'X-RateLimit-Remaining', 0);
    this.setResponseHeader(res, 'X-RateLimit-Reset', detail.isBlocked ? detail.timeToBlockExpire : detail.timeToExpire);
    return super.throwThrottlingException(context, detail);
  }
}
