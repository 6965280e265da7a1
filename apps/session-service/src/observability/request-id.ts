/**
 * Request correlation: each request's id, the client's `X-Request-Id` when it is short printable
 * ASCII ({@link isUsableRequestId}), else one made here (a random UUID). Fastify's `genReqId` and
 * pino-http's read it through {@link requestIdOf}, so `request.id`, the request log line's `req.id`
 * and the `X-Request-Id` answer header ({@link echoRequestIds}) are the same id.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** The header a client's request id is read from and every answer's id is sent in. */
export const REQUEST_ID_HEADER = 'x-request-id';
/** Longest client request id taken as is (characters); a longer one is replaced by a made-up id. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Whether `value` (a header's value) is a usable request id: 1 to {@link MAX_REQUEST_ID_LENGTH} printable ASCII characters, no spaces. */
export function isUsableRequestId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_REQUEST_ID_LENGTH && /^[\x21-\x7e]+$/.test(value);
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
