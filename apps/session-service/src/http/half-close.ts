/**
 * Clients that half-close their connection (shut down their sending side, a TCP FIN, as `nc -N`
 * does, or a client whose body stream ended early) and go on reading it. HTTP/1.1 allows it
 * (RFC 9112 §9.6: a client may close its side once its request is sent); the service answers:
 *
 * - **After a whole request**: the request is handled and answered as any other, then the
 *   connection is closed. Node's default ends the server's side as soon as the FIN arrives, so a
 *   request in flight then was handled (an append written) but its answer could not be sent, and it
 *   was not counted in the metrics ({@link answerHalfClosedConnections}).
 * - **Inside a body** (the FIN arrives before the `Content-Length` bytes or the last chunk): Node's
 *   parser reports `HPE_INVALID_EOF_STATE`, which was answered 400 `malformed_request` and logged as
 *   a request Node could not parse. The request is aborted instead, as when its connection closes
 *   (its body reader fails with `request.aborted`), but the connection is kept for the answer:
 *   400 `request_aborted`, which the client reads, counted and logged like any answer to its route
 *   ({@link abortBodyKeepingConnection}).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Longest time (ms) a connection whose client half-closed inside a body stays open for the answer (5 s). */
export const ABORTED_ANSWER_MAX_MS = 5_000;

/** A request and its response. */
export interface RequestInFlight {
  req: IncomingMessage;
  res: ServerResponse;
}

/** The latest request of each connection (the one Node's parser is in), by socket. */
const latest = new WeakMap<Socket, RequestInFlight>();

/**
 * Makes `server` answer the requests of a connection whose client half-closed it after sending them
 * (Node's `httpAllowHalfOpen`: the answers in flight are written, the connection closed after the
 * last), and records each connection's latest request for {@link requestInFlight}. Without it, Node
 * ends the server's side at the client's FIN, before the answers.
 */
export function answerHalfClosedConnections(server: Server): void {
  // Node's http.Server reads this property at each FIN (`socketOnEnd`); it has no constructor option.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => latest.set(req.socket, { req, res }));
}

/**
 * The request on `socket` whose head arrived but not yet all its body (`req.complete` false), or
 * undefined: no request yet, or the latest one is whole (a client error then is about the next
 * request's head). Known for the servers {@link answerHalfClosedConnections} was called on.
 */
export function requestInFlight(socket: Socket): RequestInFlight | undefined {
  const inFlight = latest.get(socket);
  return inFlight && !inFlight.req.complete ? inFlight : undefined;
}

/**
 * The latest request on `socket` whose head and body arrived but whose answer is not all written
 * yet (its handler still running, e.g. an append waiting for its write), or undefined. Node answers
 * a connection's requests in order, so when the latest one's answer is written, so are those of the
 * requests ahead of it. Known for the servers {@link answerHalfClosedConnections} was called on.
 */
export function wholeRequestUnanswered(socket: Socket): RequestInFlight | undefined {
  const inFlight = latest.get(socket);
  return inFlight && inFlight.req.complete && !inFlight.res.writableFinished && !inFlight.res.destroyed ? inFlight : undefined;
}

/**
 * Aborts the request `inFlight`, whose client half-closed the connection inside its body, as Node
 * aborts a request whose connection closes (`aborted` set and emitted: its body reader, body-parser,
 * fails with `request.aborted`, which the error filter answers 400 `request_aborted`), but without
 * closing the connection, so that the answer reaches the client. The answer carries
 * `Connection: close` (nothing more can be read on the connection), and the connection is destroyed
 * if it is still open {@link ABORTED_ANSWER_MAX_MS} later (a handler that never answers).
 */
export function abortBodyKeepingConnection(inFlight: RequestInFlight, maxMs: number = ABORTED_ANSWER_MAX_MS): void {
  const { req, res } = inFlight;
  const socket = req.socket;
  if (!res.headersSent) res.setHeader('connection', 'close');
  const timer = setTimeout(() => socket.destroy(), maxMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  req.aborted = true;
  req.emit('aborted');
}
