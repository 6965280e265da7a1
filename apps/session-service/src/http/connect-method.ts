/**
 * `CONNECT` (a request for a tunnel through a proxy) is answered 405 `method_not_allowed` in the
 * service's error shape, and the connection closed (newcomer finding: the connection was closed
 * with no answer at all). Node's server never hands a `CONNECT` to Fastify: it detaches the socket
 * from its HTTP parser and emits the server's `'connect'` event, and with no listener it destroys
 * the socket. The service is no proxy, so there is nothing to tunnel: it answers on the socket
 * itself, as for the other requests Node keeps to itself (`answerUnsupportedExpectations`).
 */
import * as http from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiErrorBody } from './api-error.filter';
import { refusedRequestLines, shortPath, type RouteMethods } from './framework-answers';
import { NO_TENANT_LABEL, type ServiceMetrics } from '../observability/metrics';
import type { RateLimitedWarnings } from '../observability/rate-limited-lines';
import { REQUEST_ID_HEADER, requestIdOf } from '../observability/request-id';
import { earlyAnswerHeaderLines } from './security-headers';

/** How long (ms) a `CONNECT`'s socket stays open after its answer for the client to read it and close; then it is destroyed. */
export const CONNECT_LINGER_MS = 1_000;

/** The answer to a `CONNECT`, whatever its target. */
export const CONNECT_NOT_ALLOWED: ApiErrorBody = {
  code: 'method_not_allowed',
  message: 'CONNECT is not allowed: the service is not a proxy and opens no tunnels; send your request to it directly (e.g. GET /health; see /docs)',
};

/**
 * The `Allow` header of the 405 to a `CONNECT` of `target`: the methods the routes of that path have,
 * when the target is a path (origin form, which `CONNECT` should not use) with routes; else empty (an
 * authority such as `host:443` is no resource of the service: it allows no method, RFC 9110 §10.2.1).
 */
export function connectAllowHeader(target: string, routes: Pick<RouteMethods, 'allowed'>): string {
  if (!target.startsWith('/')) return '';
  const queryStart = target.search(/[?#]/);
  return routes.allowed(queryStart < 0 ? target : target.slice(0, queryStart)).join(', ');
}

/**
 * Makes `server` answer every `CONNECT` 405 `method_not_allowed` ({@link CONNECT_NOT_ALLOWED}) with
 * `Allow` ({@link connectAllowHeader}, from `routes`: the table `answerNearRoutes` keeps),
 * `Connection: close` and its `X-Request-Id` ({@link requestIdOf}), written on its socket, which is
 * then ended (bytes the client sent after the request head are read and dropped) and destroyed
 * {@link CONNECT_LINGER_MS} later if the client has not closed it. Logs one line through `lines` as
 * `answerFrameworkErrors` does and counts the answer under route `unknown`. `metrics()` gives the
 * metrics once the application exists.
 */
export function answerConnectRequests(
  server: http.Server,
  routes: Pick<RouteMethods, 'allowed'>,
  metrics: () => ServiceMetrics | undefined,
  lines: RateLimitedWarnings = refusedRequestLines(),
): void {
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    const target = req.url ?? '';
    lines.warn(`refused CONNECT ${shortPath(target)}: 405 ${CONNECT_NOT_ALLOWED.code}`, `405 ${CONNECT_NOT_ALLOWED.code} (CONNECT)`);
    const text = JSON.stringify(CONNECT_NOT_ALLOWED);
    const linger = setTimeout(() => socket.destroy(), CONNECT_LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
    socket.on('error', () => undefined);
    socket.resume();
    if (socket.writable)
      socket.end(
        `HTTP/1.1 405 ${http.STATUS_CODES[405]}\r\nAllow: ${connectAllowHeader(target, routes)}\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\n${REQUEST_ID_HEADER}: ${requestIdOf(req)}\r\n${earlyAnswerHeaderLines()}Connection: close\r\n\r\n${text}`,
      );
    metrics()?.httpDuration.observe({ method: 'CONNECT', route: 'unknown', status: '405', tenant: NO_TENANT_LABEL }, 0);
  });
}
