/**
 * Answers with JSON the read side already encoded (UTF-8 bytes spliced from the stored JSON of
 * events, see `JsonBytes` in `@lib/session`), so Fastify sends them as they are instead of
 * stringifying an object: the same `content-type` as Fastify's own JSON answers.
 */
import type { FastifyReply } from 'fastify';

/** The content type Fastify gives a JSON answer it serializes itself. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Returns `answer` for Nest to send through `reply` (a route with `@Res({ passthrough: true })`):
 * a Buffer of JSON bytes gets the JSON content type and is sent verbatim; an object is returned
 * unchanged, for Fastify to serialize as usual.
 */
export function sendJsonBytes<T>(reply: FastifyReply, answer: T): T {
  if (Buffer.isBuffer(answer)) void reply.type(JSON_CONTENT_TYPE);
  return answer;
}
