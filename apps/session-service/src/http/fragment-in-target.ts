/**
 * A request target holding `#` is refused (newcomer finding: `DELETE /v1/sessions/S#` erased session
 * `S`). A fragment is never sent in HTTP: the origin-form target is `absolute-path [ "?" query ]`
 * (RFC 9112 §3.2.1, absolute form §3.2.2 likewise without one), and clients strip `#…` before sending. Node's parser lets
 * `#` through, and the router (find-my-way) ends the path there: `/v1/sessions/S#x` was routed as
 * session `S`, and what followed `#` was read as the query string, so a mistyped or unencoded `#`
 * (`?q=C#`) reached another resource, or another parameter, than the one the client meant.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ApiErrorBody } from './api-error.filter';
import { answerBeforeBody } from './early-answer';
import { refusedRequestLines, shortPath } from './framework-answers';
import type { RateLimitedWarnings } from '../observability/rate-limited-lines';

/** The answer to a request whose target holds `#` (400 `malformed_request`, as other targets Node's parser lets through but HTTP does not allow). */
export const FRAGMENT_IN_TARGET: ApiErrorBody = {
  code: 'malformed_request',
  message:
    'the request target holds "#": a URL\'s fragment is never sent in HTTP (RFC 9112 section 3.2.1): remove "#" and what follows it, or percent-encode a "#" that belongs to a value as %23 (e.g. q=C%23); the request was not read',
};

/** Whether the request target `url` (`IncomingMessage.url`: origin or absolute form) holds `#` anywhere (path or query). */
export function hasFragment(url: string): boolean {
  return url.includes('#');
}

/**
 * Makes `app` answer a request whose target holds `#` ({@link hasFragment}) 400 `malformed_request`
 * ({@link FRAGMENT_IN_TARGET}) with `Connection: close`, before anything reads its path, query or
 * body: nothing is written (an `onRequest` hook; call it with the missing-Host answer, before the
 * routes' own checks). A body it declares is discarded within bounds so that the client reads the
 * answer (`answerBeforeBody`). One warn line through `lines`, as for the other refused request heads.
 */
export function refuseFragments(app: FastifyInstance, lines: RateLimitedWarnings = refusedRequestLines()): void {
  app.addHook('onRequest', (request, reply, done) => {
    const raw: IncomingMessage = request.raw;
    if (!hasFragment(raw.url ?? '')) return done();
    lines.warn(
      `refused ${request.method} ${shortPath(raw.url ?? '')}: 400 ${FRAGMENT_IN_TARGET.code} ("#" in the request target)`,
      `400 ${FRAGMENT_IN_TARGET.code} ("#" in the request target)`,
    );
    void reply.header('connection', 'close');
    answerBeforeBody(request, reply, 400, FRAGMENT_IN_TARGET);
  });
}
