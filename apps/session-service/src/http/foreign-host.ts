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
import type { FastifyInstance, FastifyRequest } from 'fastify';
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

/** What open mode's Host check reads of the configuration: `API_KEYS` (with keys no Host is refused) and `ALLOWED_HOSTS`. */
export interface HostCheckOptions {
  apiKeys: ReadonlyMap<string, string>;
  allowedHosts: readonly string[];
}

/**
 * Open mode's Host check of `request`: the 403 answer ({@link hostNotAllowedAnswer}) when `isAllowedHost`
 * refuses its Host ({@link addressedHost}: an absolute-form target's authority, else the Host header),
 * told through `lines` (a warn line per Host name per minute); undefined when the request is answered
 * as usual: `apiKeys` set (size > 0), an allowed Host, or a path of {@link HOST_CHECK_EXEMPT_PATHS}.
 * The one check of both places a request is refused for its Host: {@link refuseForeignHosts} (every
 * routed request) and Fastify's framework errors (a path that is not valid percent-encoding, answered
 * before any hook: `answerFrameworkErrors`), so a foreign Host is answered 403 whatever its path.
 */
export function foreignHostRefusal(
  request: Pick<FastifyRequest, 'method' | 'url' | 'raw'>,
  options: HostCheckOptions,
  lines: ForeignHostLines,
): ApiErrorBody | undefined {
  if (options.apiKeys.size > 0) return undefined;
  const host = addressedHost(request.raw.url ?? '', request.raw.headers.host);
  if (isAllowedHost(host, options.allowedHosts) || HOST_CHECK_EXEMPT_PATHS.has(request.url.split('?')[0])) return undefined;
  lines.refused(request.method, host!);
  return hostNotAllowedAnswer(host!);
}

/**
 * Makes `fastify` answer 403 `host_not_allowed` to a request {@link foreignHostRefusal} refuses (an
 * `onRequest` hook; call it after the answers that make the Host readable, the HTTP version and the
 * missing or repeated Host header, and before every other check: a `#` in the target, the query's
 * encoding, the key, the route). Adds nothing when `apiKeys` is set (size > 0).
 */
export function refuseForeignHosts(fastify: FastifyInstance, options: HostCheckOptions, lines: ForeignHostLines): void {
  if (options.apiKeys.size > 0) return;
  fastify.addHook('onRequest', (request, reply, done) => {
    const refusal = foreignHostRefusal(request, options, lines);
    if (refusal === undefined) return done();
    void reply.code(403).send(refusal);
  });
}
