/**
 * Open development mode (no `API_KEYS`) answers only requests addressed to the developer's own machine
 * (`isAllowedHost`: localhost, `*.localhost`, an IP address, or a name of `ALLOWED_HOSTS`): any other
 * `Host` gets 403 `host_not_allowed` before anything else runs (no key, no body, no store), against
 * DNS rebinding. With `API_KEYS` no request is refused for its Host: the attacker's page has no key.
 *
 * The operations routes (`/health`, `/health/ready`, `/metrics`: {@link HOST_CHECK_EXEMPT_PATHS}) are
 * answered whatever the Host: they hold no session data, and probes name the service as they reach it
 * (a compose service name, a Kubernetes pod IP or service name).
 */
import type { FastifyInstance } from 'fastify';
import type { ApiErrorBody } from './api-error.filter';
import { isAllowedHost } from '../config/allowed-hosts';
import type { RateLimitedWarnings } from '../observability/rate-limited-lines';
import { quoteInput } from '@lib/compaction';

/** Paths answered whatever the Host (no session data: liveness, readiness, Prometheus metrics). */
export const HOST_CHECK_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/health', '/health/ready', '/metrics']);

/** The 403 answer to a request whose Host (`host`, its header's value) open mode does not answer; the message says how to allow it. */
export function hostNotAllowedAnswer(host: string): ApiErrorBody {
  return {
    code: 'host_not_allowed',
    message:
      `Host ${quoteInput(host)} is not answered in open development mode (no API_KEYS), against DNS rebinding: ` +
      'only localhost, *.localhost and IP addresses are; add the host name to ALLOWED_HOSTS (comma-separated) to allow it, or set API_KEYS',
  };
}

/**
 * Makes `fastify` answer 403 `host_not_allowed` ({@link hostNotAllowedAnswer}) to a request whose
 * Host `isAllowedHost` refuses (an `onRequest` hook; call it after the missing-Host answer and before
 * the key check), except on {@link HOST_CHECK_EXEMPT_PATHS}, with one rate-limited warn line through `lines`.
 * Adds nothing when `apiKeys` is set (size > 0).
 */
export function refuseForeignHosts(
  fastify: FastifyInstance,
  options: { apiKeys: ReadonlyMap<string, string>; allowedHosts: readonly string[] },
  lines: RateLimitedWarnings,
): void {
  if (options.apiKeys.size > 0) return;
  fastify.addHook('onRequest', (request, reply, done) => {
    const host = request.raw.headers.host;
    if (isAllowedHost(host, options.allowedHosts) || HOST_CHECK_EXEMPT_PATHS.has(request.url.split('?')[0])) return done();
    const answer = hostNotAllowedAnswer(host!);
    lines.warn(`refused ${request.method} with Host ${quoteInput(host!)}: 403 ${answer.code}`, `403 ${answer.code}`);
    void reply.code(403).send(answer);
  });
}
