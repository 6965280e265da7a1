/**
 * Request correlation: each request's id, the client's `X-Request-Id` when it is short printable
 * ASCII ({@link isUsableRequestId}), else one made here (a random UUID). Fastify's `genReqId` and
 * pino-http's read it through {@link requestIdOf}, so `request.id`, the request log line's `req.id`
 * and the `X-Request-Id` answer header ({@link echoRequestIds}) are the same id. A write route
 * refuses an unusable one before it runs (`../http/write-request-id.guard.ts`, with
 * {@link requestIdHeaderProblem}): there the id is the resend's key and the audit's, so a write
 * runs under a made-up id only when it came without the header.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** The header a client's request id is read from and every answer's id is sent in. */
export const REQUEST_ID_HEADER = 'x-request-id';
/** Longest client request id taken (characters): a longer one is refused on a write, replaced by a made-up id on a read. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** The rule of a usable request id in words, for messages and documentation. */
export const REQUEST_ID_RULE = `1 to ${MAX_REQUEST_ID_LENGTH} printable ASCII characters (letters, digits, punctuation) without spaces`;

/** A usable request id's characters: printable ASCII without the space (0x21 to 0x7E), at least one (its length is {@link MAX_REQUEST_ID_LENGTH} at most). */
export const REQUEST_ID_CHARACTERS = /^[\x21-\x7e]+$/;

/**
 * The one rule of a client's request id: what makes `value` (an `X-Request-Id` header's value as
 * Node gives it, latin1: one character per byte) unusable, in words with what to fix, e.g. `is 129
 * characters long, over the 128 allowed: shorten it (a UUID or a hash of your id fits)`; undefined
 * when it is usable: {@link REQUEST_ID_RULE}. Costs one regular-expression test for a usable id.
 */
export function requestIdProblem(value: string): string | undefined {
  if (value.length <= MAX_REQUEST_ID_LENGTH && REQUEST_ID_CHARACTERS.test(value)) return undefined;
  if (value.length === 0) return 'is empty: send an id, or leave the header out';
  if (value.length > MAX_REQUEST_ID_LENGTH)
    return `is ${value.length} characters long, over the ${MAX_REQUEST_ID_LENGTH} allowed: shorten it (a UUID or a hash of your id fits)`;
  let at = 0;
  while (at < value.length && value.charCodeAt(at) >= 0x21 && value.charCodeAt(at) <= 0x7e) at++;
  const code = value.charCodeAt(at);
  const what = code === 0x20 ? 'a space' : code === 0x09 ? 'a tab' : `0x${code.toString(16).toUpperCase().padStart(2, '0')}, not printable ASCII,`;
  return `holds ${what} at character ${at + 1}: remove or replace it (e.g. by - or _)`;
}

/** Whether `value` (a header's value) is a usable request id ({@link requestIdProblem}: {@link REQUEST_ID_RULE}). */
export function isUsableRequestId(value: unknown): value is string {
  return typeof value === 'string' && requestIdProblem(value) === undefined;
}

/**
 * What makes the `X-Request-Id` of the request `req` (the raw Node request) unusable
 * ({@link requestIdProblem}), or undefined when it has none or a usable one. A header sent on
 * several lines (which Node joins with `, `) is told so: `is sent on 2 header lines: send it once`.
 */
export function requestIdHeaderProblem(req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | undefined {
  const value = req.headers[REQUEST_ID_HEADER];
  if (value === undefined) return undefined;
  let lines = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === REQUEST_ID_HEADER) lines++;
  if (lines > 1) return `is sent on ${lines} header lines: send it once`;
  return requestIdProblem(Array.isArray(value) ? value.join(', ') : value);
}

/** Where {@link requestIdOf} keeps a request's id: on the raw request itself (a WeakMap entry per request cost its set, its look-ups and the collector's ephemeron work). */
const REQUEST_ID = Symbol('request id');

/**
 * The id of the request `req` (the raw Node request): its `X-Request-Id` when usable (one header:
 * repeated ones are not), else a random UUID, made once per request (the same on every call).
 */
export function requestIdOf(req: IncomingMessage): string {
  const held = req as IncomingMessage & { [REQUEST_ID]?: string };
  let id = held[REQUEST_ID];
  if (id === undefined) {
    const header = req.headers[REQUEST_ID_HEADER];
    id = isUsableRequestId(header) ? header : randomUUID();
    held[REQUEST_ID] = id;
  }
  return id;
}

/**
 * The id of a request Node's parser refused (it has no request object): its `X-Request-Id` when the
 * bytes received (`rawPacket`, the `clientError`'s; latin1, as HTTP/1.1 heads are) hold exactly one
 * such header line before the head's end and its value is usable ({@link isUsableRequestId}), else a
 * random UUID. A head cut off, or a timed-out request (no bytes), gets a UUID.
 */
export function requestIdOfRawHead(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return randomUUID();
  const end = rawPacket.indexOf('\r\n\r\n');
  const head = rawPacket.subarray(0, end < 0 ? rawPacket.length : end).toString('latin1');
  const values = head
    .split(/\r?\n/)
    .slice(1)
    .flatMap((line) => {
      const colon = line.indexOf(':');
      return colon > 0 && line.slice(0, colon).toLowerCase() === REQUEST_ID_HEADER ? [line.slice(colon + 1).trim()] : [];
    });
  return values.length === 1 && isUsableRequestId(values[0]) ? values[0] : randomUUID();
}

/**
 * Fastify's request id options: ids from {@link requestIdOf}. `requestIdHeader` is off because
 * Fastify would take the header's value unchecked (any length or bytes); {@link requestIdOf} reads
 * it and checks it. No `requestIdLogLabel`: Fastify's own logger is off (the request line is
 * pino-http's, where the id is `req.id`), and Fastify 5.12 deprecates the option.
 */
export const FASTIFY_REQUEST_ID_OPTIONS = { requestIdHeader: false, genReqId: requestIdOf } as const;

/** Makes every answer of `app` carry its request's id in `X-Request-Id`, error answers included (set before any other hook answers). */
export function echoRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
