/**
 * `DELETE /v1/sessions/{sessionId}` takes no body, as the write routes take no query parameter
 * (`writes-take-no-query.guard.ts`): a DELETE carrying one is refused with 400 `validation_failed`
 * (`parameter` `(body)`) before the body is read, and nothing is erased. The erasure has no
 * options, so a body would be ignored: `{"expectedRevision": "5"}` sent by a client expecting a
 * conditional erasure erased the session whatever its revision. Refused in Fastify's `onRequest`
 * stage, after the checks of that stage added before (the API key's 401 and the rate limit's 429
 * come first, as for a query parameter), so that the body is neither read nor asked for
 * (`Expect: 100-continue` gets this answer instead of `100 Continue`); the unread body is discarded
 * by Node and the connection stays open, as after a 415.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiErrorBody } from './api-error.filter';
import { declaresBody } from './early-answer';

/** The answer's body to a DELETE carrying a body. */
export const DELETE_TAKES_NO_BODY: ApiErrorBody = {
  code: 'validation_failed',
  message: 'DELETE takes no body: the erasure has no options (it erases the whole session); send the request without a body',
  parameter: '(body)',
};

/**
 * Makes `app` answer 400 `validation_failed` ({@link DELETE_TAKES_NO_BODY}) to a DELETE to a route
 * that declares a body ({@link declaresBody}), in an `onRequest` hook (see the module doc); a
 * DELETE to a path no route has keeps its 404 or 405. Call after the `onRequest` checks that are
 * to come first.
 */
export function refuseDeleteBodies(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'DELETE' || request.is404 || !declaresBody(request.raw)) return done();
    void reply.code(400).send(DELETE_TAKES_NO_BODY);
  });
}
