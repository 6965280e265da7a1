/**
 * The answers Fastify and Node's HTTP parser give themselves, before any controller or Nest filter
 * runs, in our `{ code, message }` shape, logged and counted in `http_request_duration_seconds`
 * like every other answer (issue 17 hardening):
 *
 * - a path that is not valid percent-encoded UTF-8 → 400 `invalid_path`;
 * - a path parameter longer than the router's limit → 414 `uri_too_long` (the limit,
 *   {@link MAX_PARAM_LENGTH}, is above what Node's parser accepts for a whole request head, so in
 *   practice an over-long id reaches its handler and is answered 400 `invalid_session_id` or 404
 *   `compaction_not_found`);
 * - a request line longer than Node's header limit (16 KiB by default, `http.maxHeaderSize`) → 414
 *   `uri_too_long`, other headers over that limit → 431 `headers_too_large`, a request Node cannot
 *   parse (an unknown method, a broken request line) → 400 `malformed_request` naming the parser's
 *   reason (a head whose lines end in a bare LF, or a `Transfer-Encoding` Node refuses, told what to
 *   send instead), a request whose
 *   head or body is not received within `REQUEST_TIMEOUT_MS` → 408 `request_timeout`. These are
 *   written on the socket, which is then closed. A client that half-closes inside a body is not
 *   among them: its request is answered 400 `request_aborted` through its route (`half-close.ts`);
 * - an HTTP/1.1 request without a `Host` header → 400 `malformed_request` ({@link answerMissingHost};
 *   the server is made with `requireHostHeader: false`, else Node answers a bare 400 itself), and any
 *   request with more than one `Host` header line → 400 `malformed_request` (RFC 9112 §3.2; Node
 *   keeps the first and drops the others, so a proxy routing by another line would disagree);
 * - a request target holding `#` → 400 `malformed_request` (`fragment-in-target.ts`);
 * - `CONNECT` → 405 `method_not_allowed` (`connect-method.ts`); a request offering an upgrade is
 *   answered as HTTP/1.1 with `Connection: close` (`upgrade-offers.ts`); a transfer coding other
 *   than `chunked` → 501 `unsupported_transfer_coding` (`transfer-codings.ts`);
 * - an `Expect` header other than `100-continue` → 417 `unsupported_expectation`
 *   ({@link answerUnsupportedExpectations}, Node's `checkExpectation` event; else a bare 417);
 * - any request arriving once the service has started shutting down → 503 `shutting_down` with
 *   `Retry-After: 1` ({@link answerWhileShuttingDown});
 * - a known path asked with a method it does not have → 405 `method_not_allowed` with an `Allow`
 *   header, counted under the path's route pattern; a route's path with a trailing slash → 404
 *   `route_not_found` saying to remove it ({@link answerNearRoutes});
 * - any other path no route has → 404 `route_not_found`, before its body is read or parsed
 *   ({@link answerUnroutedBeforeBody}; under `/v1` with `API_KEYS`, after the key's 401).
 */
import * as http from 'node:http';
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ROUTE_NOT_FOUND, toApiError, type ApiErrorBody } from './api-error.filter';
import { answerBeforeBody, isDiscardingBody } from './early-answer';
import { abortBodyKeepingConnection, requestInFlight, wholeRequestUnanswered } from './half-close';
import { deferHeldRequestTimeout } from './pipelined-in-order';
import { NO_TENANT_LABEL, type ServiceMetrics } from '../observability/metrics';
import { markExpectedAnswer } from '../observability/request-log-level';
import { RateLimitedWarnings } from '../observability/rate-limited-lines';
import { REQUEST_ID_HEADER, requestIdOf, requestIdOfRawHead } from '../observability/request-id';
import { quoteInput } from '@lib/compaction';
import { earlyAnswerHeaderLines, writeEarlyAnswerHeaders } from './security-headers';
import { resolvedTenantOf } from '../auth/resolved-tenant';

/**
 * Longest path parameter (UTF-16 code units after percent-decoding) the router hands to a handler.
 * Node refuses request heads over 16 KiB before routing, so with this limit every id a client can
 * send reaches the handler's own check, which names the parameter and its limit.
 */
export const MAX_PARAM_LENGTH = 16_384;

const logger = new Logger('HTTP');

/**
 * The rate-limited warn lines ({@link RateLimitedWarnings}: 10 per 60 s, then one line telling how
 * many more) of requests refused before they reach a route: {@link answerFrameworkErrors},
 * {@link answerMissingHost} and {@link answerUnsupportedExpectations}. Anyone can send them, without
 * a key. Close it when the service stops, so the count of the last window is told.
 */
export function refusedRequestLines(): RateLimitedWarnings {
  return new RateLimitedWarnings(logger, 'requests refused before reaching a route (path, Host or Expect header)');
}

/**
 * The rate-limited warn lines of requests Node could not parse, or that timed out
 * ({@link answerClientErrors}); close it when the service stops, as {@link refusedRequestLines}.
 */
export function unparseableRequestLines(): RateLimitedWarnings {
  return new RateLimitedWarnings(logger, 'requests refused as Node could not parse them (or timed out)');
}

/** Shortens a path for a log line (an attacker's 16 KiB path is not worth logging whole). */
export function shortPath(url: string): string {
  const path = url.split('?')[0];
  return path.length > 200 ? `${path.slice(0, 200)}… (${path.length} characters)` : path;
}

/** The status and body of a Fastify framework error (`frameworkErrors` option). */
export function frameworkErrorAnswer(error: FastifyError): { status: number; body: ApiErrorBody } {
  if (error.code === 'FST_ERR_BAD_URL') return { status: 400, body: { code: 'invalid_path', message: 'the URL path is not valid percent-encoded UTF-8' } };
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return { status: 414, body: { code: 'uri_too_long', message: `a path segment is longer than ${MAX_PARAM_LENGTH} characters; ids are at most 128` } };
  return toApiError(error);
}

/**
 * Open mode's Host check (`foreign-host.ts`, `foreignHostRefusal`): the 403 answer for a request whose
 * Host is refused, told by its own lines; undefined when the request is answered as usual.
 */
export type HostRefusal = (request: FastifyRequest) => ApiErrorBody | undefined;

/**
 * Builds Fastify's `frameworkErrors` handler: answers in our shape, logs one line (method, short
 * path, status, code) through `lines` (rate-limited: {@link refusedRequestLines}) and counts the
 * answer under route `unknown` (Fastify runs no `onResponse` hook for these answers). `metrics()`
 * gives the metrics once the application exists. `hostRefusal` (open development mode's Host check)
 * comes first, as it does for every routed request: a foreign Host with a path that is not valid
 * percent-encoding is answered 403 `host_not_allowed`, not 400 `invalid_path` (DNS rebinding: such a
 * request gets nothing but the refusal); that refusal is told by the Host check's lines, not `lines`.
 */
export function answerFrameworkErrors(
  metrics: () => ServiceMetrics | undefined,
  lines: RateLimitedWarnings = refusedRequestLines(),
  hostRefusal?: HostRefusal,
) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const started = process.hrtime.bigint();
    const refusedHost = hostRefusal?.(request);
    const { status, body } = refusedHost !== undefined ? { status: 403, body: refusedHost } : frameworkErrorAnswer(error);
    if (refusedHost === undefined) lines.warn(`refused ${request.method} ${shortPath(request.url)}: ${status} ${body.code}`, `${status} ${body.code}`);
    // No onRequest hook ran: the headers every answer carries are written here.
    writeEarlyAnswerHeaders(reply.raw);
    void reply.header(REQUEST_ID_HEADER, request.id).code(status).send(body);
    metrics()?.httpDuration.observe(
      { method: request.method, route: 'unknown', status: String(status), tenant: NO_TENANT_LABEL },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
  };
}

/** The answer to an HTTP/1.1 request without a `Host` header (HTTP/1.1 requires one, RFC 9112 §3.2). */
export const HOST_REQUIRED: ApiErrorBody = {
  code: 'malformed_request',
  message: 'an HTTP/1.1 request needs a Host header (e.g. Host: 127.0.0.1:3000); the request was not read',
};

/** Whether `raw` is an HTTP/1.1 (or later 1.x) request without a `Host` header. */
export function lacksRequiredHost(raw: Pick<http.IncomingMessage, 'httpVersionMajor' | 'httpVersionMinor' | 'headers'>): boolean {
  return raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1 && raw.headers.host === undefined;
}

/**
 * The answer to a request with `count` (2 or more) `Host` header lines (RFC 9112 §3.2: a server must
 * answer 400; Node keeps only the first line's value, which a proxy routing by another would not).
 */
export function duplicateHostAnswer(count: number): ApiErrorBody {
  return {
    code: 'malformed_request',
    message: `the request has ${count} Host header lines; HTTP/1.1 allows exactly one (RFC 9112 section 3.2): send a single Host header; the request was not read`,
  };
}

/** How many `Host` header lines `raw` carries (`rawHeaders`: names and values alternate, names in any case). */
export function hostHeaderCount(raw: Pick<http.IncomingMessage, 'rawHeaders'>): number {
  let count = 0;
  for (let i = 0; i < raw.rawHeaders.length; i += 2) if (raw.rawHeaders[i].toLowerCase() === 'host') count++;
  return count;
}

/**
 * Makes `app` answer an HTTP/1.1 request without a `Host` header 400 `malformed_request`
 * ({@link HOST_REQUIRED}), and any request with more than one `Host` header line 400
 * `malformed_request` ({@link duplicateHostAnswer}), with `Connection: close`, before anything else
 * (an `onRequest` hook, on every route, so counted in the metrics; one warn line through `lines`, as
 * {@link answerFrameworkErrors} writes, since Node's parser-level refusals are logged at warn too).
 * The server must be made with `requireHostHeader: false` (Node would otherwise answer a bare 400
 * without any log line).
 */
export function answerMissingHost(app: FastifyInstance, lines: RateLimitedWarnings = refusedRequestLines()): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (lacksRequiredHost(request.raw)) {
      lines.warn(
        `refused ${request.method} ${shortPath(request.url)}: 400 ${HOST_REQUIRED.code} (no Host header)`,
        `400 ${HOST_REQUIRED.code} (no Host header)`,
      );
      return void reply.code(400).header('connection', 'close').send(HOST_REQUIRED);
    }
    const hosts = hostHeaderCount(request.raw);
    if (hosts <= 1) return done();
    lines.warn(
      `refused ${request.method} ${shortPath(request.url)}: 400 ${HOST_REQUIRED.code} (${hosts} Host headers)`,
      `400 ${HOST_REQUIRED.code} (several Host headers)`,
    );
    void reply.code(400).header('connection', 'close').send(duplicateHostAnswer(hosts));
  });
}

/** The answer to an `Expect` header other than `100-continue` (`expectation`: its value, quoted in the message). */
export function unsupportedExpectationAnswer(expectation: string): { status: number; body: ApiErrorBody } {
  return {
    status: 417,
    body: {
      code: 'unsupported_expectation',
      message: `Expect: ${quoteInput(expectation)} is not supported; the service meets only Expect: 100-continue (or send no Expect header)`,
    },
  };
}

/**
 * Makes `server` answer a request whose `Expect` header is not `100-continue` (Node's
 * `checkExpectation` event, which replaces Node's bare 417) with 417 `unsupported_expectation`
 * and `Connection: close` (its body is not read) carrying its `X-Request-Id` ({@link requestIdOf}),
 * logs one line through `lines` as {@link answerFrameworkErrors} does and counts the answer under
 * route `unknown`. `metrics()` gives the metrics once the application exists.
 */
export function answerUnsupportedExpectations(
  server: http.Server,
  metrics: () => ServiceMetrics | undefined,
  lines: RateLimitedWarnings = refusedRequestLines(),
): void {
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { status, body } = unsupportedExpectationAnswer(String(req.headers.expect ?? ''));
    lines.warn(`refused ${req.method} ${shortPath(req.url ?? '')}: ${status} ${body.code}`, `${status} ${body.code}`);
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      connection: 'close',
      [REQUEST_ID_HEADER]: requestIdOf(req),
    });
    res.end(text);
    metrics()?.httpDuration.observe({ method: req.method ?? 'unknown', route: 'unknown', status: String(status), tenant: NO_TENANT_LABEL }, 0);
  });
}

/** An error of Node's HTTP parser (`clientError` event): its code, llhttp's reason (e.g. `Invalid method encountered`), and the bytes received when parsing failed. */
export type ClientError = Error & { code?: string; reason?: string; rawPacket?: unknown };

/** What {@link clientErrorAnswer} needs to know of the server: its request timeout (ms), named in the 408 message. */
export interface ClientErrorOptions {
  requestTimeoutMs: number;
}

/**
 * Whether a header overflow is due to the request line itself: the bytes received (`rawPacket`)
 * hold no line end yet, or one of their lines is longer than the header limit (`limit` bytes; Node
 * counts the request line towards it) and is not a header field (`name:`). Such a line is a request
 * line, also one that follows another request's body on the connection (pipelined: the packet then
 * begins with that other request, newcomer ncapi71 F5).
 */
export function requestLineTooLong(rawPacket: unknown, limit: number = http.maxHeaderSize): boolean {
  if (!Buffer.isBuffer(rawPacket)) return true;
  if (rawPacket.indexOf('\n') < 0) return true;
  return rawPacket
    .toString('latin1')
    .split('\n')
    .some((line) => line.replace(/\r$/, '').length > limit && !HEADER_FIELD_START.test(line));
}

/** The start of a header field line: its name (an RFC 9110 token) and the colon. */
const HEADER_FIELD_START = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/;

/** The status and body answered to an error of Node's HTTP parser. */
export function clientErrorAnswer(err: ClientError, options: ClientErrorOptions = { requestTimeoutMs: 60_000 }): { status: number; body: ApiErrorBody } {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      status: 408,
      body: {
        code: 'request_timeout',
        message: `the request (its head or its body) did not arrive within ${options.requestTimeoutMs} ms (REQUEST_TIMEOUT_MS); send the whole request at once`,
      },
    };
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const kib = Math.round(http.maxHeaderSize / 1024);
    return requestLineTooLong(err.rawPacket)
      ? {
          status: 414,
          body: {
            code: 'uri_too_long',
            message: `the URL is longer than ${kib} KiB (the request line): shorten it, e.g. a shorter query string (such as recall's q) or shorter ids`,
          },
        }
      : { status: 431, body: { code: 'headers_too_large', message: `the request headers are larger than ${kib} KiB; send fewer or shorter headers` } };
  }
  if (urlNeedsEncoding(err.rawPacket))
    return {
      status: 400,
      body: {
        code: 'malformed_request',
        message:
          'the URL holds characters that must be percent-encoded (non-ASCII text, spaces): send the UTF-8 bytes of such text as %XX, e.g. 東京 as %E6%9D%B1%E4%BA%AC (curl: --data-urlencode with -G)',
      },
    };
  if (headLinesEndInBareLf(err.rawPacket))
    return {
      status: 400,
      body: {
        code: 'malformed_request',
        message:
          "the request's lines end in a bare LF: HTTP/1.1 and HTTP/1.0 end the request line and each header line with CRLF (\\r\\n), and the head with an empty CRLF line (e.g. printf 'GET /health HTTP/1.0\\r\\n\\r\\n')",
      },
    };
  if (err.code === 'HPE_INVALID_TRANSFER_ENCODING' || (err.code === 'HPE_INVALID_CONTENT_LENGTH' && /Transfer-Encoding/i.test(err.reason ?? '')))
    return {
      status: 400,
      body: {
        code: 'malformed_request',
        message:
          'the Transfer-Encoding header is not one the service reads: send Transfer-Encoding: chunked (the only transfer coding it reads) without Content-Length, or no Transfer-Encoding; to compress the body, use Content-Encoding: gzip (or deflate, br)',
      },
    };
  if (err.code === 'HPE_CLOSED_CONNECTION')
    return {
      status: 400,
      body: {
        code: 'malformed_request',
        message:
          'bytes arrived after a request that closes its connection (HTTP/1.0, or Connection: close) and declared no body: give a body its length in Content-Length (HTTP/1.1 may send Transfer-Encoding: chunked instead); without it the request has no body, and what followed it is not read',
      },
    };
  const reason = typeof err.reason === 'string' && err.reason !== '' ? ` (${err.reason})` : '';
  return {
    status: 400,
    body: {
      code: 'malformed_request',
      message: `the request is not valid HTTP/1.1 or HTTP/1.0${reason}: check its method, request line and headers; see /docs`,
    },
  };
}

/**
 * Whether the head of a refused request (`rawPacket`, the bytes received) ends a line with a bare LF
 * (`\n` not after `\r`): `printf 'GET / HTTP/1.0\n\n'`, which Node's parser refuses (RFC 9112 §2.2
 * lets a recipient accept a bare LF, and llhttp does not). Only the head is looked at:
 * the bytes up to its first empty line (CRLF CRLF, or LF LF).
 */
export function headLinesEndInBareLf(rawPacket: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false;
  const text = rawPacket.toString('latin1');
  const ends = [text.indexOf('\r\n\r\n'), text.indexOf('\n\n')].filter((at) => at >= 0);
  const head = ends.length ? text.slice(0, Math.min(...ends) + 2) : text;
  return /(^|[^\r])\n/.test(head);
}

/**
 * Whether the request line of a refused request (`rawPacket`, the bytes received) has a URL with
 * bytes HTTP/1.1 does not allow unencoded: non-ASCII (raw UTF-8 text) or control characters. The
 * line is `METHOD SP URL SP VERSION`; a URL holding a space makes more than three parts.
 */
export function urlNeedsEncoding(rawPacket: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false;
  const end = rawPacket.indexOf('\n');
  const line = rawPacket
    .subarray(0, end < 0 ? rawPacket.length : end)
    .toString('latin1')
    .replace(/\r$/, '');
  const parts = line.split(' ');
  if (parts.length > 3 && /^HTTP\/\d/.test(parts[parts.length - 1])) return true;
  return parts.length >= 2 && /[^\x21-\x7e]/.test(parts[1]);
}

/**
 * The log line of an answer to an error of Node's HTTP parser (`status` and `code`: the answer's;
 * `requestId`: the answer's `X-Request-Id`, named at the end when given): a request that did not
 * arrive within the request timeout is worded as a timeout (it was not refused for its content),
 * naming `tenant` when the key check resolved one (its body stalled: `timed out a request of tenant "tenantB" …`),
 * anything else as a request Node could not parse, with Node's code.
 */
export function clientErrorLogLine(
  err: ClientError,
  status: number,
  code: string,
  options: ClientErrorOptions = { requestTimeoutMs: 60_000 },
  requestId?: string,
  tenant?: string,
): string {
  const id = requestId === undefined ? '' : ` (request id ${requestId})`;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return `timed out a request${tenant === undefined ? '' : ` of tenant ${quoteInput(tenant)}`} whose head or body did not arrive within ${options.requestTimeoutMs} ms (REQUEST_TIMEOUT_MS); closed its connection: ${status} ${code}${id}`;
  return `refused a request Node could not parse (${err.code ?? 'error'}): ${status} ${code}${id}`;
}

/**
 * Builds Fastify's `clientErrorHandler`: writes {@link clientErrorAnswer} on the socket, with an
 * `X-Request-Id` ({@link requestIdOfRawHead}: the client's when the bytes received hold a usable
 * one, else a UUID), and closes it, logs one line naming that id and counts the answer (method and
 * route `unknown`). The lines go through `lines`, rate-limited ({@link unparseableRequestLines}: 10
 * per 60 s, then one line telling how many more, by Node's code and the answer): anyone, without a
 * key, can send unparseable requests. A socket reading and
 * discarding a body after its request was answered ({@link isDiscardingBody}: a client that stops
 * sending and closes leaves Node's parser inside the body, `HPE_INVALID_EOF_STATE`), or whose
 * request still receiving its body was answered already (e.g. 415 before the body), is closed
 * without an answer or a line: its request got its answer. A client that half-closes inside a body
 * whose request is not answered yet (`HPE_INVALID_EOF_STATE` with a {@link requestInFlight}) is not
 * sending a malformed request: that request is aborted and answered 400 `request_aborted` through its
 * route, on the connection kept open for it ({@link abortBodyKeepingConnection}). Needs
 * `answerHalfClosedConnections` (`half-close.ts`) on the server. The request timeout of a request
 * held behind the one ahead on its connection counts from when it is let through
 * ({@link deferHeldRequestTimeout}).
 */
export function answerClientErrors(
  metrics: () => ServiceMetrics | undefined,
  options?: ClientErrorOptions,
  lines: RateLimitedWarnings = unparseableRequestLines(),
) {
  const answer = (err: ClientError, socket: Socket, deferred = false): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    if (isDiscardingBody(socket)) return void socket.destroy();
    const inFlight = requestInFlight(socket);
    if (
      !deferred &&
      inFlight &&
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT' &&
      deferHeldRequestTimeout(inFlight.req, options?.requestTimeoutMs ?? 60_000, () => answer(err, socket, true))
    )
      return;
    if (inFlight?.res.headersSent) return void socket.destroy();
    if (inFlight && err.code === 'HPE_INVALID_EOF_STATE') return abortBodyKeepingConnection(inFlight);
    if (awaitingAnswersAhead.has(socket)) return;
    const ahead = wholeRequestUnanswered(socket);
    if (ahead) {
      // A whole request ahead of the unparseable bytes (pipelined, or sent just before them) is
      // answered first, then this answer closes the connection: closed now, its write could still
      // land with no answer, or be refused as if its client had left (newcomer ncapi71 F1).
      awaitingAnswersAhead.add(socket);
      socket.pause();
      ahead.res.once('finish', () => {
        awaitingAnswersAhead.delete(socket);
        answer(err, socket, deferred);
      });
      ahead.res.once('close', () => setImmediate(() => socket.destroyed || socket.destroy()));
      return;
    }
    const { status, body } = clientErrorAnswer(err, options);
    const requestId = requestIdOfRawHead(err.rawPacket);
    // A request whose head was read and key checked (its body stalled: 408) is its key's tenant's, as its other answers are.
    const tenant = inFlight && resolvedTenantOf(inFlight.req);
    lines.warn(clientErrorLogLine(err, status, body.code, options, requestId, tenant), `${err.code ?? 'error'}: ${status} ${body.code}`);
    if (socket.writable) {
      const text = JSON.stringify(body);
      socket.write(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${requestId}\r\n${earlyAnswerHeaderLines()}Connection: close\r\n\r\n${text}`,
      );
    }
    socket.destroy();
    // A request whose head was read (its body stalled: 408) is counted under its method and route; one Node could not parse, under `unknown`.
    metrics()?.httpDuration.observe(
      {
        method: inFlight?.req.method ?? 'unknown',
        route: (inFlight && matchedPatterns.get(inFlight.req)) ?? 'unknown',
        status: String(status),
        tenant: tenant ?? NO_TENANT_LABEL,
      },
      0,
    );
  };
  return (err: ClientError, socket: Socket): void => answer(err, socket);
}

/** Connections whose parser failed while a whole request ahead was still unanswered: their answer waits for it (later parser errors on them add nothing). */
const awaitingAnswersAhead = new WeakSet<Socket>();

/** The answer to a request arriving while the service shuts down. */
export const SHUTTING_DOWN: ApiErrorBody = {
  code: 'shutting_down',
  message: 'the service is shutting down; retry the request (it wrote nothing), on another replica or once the service is back',
};

/** How many requests {@link answerWhileShuttingDown} answered 503 `shutting_down` so far. */
export interface ShutdownRefusals {
  readonly count: number;
}

/**
 * Makes `app` answer 503 `shutting_down` with `Retry-After: 1` and `Connection: close` to every
 * request that arrives once `shuttingDown()` is true (an `onRequest` hook: before any handler, so
 * nothing is written; counted like other answers in the metrics). Each such request line logs at
 * debug without an error, as an expected answer (a load balancer may send hundreds while the
 * service drains): the returned {@link ShutdownRefusals} counts them for the one line the shutdown
 * logs when it is done (main.ts). Use with Fastify's `return503OnClosing: false`.
 * A request already in flight then is answered as usual, with `Connection: close` (an `onSend`
 * hook), so its keep-alive connection does not hold the server's close for the keep-alive timeout.
 */
export function answerWhileShuttingDown(app: FastifyInstance, shuttingDown: () => boolean): ShutdownRefusals {
  const refusals = { count: 0 };
  app.addHook('onRequest', (request, reply, done) => {
    if (!shuttingDown()) return done();
    refusals.count++;
    markExpectedAnswer(reply.raw, 'debug');
    void reply.code(503).header('retry-after', '1').header('connection', 'close').send(SHUTTING_DOWN);
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (shuttingDown()) void reply.header('connection', 'close');
    done(null, payload);
  });
  return refusals;
}

/** The routes a path has: the most specific matching route pattern (fewest parameters) and every method of every matching pattern, sorted. */
export interface RouteMatch {
  pattern: string;
  methods: string[];
}

/** Route patterns and their methods, to tell a wrong method (405) from an unknown path (404). */
export class RouteMethods {
  private readonly routes: Array<{ url: string; pattern: RegExp; method: string; params: number }> = [];

  /** Records a route (Fastify `onRoute` hook). */
  add(route: Pick<RouteOptions, 'url' | 'method'>): void {
    const parts = route.url.split('/');
    const source = parts.map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
    const params = parts.filter((part) => part.startsWith(':') || part === '*').length;
    for (const method of Array.isArray(route.method) ? route.method : [route.method])
      this.routes.push({ url: route.url, pattern: new RegExp(`^${source}$`), method, params });
  }

  /** The routes `path` (no query) has, or null when no route pattern matches it. */
  match(path: string): RouteMatch | null {
    const matching = this.routes.filter((r) => r.pattern.test(path));
    if (matching.length === 0) return null;
    const best = matching.reduce((a, b) => (b.params < a.params ? b : a));
    return { pattern: best.url, methods: [...new Set(matching.map((r) => r.method))].sort() };
  }

  /** The methods `path` (no query) has, sorted; empty when no route matches it. */
  allowed(path: string): string[] {
    return this.match(path)?.methods ?? [];
  }
}

/**
 * Route patterns by raw request: the route's for a routed request (recorded as it starts, so an answer given outside
 * Fastify's request, a 408 of a body that stalled, is counted under it: newcomer ncops67 F6, counted under `unknown`),
 * or the pattern its path matches for a request no route handled (405 answers).
 */
const matchedPatterns = new WeakMap<object, string>();

/**
 * The route pattern to count an answer under in the metrics when the router found no route for
 * the request's method (`request.routeOptions.url` is then undefined): the pattern its path
 * matches (a 405 `method_not_allowed`), else undefined (an unknown path).
 */
export function unroutedRoutePattern(request: FastifyRequest): string | undefined {
  return matchedPatterns.get(request.raw);
}

/** The 404 answer to `path` (no query) ending with `/` when the path without that slash is a route, else null. */
export function trailingSlashAnswer(table: RouteMethods, path: string, query: string): ApiErrorBody | null {
  if (path.length < 2 || !path.endsWith('/')) return null;
  const without = path.replace(/\/+$/, '');
  if (without === '' || !table.match(without)) return null;
  return {
    code: 'route_not_found',
    message: `no such route: routes have no trailing slash; remove it (${quoteInput(without + query)})`,
  };
}

/**
 * Makes `app` answer requests the router found no route for, when their path is close to one
 * (an `onRequest` hook, so the answers are counted and logged like others; call before routes are
 * registered): 405 `method_not_allowed` with an `Allow` header when the path has routes but not
 * for the method (counted under the path's route pattern, see {@link unroutedRoutePattern}); 404
 * `route_not_found` saying to remove the trailing slash when the path without it is a route.
 * Other unknown paths go on to the plain 404. Returns the table of routes it keeps (filled as
 * routes are registered), which `connect-method.ts` reads too.
 */
export function answerNearRoutes(app: FastifyInstance): RouteMethods {
  const table = new RouteMethods();
  app.addHook('onRoute', (route) => table.add(route));
  app.addHook('onRequest', (request, reply, done) => {
    const queryStart = request.url.indexOf('?');
    const path = queryStart < 0 ? request.url : request.url.slice(0, queryStart);
    // The router gives `/v1/sessions/` to `/v1/sessions/:sessionId` with an empty id: a trailing slash all the same,
    // unless the route itself ends with one (`/ui/`) or takes any path (`/ui/*`).
    const routed = request.routeOptions.url;
    if (routed !== undefined && !request.is404) matchedPatterns.set(request.raw, routed);
    if (request.is404 || (routed !== undefined && !routed.endsWith('/') && !routed.endsWith('*'))) {
      const slash = trailingSlashAnswer(table, path, queryStart < 0 ? '' : request.url.slice(queryStart));
      if (slash) return void reply.code(404).send(slash);
    }
    if (!request.is404) return done();
    const match = table.match(path);
    if (!match) return done();
    if (match.methods.includes(request.method)) return done();
    matchedPatterns.set(request.raw, match.pattern);
    const allowed = match.methods;
    void reply
      .code(405)
      .header('allow', allowed.join(', '))
      .send({ code: 'method_not_allowed', message: `${request.method} is not allowed here; use ${allowed.join(' or ')} (see /docs)` } satisfies ApiErrorBody);
  });
  return table;
}

/**
 * Makes `app` answer 404 `route_not_found` ({@link ROUTE_NOT_FOUND}) to a request no route has, in
 * an `onRequest` hook, before its body is read: a mistyped path with a body that is not JSON is
 * 404, not 400 `malformed_json`, and a 4 MiB body sent to it is not read and parsed first (Fastify
 * reads and parses the body of a request to its not-found handler as any other's). A request with
 * a body gets the answer with `Connection: close`, the rest of its body discarded within bounds, as
 * after a 401 (`answerBeforeBody`). Call after the `onRequest` answers that come first (405 and a
 * trailing slash's 404, {@link answerNearRoutes}; the API key's 401 and the rate limit's 429 under
 * `/v1`, `key-check-before-body.ts`).
 */
export function answerUnroutedBeforeBody(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    answerBeforeBody(request, reply, 404, { ...ROUTE_NOT_FOUND });
  });
}
