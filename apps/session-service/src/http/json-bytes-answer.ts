/**
 * Answers with JSON as UTF-8 bytes that the route built itself, so Fastify sends them as they are
 * instead of stringifying an object on the event loop in one stretch: bytes the read side already
 * encoded (spliced from the stored JSON of events, see `JsonBytes` in `@lib/session`), or an
 * answer object serialized here in pieces with turns of the event loop between them, so a 5 MB
 * window of 30,000 events does not hold `/health` and every other tenant for the whole of its
 * `JSON.stringify` (newcomer ncnoisy F1). The same `content-type` as Fastify's own JSON answers;
 * the body is one Buffer, so `Content-Length`, `HEAD` and an error answered before it (4xx/5xx,
 * thrown before the bytes exist) are as for any other answer.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { stringifyChunked } from '@discoveryjs/json-ext';
import type { FastifyReply } from 'fastify';

/** The content type Fastify gives a JSON answer it serializes itself. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Milliseconds of serializing between two turns given back to the event loop (well inside docs/http-api.md's 200 ms for `/health`). */
export const SERIALIZE_MS_PER_TURN = 10;

/** Characters of JSON text the serializer produces at a time (between two looks at the clock). */
const CHUNK_CHARS = 64 * 1024;

/**
 * `Buffer.from(JSON.stringify(value))`, the same bytes, built in chunks of {@link CHUNK_CHARS}
 * characters by `@discoveryjs/json-ext`'s `stringifyChunked`, giving the event loop a turn after
 * every `msPerTurn` ms of work. `value` must not change until the promise settles (an answer
 * built for this request).
 * @throws TypeError as `JSON.stringify` does (a bigint, a cycle).
 */
export async function jsonInTurns(value: unknown, msPerTurn = SERIALIZE_MS_PER_TURN): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let since = performance.now();
  for (const chunk of stringifyChunked(value, { highWaterMark: CHUNK_CHARS })) {
    chunks.push(Buffer.from(chunk, 'utf8'));
    if (performance.now() - since >= msPerTurn) {
      await nextTurn();
      since = performance.now();
    }
  }
  return Buffer.concat(chunks);
}

/**
 * The bytes for Nest to send through `reply` (a route with `@Res({ passthrough: true })`), with
 * the JSON content type: a Buffer of JSON bytes as it is, an answer object serialized by
 * {@link jsonInTurns} (the bytes Fastify's `JSON.stringify` would have sent).
 */
export async function sendJsonBytes(reply: FastifyReply, answer: Buffer | object): Promise<Buffer> {
  const bytes = Buffer.isBuffer(answer) ? answer : await jsonInTurns(answer);
  void reply.type(JSON_CONTENT_TYPE);
  return bytes;
}
