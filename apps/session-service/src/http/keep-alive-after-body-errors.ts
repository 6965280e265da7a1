/**
 * The connection of a request whose body was read but could not be used (400 `malformed_json`,
 * `malformed_body`, 413 `payload_too_large` for a chunked or compressed body, whose rest is read
 * and discarded first) stays open, as after any other 4xx (415, 400 `validation_failed`, 409): the
 * next request on it, pipelined or sent later, is answered. Fastify answers every error of a body
 * parser with `Connection: close` ("the client may send more data"): right when the body has not
 * all been read (its rest would be taken for the next request's head: 400 `request_aborted`, or an
 * error while the body still arrives), needless when it has, and it made the requests pipelined
 * behind a malformed body go unanswered.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** True when all of `req` has arrived (`complete`: Node's parser is past its body) and its body has been read to its end. */
export function wholeBodyRead(req: IncomingMessage): boolean {
  return req.complete && req.readableEnded;
}

/**
 * Adds an `onError` hook to `app` that drops a `Connection: close` set on an error answer before
 * its error handler runs when the whole body was read ({@link wholeBodyRead}). Fastify sets one on
 * every body parser's error; nothing else in the service sets one before an error is handled (an
 * answer during shutdown adds its own afterwards, in `onSend`; the answers given before the body,
 * 413 and 503, are not errors). Call before the routes are registered.
 */
export function keepAliveAfterBodyErrors(app: FastifyInstance): void {
  app.addHook('onError', (request, reply, _error, done) => {
    if (String(reply.getHeader('connection')).toLowerCase() === 'close' && wholeBodyRead(request.raw)) reply.removeHeader('connection');
    done();
  });
}
