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
import { hostNameOf, isAllowedHost } from '../config/allowed-hosts';
import type { ForeignHostLines } from './foreign-host-lines';
import { quoteInput } from '@lib/compaction';

/** Paths answered whatever the Host (no session data: liveness, readiness, Prometheus metrics). */
export const HOST_CHECK_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/health', '/health/ready', '/metrics']);

/**
 * The 403 answer to a request whose Host (`host`, its header's value) open mode does not answer; the
 * message names exactly what to set: `ALLOWED_HOSTS=<the header's host name>` (or `API_KEYS`), or,
 * for a value that is no `name[:port]`, that the client must send a host name. It does not list
 * `ALLOWED_HOSTS` (the refused client may be the attacker); the log line does ({@link ForeignHostLines}).
 */
export function hostNotAllowedAnswer(host: string): ApiErrorBody {
  const name = hostNameOf(host);
  const fix = name
    ? `to answer it, start the service with ALLOWED_HOSTS=${name} (comma-separated with the other names clients use), or set API_KEYS (then no Host is refused: the key protects)`
    : 'it is not a host name with an optional port (name[:port] or [IPv6][:port]): send the host name the client called';
  return {
    code: 'host_not_allowed',
    message:
      `Host ${quoteInput(host)} is not answered in open development mode (no API_KEYS), against DNS rebinding: ` +
      `only localhost, *.localhost, IP addresses and the names listed in ALLOWED_HOSTS are; ${fix}`,
  };
}

/**
 * The host a request is addressed to, as the Host check reads it: the authority of a request-target
 * in absolute form (`GET http://name:port/path`; RFC 9112 §3.2.2: it replaces the Host header), else
 * the Host header `header` (undefined when there is none: only HTTP/1.0 may omit it).
 */
export function addressedHost(target: string, header: string | undefined): string | undefined {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(target);
  return absolute ? absolute[1] : header;
}

/**
 * Makes `fastify` answer 403 `host_not_allowed` ({@link hostNotAllowedAnswer}) to a request whose
 * Host ({@link addressedHost}: an absolute-form target's authority, else the Host header) `isAllowedHost` refuses (an `onRequest` hook; call it after the missing-Host answer and before
 * the key check), except on {@link HOST_CHECK_EXEMPT_PATHS}, told through `lines` (a warn line per Host name per minute).
 * Adds nothing when `apiKeys` is set (size > 0).
 */
export function refuseForeignHosts(
  fastify: FastifyInstance,
  options: { apiKeys: ReadonlyMap<string, string>; allowedHosts: readonly string[] },
  lines: ForeignHostLines,
): void {
  if (options.apiKeys.size > 0) return;
  fastify.addHook('onRequest', (request, reply, done) => {
    const host = addressedHost(request.raw.url ?? '', request.raw.headers.host);
    if (isAllowedHost(host, options.allowedHosts) || HOST_CHECK_EXEMPT_PATHS.has(request.url.split('?')[0])) return done();
    lines.refused(request.method, host!);
    void reply.code(403).send(hostNotAllowedAnswer(host!));
  });
}
