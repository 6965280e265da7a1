/**
 * Request bodies on Fastify: only JSON, read once, within `MAX_BODY_BYTES`.
 *
 * - A POST/PUT/PATCH that carries a body must say it is JSON (`Content-Type: application/json`,
 *   or any `+json` type); otherwise it is answered 415 `unsupported_media_type` before the body is
 *   read (a form-encoded `curl -d` would otherwise reach validation as an empty body). A charset
 *   other than UTF-8 (`utf-8`, or its alias `utf8`, in any case) is answered 415
 *   `unsupported_encoding` then too, naming it (body-parser would let `utf-16` through and answer
 *   400 `malformed_json`, but `latin1` 415).
 * - A transfer coding other than `chunked` (`Transfer-Encoding: gzip, chunked`) is answered 501
 *   `unsupported_transfer_coding` before the body is read, on every method ({@link refuseTransferCodings}):
 *   a body is compressed with `Content-Encoding`.
 * - JSON bodies are read by body-parser (the reader Express used): gzip (also sent as `x-gzip`,
 *   {@link acceptXGzip}), deflate and br bodies are inflated, the limit counts the inflated bytes (413), a charset other than UTF-8 is answered
 *   415, bytes that are not UTF-8 400 `malformed_body`, text that is not JSON 400 `malformed_json`
 *   (error types mapped by `toApiError`), as is JSON holding an object that gives a member name twice
 *   (`rejectDuplicateMembers`, which JSON.parse would read as its last). Any other JSON value is
 *   accepted (validation says what the body must be).
 * - A body declared UTF-8 (`utf-8` or `utf8`, or with no charset) is read as bytes and decoded here
 *   ({@link parseUtf8Json}: ICU transcoding, 2 ms instead of 12–17 for 3 MB of ideographs), the
 *   same answer as body-parser's JSON reader, which still reads bodies declaring another charset.
 *   A body of {@link LARGE_BODY_BYTES} or more is decoded, and then handed on, after other
 *   requests got a turn (`yieldToIo`), so reading and checking its bytes, decoding and parsing
 *   them, and validating the value are three stretches of the event loop, not one (3 MB of
 *   ideographs: about 10 ms each on a loaded 2-core machine).
 * - A body whose connection closes, or whose client half-closes it, before it has all arrived is
 *   answered 400 `request_aborted` (compressed or not: {@link requestAbortedError}). After an error
 *   of a body that was read to its end (`malformed_json`, …) the connection stays open
 *   (`keep-alive-after-body-errors.ts`).
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { json, raw } from 'body-parser';
import { acceptXGzip } from './content-encoding-aliases';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { quoteInput } from '@lib/compaction';
import { yieldToIo } from '@lib/event-store';
import { decodeUtf8 } from '@lib/session';
import { rejectDeepBody } from '../commands/body-depth';
import { DuplicateMemberError, rejectDuplicateMembers } from '../commands/duplicate-members';
import { malformedJsonMessage } from '../commands/json-syntax-error';
import { payloadTooLarge, type ApiErrorBody } from './api-error.filter';
import { DELETE_TAKES_NO_BODY } from './delete-takes-no-body';
import { answerBeforeBody, continueOnlyWhenReading, declaresBody, type DiscardLimits } from './early-answer';
import { keepAliveAfterBodyErrors } from './keep-alive-after-body-errors';
import { requestAbortedError } from './request-aborted';
import { readableAfterHalfClose } from './body-after-half-close';
import { refuseTransferCodings } from './transfer-codings';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
/**
 * The subtype of a structured-syntax `+json` media type (RFC 6839 §3.1): a subtype name of RFC 6838 §4.2 (a letter or digit
 * first, then letters, digits and `!#$&-^_.+`) ending in `+json`, so `application/+json` and `application/x+jsonp` are not JSON
 * (newcomer ncapi66 F7).
 */
const PLUS_JSON_SUBTYPE = '[a-z0-9][a-z0-9!#$&^_.+-]*\\+json';
/** A JSON body's media type (lower case, without parameters): `application/json` or `application/<subtype>+json`. */
const JSON_TYPE = new RegExp(`^application/(?:${PLUS_JSON_SUBTYPE}|json)$`);
/** The Content-Types the `+json` body parser takes (any case, parameters or none): those of {@link JSON_TYPE} but `application/json`. */
const STRUCTURED_JSON_TYPE = new RegExp(`^application/${PLUS_JSON_SUBTYPE}\\s*(?:;|$)`, 'i');

/** What a JSON body's Content-Type is: `application/json`, or a structured-syntax `+json` type (RFC 6839). */
export const JSON_CONTENT_TYPE_RULE = 'Content-Type: application/json (or an application/*+json type, e.g. application/vnd.api+json)';

/** The 415 answer's body for a request whose body is not declared JSON (`type`: its media type, '' when absent). */
export function unsupportedMediaType(type: string): ApiErrorBody {
  return {
    code: 'unsupported_media_type',
    message: `send the body as JSON with ${JSON_CONTENT_TYPE_RULE} (got ${type ? quoteInput(type) : 'no Content-Type'})`,
  };
}

/**
 * The 415 answer's body for a Content-Type sent ambiguously: the field given on several header lines
 * (`lines`), or its `charset` parameter given several times (a singleton field, RFC 9110 §8.3, and
 * a parameter that must not repeat, §5.6.6): refused rather than the first one read, as a proxy
 * appending its own header would otherwise go unnoticed. Undefined when it is not ambiguous.
 */
export function ambiguousContentType(lines: number, charsets: number): ApiErrorBody | undefined {
  if (lines > 1) return { code: 'unsupported_media_type', message: `Content-Type is given on ${lines} header lines: send it once, ${JSON_CONTENT_TYPE_RULE}` };
  if (charsets > 1)
    return {
      code: 'unsupported_media_type',
      message: `the Content-Type's charset parameter is given ${charsets} times: send it once (charset=utf-8) or leave it out`,
    };
  return undefined;
}

/** How many header lines of `rawHeaders` (Node's name, value, name, value… list) are named `name` (lower-case). */
function headerLines(rawHeaders: string[], name: string): number {
  let lines = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) lines++;
  return lines;
}

/**
 * Fastify `onRequest` hook: answers 415 `unsupported_media_type` to a POST/PUT/PATCH with a body
 * that is not declared JSON ({@link JSON_CONTENT_TYPE_RULE}) or declares it ambiguously
 * ({@link ambiguousContentType}); lets every other request through.
 */
export function requireJsonBody(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (!WITH_BODY.has(req.method) || !declaresBody(req.raw)) return done();
  const [mediaType, ...params] = (req.headers['content-type'] ?? '').split(';');
  const ambiguous = ambiguousContentType(
    headerLines(req.raw.rawHeaders, 'content-type'),
    params.filter((p) => p.split('=')[0].trim().toLowerCase() === 'charset').length,
  );
  if (ambiguous) return void reply.code(415).send(ambiguous);
  const type = mediaType.trim().toLowerCase();
  if (!JSON_TYPE.test(type)) return void reply.code(415).send(unsupportedMediaType(type));
  const malformed = malformedParameter(params);
  if (malformed !== undefined) return void reply.code(415).send(malformed);
  const charset = charsetOf(params);
  if (charset !== undefined && !UTF8.has(charset)) return void reply.code(415).send(unsupportedCharset(charset));
  done();
}

/**
 * The 415 answer's body for a Content-Type parameter without `=` (`application/json; foo`: RFC 9110 §5.6.6, a parameter
 * is name=value; newcomer ncfresh70 N1: it was ignored), else undefined. `params`: the header's text after each `;`
 * (an empty one, a trailing `;`, is let through).
 */
export function malformedParameter(params: readonly string[]): ApiErrorBody | undefined {
  const bad = params.find((p) => p.trim() !== '' && !p.includes('='));
  if (bad === undefined) return undefined;
  return {
    code: 'unsupported_media_type',
    message: `the Content-Type's parameter ${quoteInput(bad.trim())} has no value (a parameter is name=value): send ${JSON_CONTENT_TYPE_RULE}`,
  };
}

/** Charset names read as UTF-8 (lower-cased): `utf8` is a standard alias (IANA, WHATWG Encoding). */
const UTF8 = new Set(['utf-8', 'utf8']);

/** The `charset` parameter of a Content-Type's parameters, lower-cased and unquoted, or undefined. */
function charsetOf(params: string[]): string | undefined {
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name.trim().toLowerCase() === 'charset' && value !== undefined)
      return value
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
  }
  return undefined;
}

/** The 415 answer's body for a JSON body declared in a charset other than UTF-8 (`utf-16` as much as `latin1`). */
export function unsupportedCharset(charset: string): ApiErrorBody {
  return { code: 'unsupported_encoding', message: `unsupported charset ${quoteInput(charset)}: send the body as UTF-8 JSON` };
}

/**
 * Fastify `onRequest` hook builder: answers 413 `payload_too_large` at once, with `Connection: close`,
 * when a body declares a Content-Length over `maxBodyBytes` and no Content-Encoding (an inflated
 * body is at least as large as that). body-parser would otherwise wait for the whole declared body
 * before answering, so a request declaring 1 GB and sending 2 bytes held its connection until the
 * client gave up. The body is not read, but the connection is not dropped under a client still
 * sending it either: the rest is read and discarded until the client stops, within bounds
 * ({@link answerBeforeBody}), so that the client reads the answer; a client that sent
 * `Expect: 100-continue` gets the 413 instead of `100 Continue` ({@link continueOnlyWhenReading})
 * and sends no body. A DELETE, which takes no body at all, gets 400 {@link DELETE_TAKES_NO_BODY}
 * the same way (a 413 would advise splitting the body into several requests).
 */
export function refuseDeclaredTooLarge(maxBodyBytes: number, limits?: DiscardLimits) {
  return (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const length = Number(req.headers['content-length'] ?? 0);
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (!(length > maxBodyBytes) || encoding !== 'identity') return done();
    if (req.method === 'DELETE') answerBeforeBody(req, reply, 400, DELETE_TAKES_NO_BODY, limits);
    else answerBeforeBody(req, reply, 413, payloadTooLarge(maxBodyBytes, req.url), limits);
  };
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

/** Bodies of at least this many bytes are handed to the route after other requests got a turn of the event loop. */
export const LARGE_BODY_BYTES = 64 * 1024;

/** Content-Types whose charset body-parser reads as UTF-8 (none, or exactly `utf-8`): their bodies are decoded by {@link parseUtf8Json}. */
const UTF8_CONTENT_TYPE = /^[^;]*(;[ \t]*charset[ \t]*=[ \t]*("utf-8"|utf-8)[ \t]*)?$/i;

/**
 * Whether a body with Content-Type `header` is decoded here as UTF-8 ({@link parseUtf8Json}):
 * no charset or `utf-8` ({@link UTF8_CONTENT_TYPE}), or the alias `utf8` in any case, which
 * body-parser would refuse (415) although {@link requireJsonBody} lets it through. Other bodies
 * go to body-parser's JSON reader.
 */
function readAsUtf8(header: string): boolean {
  return UTF8_CONTENT_TYPE.test(header) || charsetOf(header.split(';').slice(1)) === 'utf8';
}

/** A body's text as it is parsed: its bytes decoded as UTF-8 ({@link decodeUtf8}), a leading byte-order mark dropped. */
function bodyText(bytes: Buffer): string {
  const text = decodeUtf8(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The JSON value of a body's bytes, as body-parser's JSON reader (`strict: false`) gives it for a
 * UTF-8 body that {@link rejectInvalidBody} passed: a leading byte-order mark is dropped, an empty
 * body is `{}`. Decoded with {@link decodeUtf8} (the same string as body-parser's decoder). A body
 * whose objects give a member name twice is refused ({@link rejectDuplicateMembers}), as JSON.parse
 * would keep the last silently.
 * @throws MalformedJsonError (body-parser's `type` `entity.parse.failed`, status 400) saying where the text breaks
 *   when it is not JSON, or which member is given twice and where.
 */
export function parseUtf8Json(bytes: Buffer): unknown {
  const text = bodyText(bytes);
  if (text.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw MalformedJsonError.of(error, text);
  }
  refuseDuplicateMembers(text, value);
  return value;
}

/** {@link rejectDuplicateMembers} of a request body's `text` and `value`, its error as a {@link MalformedJsonError}. */
function refuseDuplicateMembers(text: string, value: unknown): void {
  try {
    rejectDuplicateMembers(text, value, 'request body');
  } catch (error) {
    throw error instanceof DuplicateMemberError ? new MalformedJsonError(error.message) : error;
  }
}

/**
 * A request body that is not JSON, or whose objects give a member name twice: body-parser's `type`
 * `entity.parse.failed` and status 400, answered 400 `malformed_json` with its message, which says where
 * the text breaks ({@link malformedJsonMessage}: `request body is not valid JSON: expected ',' or '}' after
 * property value at line 3, column 3 (position 12)`) or which member is given twice and where
 * ({@link duplicateMemberMessage}). Not a `SyntaxError`: Nest turns those into a 400 of the parser's own
 * message, which quotes the body around an unexpected token and names no position.
 */
export class MalformedJsonError extends Error {
  override readonly name = 'MalformedJsonError';
  readonly type = 'entity.parse.failed';
  readonly status = 400;
  readonly statusCode = 400;
  readonly expose = true;

  /** The error of `text`, a body `JSON.parse` refused with `parseError`. */
  static of(parseError: unknown, text: string): MalformedJsonError {
    return new MalformedJsonError(malformedJsonMessage('request body', parseError, text));
  }
}

/**
 * A body-parser error as the service answers it: a parse error (`entity.parse.failed`, which carries the
 * text it parsed as `body`) as {@link MalformedJsonError}; any other unchanged.
 */
export function asMalformedJsonError(error: unknown): Error {
  const { type, body } = error as { type?: unknown; body?: unknown };
  return type === 'entity.parse.failed' && typeof body === 'string' ? MalformedJsonError.of(error, body) : (error as Error);
}

/**
 * Makes the body reading of `req` fail with {@link requestAbortedError} as soon as the request is
 * aborted (Node's `aborted` event: its connection closed, or its client half-closed it, inside the
 * body), whatever body-parser does: body-parser hears an abort only on an uncompressed body (it
 * listens on the inflating stream of a compressed one, which then never ends), and skips the body of
 * a request aborted before it starts reading (leaving no body: 400 `validation_failed`). Returns the
 * callback to give the body reader's outcome to (`done` called once, whichever comes first), or
 * undefined when `req` was aborted already (`done` called with the error).
 */
function answerAbortedBody(req: IncomingMessage, done: (error: Error | null, body?: unknown) => void): typeof done | undefined {
  if (req.aborted) return void done(requestAbortedError());
  let called = false;
  const once = (error: Error | null, body?: unknown) => {
    if (called) return;
    called = true;
    req.off('aborted', onAborted);
    done(error, body);
  };
  const onAborted = () => once(requestAbortedError());
  req.once('aborted', onAborted);
  return once;
}

/**
 * Makes `app` parse JSON bodies (see the module doc) of at most `maxBodyBytes` (after inflating),
 * answer 415 to bodies of other types and 501 to transfer codings other than `chunked`. Replaces Fastify's own JSON parser. A body declared
 * over the limit is answered 413 before it is read ({@link refuseDeclaredTooLarge}: the rest read
 * and discarded within `discardLimits`, default 64 MiB and 5 s, so the client reads the answer);
 * `100 Continue` is sent only when a body is read ({@link continueOnlyWhenReading}). A body cut
 * short is answered 400 `request_aborted`; the connection stays open after an error of a body read
 * whole ({@link keepAliveAfterBodyErrors}).
 */
export function useJsonBodies(app: FastifyInstance, maxBodyBytes: number, discardLimits?: DiscardLimits): void {
  const options = { limit: maxBodyBytes, type: () => true, verify: rejectInvalidBody };
  // Bodies declaring another charset, or other parameters: body-parser decodes (or refuses) them; their bytes are kept for the duplicate member check.
  const bytesRead = new WeakMap<IncomingMessage, Buffer>();
  const readJson = json({
    ...options,
    strict: false,
    verify: (req: IncomingMessage, res: unknown, bytes: Buffer) => {
      rejectInvalidBody(req, res, bytes);
      bytesRead.set(req, bytes);
    },
  });
  // UTF-8 bodies: their bytes, decoded and parsed here.
  const readBytes = raw(options);
  acceptXGzip(app);
  app.addHook('onRequest', refuseTransferCodings(discardLimits));
  app.addHook('onRequest', requireJsonBody);
  app.addHook('onRequest', refuseDeclaredTooLarge(maxBodyBytes, discardLimits));
  continueOnlyWhenReading(app);
  keepAliveAfterBodyErrors(app);
  app.removeAllContentTypeParsers();
  const parse = (request: FastifyRequest, _payload: unknown, parsed: (error: Error | null, body?: unknown) => void) => {
    // (A body that arrived whole before a half-close is read all the same: body-after-half-close.ts.)
    const req = readableAfterHalfClose(request.raw) as IncomingMessage & { body?: unknown };
    // A decoding error names the body's Content-Encoding (its 400 says what deflate is: undecodableBodyMessage).
    const contentEncoding = req.headers['content-encoding'];
    const done = answerAbortedBody(req, (error, body) => parsed(error && Object.assign(error, { contentEncoding }), body));
    if (!done) return;
    if (!readAsUtf8(req.headers['content-type'] ?? '')) {
      return readJson(req, {} as never, (error?: unknown) => {
        if (error) return done(asMalformedJsonError(error));
        const bytes = bytesRead.get(req);
        const charset = charsetOf((req.headers['content-type'] ?? '').split(';').slice(1));
        // A UTF-8 body read by body-parser (one whose Content-Type has other parameters) is checked as parseUtf8Json checks it.
        if (bytes !== undefined && bytes.length > 0 && (charset === undefined || UTF8.has(charset))) {
          try {
            refuseDuplicateMembers(bodyText(bytes), req.body);
          } catch (duplicate) {
            return done(duplicate as Error);
          }
        }
        done(null, req.body);
      });
    }
    readBytes(req, {} as never, (error?: unknown) => {
      if (error) return done(error as Error);
      const bytes = req.body;
      // No body to read (body-parser left it undefined).
      if (!Buffer.isBuffer(bytes)) return done(null, bytes);
      const decode = (): Error | null => {
        try {
          req.body = parseUtf8Json(bytes);
          return null;
        } catch (parseError) {
          return parseError as Error;
        }
      };
      if (bytes.length < LARGE_BODY_BYTES) return done(decode(), req.body);
      // Three stretches of the event loop, other requests served between them: reading and checking the bytes, decoding and parsing them, validating the value.
      void yieldToIo()
        .then(decode)
        .then((error) => (error ? done(error) : yieldToIo().then(() => done(null, req.body))));
    });
  };
  app.addContentTypeParser('application/json', parse);
  app.addContentTypeParser(STRUCTURED_JSON_TYPE, parse);
}
