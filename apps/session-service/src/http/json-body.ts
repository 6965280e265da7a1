/**
 * Request bodies on Fastify: only JSON, read once, within `MAX_BODY_BYTES`.
 *
 * - A POST/PUT/PATCH that carries a body must say it is JSON (`Content-Type: application/json`,
 *   or any `+json` type); otherwise it is answered 415 `unsupported_media_type` before the body is
 *   read (a form-encoded `curl -d` would otherwise reach validation as an empty body).
 * - JSON bodies are read by body-parser's JSON reader (the one Express used): gzip, deflate and br
 *   bodies are inflated, the limit counts the inflated bytes (413), a charset other than UTF-8 is
 *   answered 415, bytes that are not UTF-8 400 `malformed_body`, text that is not JSON 400
 *   `malformed_json` (error types mapped by `toApiError`). Any JSON value is accepted (validation
 *   says what the body must be).
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { json } from 'body-parser';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rejectDeepBody } from '../commands/body-depth';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json$/;

/** True when the request declares a body (a length above 0, or chunked transfer). */
function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** The 415 answer's body for a request whose body is not declared JSON (`type`: its media type, '' when absent). */
export function unsupportedMediaType(type: string): { code: string; message: string } {
  return {
    code: 'unsupported_media_type',
    message: `send the body as JSON with Content-Type: application/json (got ${type ? JSON.stringify(type) : 'no Content-Type'})`,
  };
}

/**
 * Fastify `onRequest` hook: answers 415 `unsupported_media_type` to a POST/PUT/PATCH with a body
 * that is not declared JSON; lets every other request through.
 */
export function requireJsonBody(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (!WITH_BODY.has(req.method) || !hasBody(req)) return done();
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (JSON_TYPE.test(type)) return done();
  void reply.code(415).send(unsupportedMediaType(type));
}

/**
 * body-parser `verify` hook: throws when the raw body is not valid UTF-8 (body-parser would
 * otherwise replace bad bytes with U+FFFD silently; the error filter answers 400 `malformed_body`),
 * or nests deeper than `MAX_BODY_DEPTH` ({@link rejectDeepBody}: 400 `malformed_json`). Both
 * checks are linear and allocate nothing (`isUtf8` validates without decoding a copy).
 */
export function rejectInvalidBody(_req: unknown, _res: unknown, buffer: Buffer): void {
  if (!isUtf8(buffer)) throw new TypeError('the body is not valid UTF-8');
  rejectDeepBody(buffer);
}

/**
 * Makes `app` parse JSON bodies (see the module doc) of at most `maxBodyBytes` (after inflating),
 * and answer 415 to bodies of other types. Replaces Fastify's own JSON parser.
 */
export function useJsonBodies(app: FastifyInstance, maxBodyBytes: number): void {
  const read = json({ limit: maxBodyBytes, type: () => true, strict: false, verify: rejectInvalidBody });
  app.addHook('onRequest', requireJsonBody);
  app.removeAllContentTypeParsers();
  const parse = (request: FastifyRequest, _payload: unknown, done: (error: Error | null, body?: unknown) => void) => {
    const raw = request.raw as IncomingMessage & { body?: unknown };
    read(raw, {} as never, (error?: unknown) => (error ? done(error as Error) : done(null, raw.body)));
  };
  app.addContentTypeParser('application/json', parse);
  app.addContentTypeParser(/^application\/[a-z0-9.+-]*\+json/i, parse);
}
