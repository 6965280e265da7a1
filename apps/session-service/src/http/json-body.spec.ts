/**
 * UTF-8 bodies are decoded and parsed by `parseUtf8Json` instead of body-parser's JSON reader (a
 * quarter of the event loop's time for a large non-ASCII body). The answers must not change: for
 * every body, Content-Type and Content-Encoding, the service's bodies give the same parsed value or
 * the same error answer as body-parser's JSON reader with the same options (the reader used before),
 * except that the charset `utf8` (an alias of UTF-8, which body-parser refuses) is read as `utf-8`. A
 * body that is not JSON is answered saying where it breaks in both (body-parser's parse errors carry
 * the text it parsed): the same place, for the same text.
 */
import { gzipSync } from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import { json } from 'body-parser';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import fc from 'fast-check';
import { toApiError } from './api-error.filter';
import { asMalformedJsonError, LARGE_BODY_BYTES, parseUtf8Json, refuseDeclaredTooLarge, rejectInvalidBody, requireJsonBody, useJsonBodies } from './json-body';

const LIMIT = 256 * 1024;

/** A Fastify app echoing `{ body }` on POST and DELETE /echo, errors answered as the service answers them. */
async function echoApp(useBodies: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify();
  useBodies(app);
  app.setErrorHandler((error, _request, reply) => {
    const { status, body } = toApiError(error);
    void reply.code(status).send(body);
  });
  app.route({ method: ['POST', 'DELETE'], url: '/echo', handler: async (request) => ({ body: request.body === undefined ? '(none)' : request.body }) });
  await app.ready();
  return app;
}

/** The body reading before UTF-8 bodies were decoded here: body-parser's JSON reader for every body. */
function bodyParserJsonBodies(app: FastifyInstance): void {
  const read = json({ limit: LIMIT, type: () => true, strict: false, verify: rejectInvalidBody });
  app.addHook('onRequest', requireJsonBody);
  app.addHook('onRequest', refuseDeclaredTooLarge(LIMIT));
  app.removeAllContentTypeParsers();
  const parse = (request: FastifyRequest, _payload: unknown, done: (error: Error | null, body?: unknown) => void) => {
    const raw = request.raw as IncomingMessage & { body?: unknown };
    // Its parse errors say where the text breaks, as the service's do: the same place for the same text.
    read(raw, {} as never, (error?: unknown) => (error ? done(asMalformedJsonError(error)) : done(null, raw.body)));
  };
  app.addContentTypeParser('application/json', parse);
  app.addContentTypeParser(/^application\/[a-z0-9.+-]*\+json/i, parse);
}

interface Sent {
  method: 'POST' | 'DELETE';
  bytes: Buffer;
  contentType: string;
  gzip: boolean;
}

describe('JSON bodies: UTF-8 bodies decoded here answer as body-parser did', () => {
  let reference: FastifyInstance;
  let service: FastifyInstance;
  beforeAll(async () => {
    reference = await echoApp(bodyParserJsonBodies);
    service = await echoApp((app) => useJsonBodies(app, LIMIT));
  });
  afterAll(async () => {
    await reference.close();
    await service.close();
  });

  async function answers(sent: Sent) {
    const request = {
      method: sent.method,
      url: '/echo',
      headers: { 'content-type': sent.contentType, ...(sent.gzip ? { 'content-encoding': 'gzip' } : {}) },
      payload: sent.gzip ? gzipSync(sent.bytes) : sent.bytes,
    };
    // body-parser refuses the alias utf8 (415): the answer to compare with is its answer for utf-8.
    const asUtf8 = { ...request, headers: { ...request.headers, 'content-type': sent.contentType.replace(/charset=("?)utf8\1/i, 'charset=utf-8') } };
    const [before, now] = await Promise.all([reference.inject(asUtf8), service.inject(request)]);
    return { before: { status: before.statusCode, body: before.body }, now: { status: now.statusCode, body: now.body } };
  }

  const CONTENT_TYPES = [
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'application/json; charset = utf-8 ',
    'application/json; charset=utf8',
    'application/json; charset=UTF8',
    'application/json;charset="Utf8"',
    'application/json; foo=bar; charset=utf8',
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'application/json; charset=utf-8; charset=latin1',
    'application/json; charset=latin1; charset=utf-8',
    'application/json; a="x;charset=latin1"',
    'application/json; foo=bar',
    'application/vnd.api+json',
    'application/merge-patch+json; charset=UTF-8',
  ];
  const TEXTS = [
    '',
    '\uFEFF',
    '\uFEFF{"a":1}',
    '\uFEFF\uFEFF{}',
    '  {"a": [1, "é中😀"]} ',
    '"just a string"',
    'null',
    '{"a": ',
    '{"__proto__": {"x": 1}}',
    '[[[[[[]]]]]]',
    '{"text": "\\ud800"}',
    `{"big": "${'中'.repeat(LARGE_BODY_BYTES)}"}`,
    `{"big": "${'x'.repeat(LARGE_BODY_BYTES)}", `,
  ];

  it('the same answer for bodies, charsets and encodings chosen to differ', async () => {
    for (const contentType of CONTENT_TYPES)
      for (const text of TEXTS)
        for (const gzip of [false, true]) {
          const { before, now } = await answers({ method: 'POST', bytes: Buffer.from(text), contentType, gzip });
          expect({ contentType, text: text.slice(0, 40), gzip, ...now }).toEqual({ contentType, text: text.slice(0, 40), gzip, ...before });
        }
  });

  it('the same answer for bytes that are not UTF-8, too deep, or too large', async () => {
    const bodies = [
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), // {"a":"<bad>"}
      Buffer.from([0xef, 0xbb, 0xbf, 0xed, 0xa0, 0x80]), // BOM, then an encoded surrogate
      Buffer.from('['.repeat(20_000)),
      Buffer.from(JSON.stringify({ big: 'x'.repeat(LIMIT) })),
    ];
    for (const bytes of bodies)
      for (const gzip of [false, true]) {
        const { before, now } = await answers({ method: 'POST', bytes, contentType: 'application/json', gzip });
        expect(now).toEqual(before);
      }
  });

  it('the same answer for any JSON value or byte string, on POST and DELETE (property)', async () => {
    const bytes = fc.oneof(
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? '')),
      fc.string({ unit: 'binary' }).map((s) => Buffer.from(s)),
      fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('POST' as const, 'DELETE' as const),
          bytes: fc.tuple(fc.boolean(), bytes).map(([bom, b]) => (bom ? Buffer.concat([Buffer.from('\uFEFF'), b]) : b)),
          contentType: fc.constantFrom(...CONTENT_TYPES),
          gzip: fc.boolean(),
        }),
        async (sent) => {
          const { before, now } = await answers(sent);
          expect(now).toEqual(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('JSON bodies: the charset', () => {
  let service: FastifyInstance;
  beforeAll(async () => (service = await echoApp((app) => useJsonBodies(app, LIMIT))));
  afterAll(() => service.close());
  const post = (contentType: string) =>
    service.inject({ method: 'POST', url: '/echo', headers: { 'content-type': contentType }, payload: Buffer.from('{"text":"中"}') });

  it.each(['utf-8', 'UTF-8', 'utf8', 'UTF8', 'Utf8', '"utf8"'])('%s is read as UTF-8', async (charset) => {
    const res = await post(`application/json; charset=${charset}`);
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: { body: { text: '中' } } });
  });

  it.each([
    ['latin1', '"latin1"'],
    ['UTF-16', '"utf-16"'],
    ['utf-7', '"utf-7"'],
    ['"iso-8859-1"', '"iso-8859-1"'],
    ['utf_8', '"utf_8"'],
  ])('%s is answered 415 unsupported_encoding naming it', async (charset, named) => {
    const res = await post(`application/json; charset=${charset}`);
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 415,
      body: { code: 'unsupported_encoding', message: `unsupported charset ${named}: send the body as UTF-8 JSON` },
    });
  });
});

describe('parseUtf8Json', () => {
  it('is JSON.parse of the text without a leading byte-order mark, {} for no text, and body-parser’s parse error otherwise', () => {
    expect(parseUtf8Json(Buffer.from('\uFEFF{"a":"中😀"}'))).toEqual({ a: '中😀' });
    expect(parseUtf8Json(Buffer.alloc(0))).toEqual({});
    expect(parseUtf8Json(Buffer.from('\uFEFF'))).toEqual({});
    expect(() => parseUtf8Json(Buffer.from('{"a": '))).toThrow(
      expect.objectContaining({
        name: 'MalformedJsonError',
        type: 'entity.parse.failed',
        status: 400,
        message: 'request body is not valid JSON: the body ends before its JSON value is complete at line 1, column 7 (position 6)',
      }),
    );
  });
});

describe('JSON bodies: Content-Encoding x-gzip (RFC 9110 §8.4.1.3: a recipient SHOULD treat it as gzip)', () => {
  let service: FastifyInstance;
  beforeAll(async () => {
    service = await echoApp((app) => useJsonBodies(app, LIMIT));
  });
  afterAll(async () => service.close());

  it.each(['x-gzip', 'X-GZIP', ' x-gzip '])('%s is read as gzip, as gzip is', async (encoding) => {
    const payload = gzipSync(Buffer.from('{"events":[{"type":"user","text":"gz"}]}'));
    const res = await service.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, payload });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ body: { events: [{ type: 'user', text: 'gz' }] } });
  });

  it('an unknown coding is still 415', async () => {
    const res = await service.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json', 'content-encoding': 'x-compress' },
      payload: 'x',
    });
    expect(res.statusCode).toBe(415);
  });
});
