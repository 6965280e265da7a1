/**
 * Whose budget a request spends under the rate limit (`RATE_LIMIT_PER_MINUTE`), and where it is
 * counted: one definition for the check before the body is read (`key-check-before-body.ts`), which
 * counts every `/v1` request, and the throttler's guard (`rate-limit.guard.ts`), which counts a
 * request that check did not.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { apiKeyOf } from '../auth/api-key.guard';

/** Name of the one throttler (named `default` so that the answers carry the standard `Retry-After` and `X-RateLimit-*` headers). */
export const RATE_LIMIT_THROTTLER = 'default';

/** The rate limit's window (ms): `RATE_LIMIT_PER_MINUTE` requests per minute, and a limited client waits out the rest of it. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * The budget a request spends: a configured key's tenant's (`tenant <tenant>`: every key of a tenant
 * spends one budget, so a tenant given two keys, or holding an old and a new one during a rotation,
 * gets no second one); a request without a key, or with an unknown one, spends its client address's
 * (`address <ip>`, the address `TRUST_PROXY` gives), so guessing keys is throttled per address (each
 * guess is not a new budget). `apiKeys`: key → tenant.
 */
export function rateLimitTracker(req: Pick<FastifyRequest, 'headers'> & { ip?: unknown }, apiKeys: ReadonlyMap<string, string>): string {
  const key = apiKeyOf(req);
  const tenant = key === undefined ? undefined : apiKeys.get(key);
  return tenant !== undefined ? `tenant ${tenant}` : `address ${typeof req.ip === 'string' ? req.ip : 'unknown'}`;
}

/**
 * The throttler storage key of a budget (`tracker`, {@link rateLimitTracker}): one budget across every
 * route, as `RATE_LIMIT_PER_MINUTE` promises (the throttler's default key also names the route, which
 * gave each key that budget per route). A SHA-256 hex digest, so that no key is held in clear.
 */
export function rateLimitKey(tracker: string, throttlerName: string = RATE_LIMIT_THROTTLER): string {
  return createHash('sha256').update(`${throttlerName}-${tracker}`).digest('hex');
}

/** Raw requests whose budget was spent already (by the check before the body). */
const counted = new WeakSet<object>();

/** Records that `raw` (a request's Node request) spent its budget, so that the guard does not count it again. */
export function markRateLimitCounted(raw: object): void {
  counted.add(raw);
}

/** True when `raw` (a request's Node request) spent its budget already ({@link markRateLimitCounted}). */
export function rateLimitCounted(raw: object): boolean {
  return counted.has(raw);
}
