/**
 * A request whose request line names an HTTP version other than 1.0 or 1.1 is refused (newcomer
 * finding: `GET /health HTTP/2.0` and a request line without a version, HTTP/0.9's form, were
 * answered 200). Node's parser refuses other versions (1.2, 3.0) itself but lets 2.0 and 0.9
 * through, and reads them as HTTP/1.x: a client that believes it speaks HTTP/2 over this
 * connection (prior knowledge sends its own preface, which Node refuses; a hand-written `HTTP/2.0`
 * line does not) got an HTTP/1.1 answer to a request whose framing rules it did not follow. The
 * service speaks HTTP/1.1 and HTTP/1.0 only: 400 `malformed_request` (as other request lines Node
 * lets through but HTTP/1.x does not allow), the request unread.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ApiErrorBody } from './api-error.filter';
import { answerBeforeBody } from './early-answer';
import { refusedRequestLines, shortPath } from './framework-answers';
import type { RateLimitedWarnings } from '../observability/rate-limited-lines';

/** Whether the request line's version (`IncomingMessage.httpVersion`: `0.9` when the line has none) is one the service speaks: 1.0 or 1.1. */
export function isSpokenVersion(raw: Pick<IncomingMessage, 'httpVersionMajor' | 'httpVersionMinor'>): boolean {
  return raw.httpVersionMajor === 1 && (raw.httpVersionMinor === 0 || raw.httpVersionMinor === 1);
}

/** The answer to a request line naming `version` (`IncomingMessage.httpVersion`), which the service does not speak. */
export function unspokenVersion(version: string): ApiErrorBody {
  const named = version === '0.9' ? 'no HTTP version (HTTP/0.9 form)' : `HTTP/${version}`;
  return {
    code: 'malformed_request',
    message: `the request line names ${named}: the service speaks HTTP/1.1 and HTTP/1.0 only; end the request line with HTTP/1.1 (curl: --http1.1), or put an HTTP/2 proxy in front of the service; the request was not read`,
  };
}

/**
 * Makes `app` answer a request whose version the service does not speak ({@link isSpokenVersion})
 * 400 `malformed_request` ({@link unspokenVersion}) with `Connection: close`, before anything reads
 * its path, query or body: nothing is written (an `onRequest` hook, registered with the other
 * refusals of a request head). A body it declares is discarded within bounds so that the client
 * reads the answer (`answerBeforeBody`). One warn line through `lines`, as for the other refused heads.
 */
export function refuseUnspokenVersions(app: FastifyInstance, lines: RateLimitedWarnings = refusedRequestLines()): void {
  app.addHook('onRequest', (request, reply, done) => {
    const raw: IncomingMessage = request.raw;
    if (isSpokenVersion(raw)) return done();
    const answer = unspokenVersion(raw.httpVersion);
    lines.warn(`refused ${request.method} ${shortPath(raw.url ?? '')}: 400 ${answer.code} (HTTP/${raw.httpVersion})`, `400 ${answer.code} (HTTP version)`);
    void reply.header('connection', 'close');
    answerBeforeBody(request, reply, 400, answer);
  });
}
