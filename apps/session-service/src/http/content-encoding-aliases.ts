/**
 * `Content-Encoding: x-gzip` read as `gzip`: RFC 9110 §8.4.1.3 says a recipient SHOULD treat
 * `x-gzip` as equivalent to `gzip`, and body-parser (which inflates bodies) knows only `gzip`,
 * `deflate` and `br`, so it answered 415 (newcomer ncpolyglot A4). The header is rewritten before
 * the body is read; any case and surrounding spaces, as for `gzip`. Other codings are left as sent.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** The coding a `Content-Encoding` value names, with `x-gzip` read as `gzip` (RFC 9110 §8.4.1.3); other values as sent. */
export function withoutLegacyAlias(encoding: string): string {
  return encoding.trim().toLowerCase() === 'x-gzip' ? 'gzip' : encoding;
}

/** Rewrites an `x-gzip` Content-Encoding of `req` to `gzip` (see the module doc). */
export function readXGzipAsGzip(req: Pick<IncomingMessage, 'headers'>): void {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined) req.headers['content-encoding'] = withoutLegacyAlias(encoding);
}

/** Makes `app` read a body sent with `Content-Encoding: x-gzip` as gzip (an `onRequest` hook, before the body is read). */
export function acceptXGzip(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    readXGzipAsGzip(request.raw);
    done();
  });
}
