/**
 * `DELETE /v1/sessions/{sessionId}` takes no body, as the write routes take no query parameter
 * (`writes-take-no-query.guard.ts`): a DELETE carrying one is refused with 400 `validation_failed`
 * (`parameter` `(body)`), and nothing is erased. The erasure has no options, so a body would be
 * ignored: `{"expectedRevision": "5"}` sent by a client expecting a conditional erasure erased the
 * session whatever its revision. Refused in Fastify's `onRequest` stage, after the checks of that
 * stage added before (the API key's 401 and the rate limit's 429 come first, as for a query
 * parameter).
 *
 * An empty body is no body, whatever the headers say of it: `Content-Length: 0` (with any
 * `Content-Type`, as some clients send `Content-Type: application/json` on every request), or a
 * chunked body that ends without a byte (what a client streaming an empty body sends). Such a
 * DELETE erases as one without a body does.
 *
 * - A body declared by `Content-Length` (above 0) is refused before it is read (and not asked for:
 *   `Expect: 100-continue` gets this answer instead of `100 Continue`); the unread body is discarded
 *   by Node and the connection stays open, as after a 415.
 * - A chunked body is read until its first byte or its end: ended empty, the DELETE goes on; a byte,
 *   and the DELETE is refused, the rest of the body read and discarded within bounds and the
 *   connection closed after the answer (`answerBeforeBody`: its length is not known). One sent
 *   with `Expect: 100-continue` is refused before it is sent (the client says it has a body).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiErrorBody } from './api-error.filter';
import { answerBeforeBody, declaresBody, expectsContinue, type DiscardLimits } from './early-answer';
import { requestAbortedError } from './request-aborted';

/** The answer's body to a DELETE carrying a body. */
export const DELETE_TAKES_NO_BODY: ApiErrorBody = {
  code: 'validation_failed',
  message: 'DELETE takes no body: the erasure has no options (it erases the whole session); send the request without a body',
  parameter: '(body)',
};

/**
 * Makes Fastify route `req` as a request without a body: its `Content-Type` and `Transfer-Encoding`
 * dropped, so that no body parser is looked for (Fastify answers 415 to a type it has no parser
 * for, even for an empty body) nor run on a body already read to its end.
 */
function routeAsBodiless(req: IncomingMessage): void {
  delete req.headers['content-type'];
  delete req.headers['transfer-encoding'];
}

/**
 * Reads the chunked body of `req` until its first byte or its end, and says which: `'empty'` (it
 * ended without a byte), `'body'` (a byte arrived: the stream is left flowing, for the rest to be
 * discarded) or `'aborted'` (the connection closed, or the client half-closed it, before the end).
 */
function firstByteOrEnd(req: IncomingMessage, outcome: (found: 'empty' | 'body' | 'aborted') => void): void {
  if (req.aborted) return outcome('aborted');
  const finish = (found: 'empty' | 'body' | 'aborted') => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('aborted', onAborted);
    outcome(found);
  };
  const onData = (chunk: Buffer) => {
    if (chunk.length > 0) finish('body');
  };
  const onEnd = () => finish('empty');
  const onAborted = () => finish('aborted');
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('aborted', onAborted);
  // A client closing its connection mid-body also errors the stream: the abort answers it.
  req.on('error', () => undefined);
}

/**
 * Makes `app` answer 400 `validation_failed` ({@link DELETE_TAKES_NO_BODY}) to a DELETE carrying a
 * body to a route (see the module doc: an empty body is no body), in an `onRequest` hook; a DELETE
 * to a path no route has keeps its 404 or 405. A chunked body cut short is answered 400
 * `request_aborted`. Call after the `onRequest` checks that are to come first; `limits` bound what
 * is discarded of a refused chunked body.
 */
export function refuseDeleteBodies(app: FastifyInstance, limits?: DiscardLimits): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (request.method !== 'DELETE' || request.is404) return done();
    const req = request.raw;
    if (!declaresBody(req)) {
      routeAsBodiless(req);
      return done();
    }
    if (req.headers['transfer-encoding'] === undefined || expectsContinue(req)) return void reply.code(400).send(DELETE_TAKES_NO_BODY);
    firstByteOrEnd(req, (found) => {
      if (found === 'aborted') return done(requestAbortedError());
      if (found === 'body') return answerBeforeBody(request, reply, 400, DELETE_TAKES_NO_BODY, limits);
      routeAsBodiless(req);
      done();
    });
  });
}
