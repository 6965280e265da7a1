/**
 * The API key and the rate limit of the `/v1` routes, checked before the body is read (Fastify's
 * `onRequest` stage): a request over its budget is answered 429 `rate_limited`, then one without a
 * known key 401 `unauthorized`, before its body is read, parsed or even asked for
 * (`Expect: 100-continue` gets the answer instead of `100 Continue`), and a client still sending its
 * body reads the answer ({@link answerBeforeBody}: `Connection: close`, the body read and discarded
 * within bounds). Checked by Nest guards alone, an unauthenticated client made every replica read
 * and parse up to `MAX_BODY_BYTES` per request before its 401.
 *
 * The answers are the guards' (same decision, {@link tenantOf}; same budgets, `rate-limit-budget.ts`;
 * same bodies and headers): a 429 carries `Retry-After` and `X-RateLimit-Limit`, `-Remaining` (0)
 * and `-Reset`, and every other answer of a limited route the `X-RateLimit-*` headers; no answer
 * has `WWW-Authenticate`. The order is the guards': the budget is spent first (an unknown key spends
 * its address's, so guessing keys is throttled), then the key is checked. The answers given before
 * in the `onRequest` stage or earlier still come first, spending no budget and without `X-RateLimit-*` headers (503
 * `shutting_down`, 403 `host_not_allowed`, 415, 413 for a declared length, 405 and 404 near a route,
 * 400 `invalid_query_encoding`, and before routing 400 `invalid_path` and `malformed_request`, 414,
 * 417; docs/http-api.md lists them in its 429 row); the body's own errors (400
 * `malformed_json`, `malformed_body`, 413 for a chunked or compressed body, …) come after.
 *
 * Routes: every route whose pattern is under `/v1` (the controllers behind {@link ApiKeyGuard}), and
 * every path under `/v1` no route has ({@link isKeyedRequest}): a mistyped path gets 401 too, its
 * body neither read nor parsed (it was parsed before its 404, a body that is not JSON answered 400
 * `malformed_json`), and with a known key its 404 before the body (`answerUnroutedBeforeBody`).
 * `/health`, `/health/ready`, `/metrics`, the `/ui` page's files and `/docs` stay open; a path near
 * a route (405, a trailing slash's 404) is answered before, as the module doc says. {@link ApiKeyGuard} stays on the controllers and makes
 * the same decision again. NATS commands do not come this way (their tenant is their subject's).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { rateLimitedBody, toApiError } from '../http/api-error.filter';
import { answerBeforeBody, type DiscardLimits } from '../http/early-answer';
import { markRateLimitCounted, RATE_LIMIT_THROTTLER, RATE_LIMIT_WINDOW_MS, rateLimitKey, rateLimitTracker } from '../http/rate-limit-budget';
import { apiKeyOf, OPEN_MODE_TENANT, tenantOf, type TenantRequest } from './api-key.guard';
import { recordResolvedTenant } from './resolved-tenant';

/** What {@link checkKeyBeforeBody} checks with. */
export interface KeyCheckOptions {
  /** Key → tenant (`API_KEYS`); empty in open development mode (every request is tenant `default`, no 401). */
  apiKeys: ReadonlyMap<string, string>;
  /** Requests per minute per budget (`RATE_LIMIT_PER_MINUTE`); 0: no limit. */
  rateLimitPerMinute: number;
  /** The throttler's storage (the guard's), where budgets are counted. */
  storage: ThrottlerStorage;
  /** Bounds of the reading and discarding of a refused request's body (default: `early-answer.ts`'s). */
  discardLimits?: DiscardLimits;
}

/** True when `path` (a route pattern, or a request's path without its query) is `/v1` or under it. */
function underV1(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}

/** `path` percent-decoded as the router decodes it, or as it is when it is not valid percent-encoded UTF-8. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * True when a request needs a key and counts against the rate limit: its route's pattern
 * (`request.routeOptions.url`) is under `/v1`, or no route has its path and that path
 * (percent-decoded, without its query) is under `/v1`, so that a mistyped `/v1` path gets the same
 * 401 before its body as a route does, not its body read and parsed.
 */
export function isKeyedRequest(request: Pick<FastifyRequest, 'routeOptions' | 'url'>): boolean {
  const pattern = request.routeOptions.url;
  if (pattern !== undefined) return underV1(pattern);
  const queryStart = request.url.indexOf('?');
  return underV1(decodedPath(queryStart < 0 ? request.url : request.url.slice(0, queryStart)));
}

/**
 * Makes `app` check the rate limit and the API key of every `/v1` request in an `onRequest` hook
 * (see the module doc); call after the other `onRequest` answers are added, so that they keep
 * coming first. Sets the request's `tenantId` ({@link tenantOf}; a known key's also on a 429), and records it by
 * the Node request ({@link recordResolvedTenant}), so that an answer given outside Fastify's request (a 408 of a body
 * that stalled) is counted under it. In open development mode without a rate limit there is nothing to refuse: every
 * `/v1` request is only given its tenant, `default`.
 */
export function checkKeyBeforeBody(app: FastifyInstance, options: KeyCheckOptions): void {
  const { apiKeys, rateLimitPerMinute: limit, storage, discardLimits } = options;
  if (apiKeys.size === 0 && limit <= 0) {
    app.addHook('onRequest', (request: FastifyRequest & TenantRequest, _reply, done) => {
      if (isKeyedRequest(request)) recordResolvedTenant(request.raw, (request.tenantId = OPEN_MODE_TENANT));
      done();
    });
    return;
  }
  app.addHook('onRequest', async (request: FastifyRequest & TenantRequest, reply: FastifyReply) => {
    if (!isKeyedRequest(request)) return;
    if (limit > 0) {
      const tracker = rateLimitTracker(request, apiKeys);
      const spent = await storage.increment(rateLimitKey(tracker), RATE_LIMIT_WINDOW_MS, limit, RATE_LIMIT_WINDOW_MS, RATE_LIMIT_THROTTLER);
      markRateLimitCounted(request.raw);
      if (spent.isBlocked) {
        // A known key's tenant is named in the request's log line (its budget is the tenant's).
        const known = apiKeys.get(apiKeyOf(request) ?? '');
        if (known !== undefined) recordResolvedTenant(request.raw, (request.tenantId = known));
        void reply
          .header('retry-after', spent.timeToBlockExpire)
          .header('x-ratelimit-limit', limit)
          .header('x-ratelimit-remaining', 0)
          .header('x-ratelimit-reset', spent.timeToBlockExpire);
        answerBeforeBody(request, reply, 429, rateLimitedBody(known, limit, spent.timeToBlockExpire), discardLimits);
        return reply;
      }
      void reply
        .header('x-ratelimit-limit', limit)
        .header('x-ratelimit-remaining', Math.max(0, limit - spent.totalHits))
        .header('x-ratelimit-reset', spent.timeToExpire);
    }
    try {
      recordResolvedTenant(request.raw, (request.tenantId = tenantOf(request, apiKeys)));
    } catch (refusal) {
      // The UnauthorizedException the guard would throw, answered as its error filter does.
      const { status, body } = toApiError(refusal);
      answerBeforeBody(request, reply, status, body, discardLimits);
      return reply;
    }
  });
}
