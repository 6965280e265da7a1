/**
 * Express middleware: a POST/PUT/PATCH request that carries a body must say it is JSON
 * (`Content-Type: application/json`, or any `+json` type). Otherwise it is answered 415
 * `unsupported_media_type` before the body is read (a form-encoded `curl -d` would otherwise
 * reach validation as an empty body).
 */
import { isUtf8 } from 'node:buffer';
import type { NextFunction, Request, Response } from 'express';
import { rejectDeepBody } from '../commands/body-depth';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** True when the request declares a body (a length above 0, or chunked transfer). */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Answers 415 `unsupported_media_type` to a POST/PUT/PATCH with a body that is not declared JSON; otherwise calls `next`. */
export function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!WITH_BODY.has(req.method) || !hasBody(req)) return next();
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type)) return next();
  res.status(415).json({
    code: 'unsupported_media_type',
    message: `send the body as JSON with Content-Type: application/json (got ${type ? JSON.stringify(type) : 'no Content-Type'})`,
  });
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
