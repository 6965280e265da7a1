/**
 * Answers given before a request's body is read (413 `payload_too_large` to a body declared over
 * `MAX_BODY_BYTES`; 401 `unauthorized` and 429 `rate_limited` on the `/v1` routes, see
 * `key-check-before-body.ts`), made so that the client reads them ({@link answerBeforeBody}).
 *
 * - **No `100 Continue` before the body is wanted.** Node answers `Expect: 100-continue` with
 *   `100 Continue` as soon as the head arrives, before any hook ran, so a client told to go on
 *   sends its body and is then refused. Here the `100 Continue` goes out only when the body is about
 *   to be read (Fastify's `preParsing` stage, after the `onRequest` checks): a request refused
 *   before (413, 415, 503, 401, 429) gets its final answer instead, and the client sends no body
 *   (RFC 9110 §10.1.1). Node then closes the connection after the answer (it does so for every
 *   final answer to an `Expect: 100-continue` sent without `100 Continue`).
 * - **Lingering close.** An answer with `Connection: close` makes Node close the socket as soon as
 *   the answer is written. A client still sending its body then gets a reset: its next write fails
 *   (EPIPE, ECONNRESET; undici's `fetch` throws `TypeError: fetch failed`) and the answer waiting in
 *   its receive buffer may be dropped unread. As RFC 9112 §9.6 asks, {@link discardBodyThenClose}
 *   half-closes instead (the answer, then FIN) and goes on reading and discarding the body until the
 *   client stops (undici and curl stop sending when the answer is complete and close), the body has
 *   all arrived, or a bound is reached ({@link DISCARD_MAX_BYTES}, {@link DISCARD_MAX_MS}); then it
 *   closes. Discarded chunks are dropped as they arrive: nothing of the body is kept.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Most body bytes read and discarded after an early answer before the connection is closed anyway (64 MiB). */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;

/** Longest time (ms) a connection stays open after an early answer, reading and discarding the body (5 s). */
export const DISCARD_MAX_MS = 5_000;

/** Bounds of {@link discardBodyThenClose}: bytes discarded at most, and time in milliseconds from the answer. */
export interface DiscardLimits {
  maxBytes: number;
  maxMs: number;
}

/** Sockets reading and discarding a body after an early answer ({@link discardBodyThenClose}), by server: closed at once when it closes. */
const discarding = new WeakMap<Server, Set<Socket>>();

/** Marks a socket {@link discardBodyThenClose} handles. */
const DISCARDING = Symbol('discarding body after an early answer');

/** True while `socket` reads and discards a body after an early answer (a client closing it then is expected, not an error). */
export function isDiscardingBody(socket: Socket): boolean {
  return (socket as Socket & { [DISCARDING]?: true })[DISCARDING] === true;
}

/**
 * Call before sending an answer with `Connection: close` to a request whose body is not read: once
 * the answer is written the socket is half-closed (FIN after the answer) instead of closed, and the
 * body is read and discarded (counted, never kept) until the client closes the connection, the
 * body has all arrived (then the socket is closed once its writes are done), more than
 * `limits.maxBytes` were discarded, or `limits.maxMs` passed (then it is destroyed). `server`: the
 * server of the request, whose close destroys such sockets at once ({@link closeDiscardingSockets}).
 *
 * Node closes the socket of an answer with `Connection: close` by calling `socket.destroySoon()`
 * when the answer is written; that call is replaced here by the half-close, for this socket only.
 */
export function discardBodyThenClose(
  req: IncomingMessage,
  server?: Server,
  limits: DiscardLimits = { maxBytes: DISCARD_MAX_BYTES, maxMs: DISCARD_MAX_MS },
): void {
  const socket = req.socket as Socket & { [DISCARDING]?: true; destroySoon?: () => void };
  // A request injected without a connection (Fastify's `inject`) has no socket to keep open.
  if (socket[DISCARDING] || typeof socket.destroy !== 'function' || typeof socket.end !== 'function') return;
  socket[DISCARDING] = true;
  const closeWhenWritten = socket.destroySoon?.bind(socket) ?? (() => socket.end());
  // Closed (once its writes are done) when the answer is written and the whole body has arrived: nothing more comes.
  let answered = false;
  let bodyIn = false;
  const closeWhenDone = () => {
    if (answered && bodyIn) closeWhenWritten();
  };
  socket.destroySoon = () => {
    answered = true;
    if (socket.writable) socket.end();
    closeWhenDone();
  };
  let sockets = server ? discarding.get(server) : undefined;
  if (server && !sockets) discarding.set(server, (sockets = new Set()));
  sockets?.add(socket);
  const timer = setTimeout(() => socket.destroy(), limits.maxMs);
  timer.unref();
  socket.once('close', () => {
    clearTimeout(timer);
    sockets?.delete(socket);
  });
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limits.maxBytes) socket.destroy();
  });
  req.on('end', () => {
    bodyIn = true;
    closeWhenDone();
  });
  // A client that stops sending and closes (as undici and curl do once they read the answer) aborts the request: expected.
  req.on('error', () => undefined);
}

/** Destroys the sockets of `server` still discarding a body after an early answer (Fastify's `preClose`, see {@link continueOnlyWhenReading}). */
export function closeDiscardingSockets(server: Server): void {
  for (const socket of discarding.get(server) ?? []) socket.destroy();
}

/** True when `req` declares a body: a Content-Length above 0, or a Transfer-Encoding (chunked). */
export function declaresBody(req: Pick<IncomingMessage, 'headers'>): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Answers `status` with the JSON `body` from an `onRequest` hook, before the request's body is
 * read. A request that declares a body ({@link declaresBody}) gets the answer with
 * `Connection: close`, and its body is read and discarded within `limits`
 * ({@link discardBodyThenClose}) so that a client still sending it reads the answer; one that sent
 * `Expect: 100-continue` gets it instead of `100 Continue` ({@link continueOnlyWhenReading}) and
 * sends no body. A request without a body keeps its connection. Headers already set on `reply` are sent too.
 */
export function answerBeforeBody(request: FastifyRequest, reply: FastifyReply, status: number, body: unknown, limits?: DiscardLimits): void {
  if (declaresBody(request.raw)) {
    discardBodyThenClose(request.raw, request.server.server, limits);
    void reply.header('connection', 'close');
  }
  void reply.code(status).send(body);
}

/** True when `req` asks for `100 Continue` before sending its body. */
export function expectsContinue(req: IncomingMessage): boolean {
  return /(?:^|,)\s*100-continue\s*(?:,|$)/i.test(req.headers.expect ?? '');
}

/**
 * Makes `app` send `100 Continue` to a request with `Expect: 100-continue` only when its body is
 * about to be read (`preParsing`), not when its head arrives: an answer given before (413 for a
 * declared body over the limit, 415, 503 while shutting down, 401 and 429 on `/v1`) reaches the client before it sends
 * the body. Also destroys the sockets discarding a body ({@link discardBodyThenClose}) when `app`
 * closes, so that they do not hold its close for up to {@link DISCARD_MAX_MS}.
 */
export function continueOnlyWhenReading(app: FastifyInstance): void {
  const server = app.server;
  // With a `checkContinue` listener Node sends no 100 Continue and emits no `request` itself.
  server.on('checkContinue', (req: IncomingMessage, res) => server.emit('request', req, res));
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (expectsContinue(request.raw) && !reply.raw.headersSent) reply.raw.writeContinue();
    done(null, payload);
  });
  app.addHook('preClose', (done) => {
    closeDiscardingSockets(server);
    done();
  });
}
