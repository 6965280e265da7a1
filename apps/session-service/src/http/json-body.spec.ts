/**
 * UTF-8 bodies are decoded and parsed by `parseUtf8Json` instead of body-parser's JSON reader (a
 * quarter of the event loop's time for a large non-ASCII body). The answers must not change: for
 * every body, Content-Type and Content-Encoding, the service's bodies give the same parsed value or
 * the same error answer as body-parser's JSON reader with the same options (the reader used before),
 * except that the charset `utf8` (an alias of UTF-8, which body-parser refuses) is read as `utf-8` and
 * that an object giving a member name twice is refused (body-parser keeps the last). A
 * body that is not JSON is answered saying where it breaks in both (body-parser's parse errors carry
 * the text it parsed): the same place, for the same text.
 */
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { json } from 'body-parser';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import fc from 'fast-check';
import { toApiError, tooLargeAdvice } from './api-error.filter';
import { answerErrorsWithFilter } from './testing/answer-errors-with-filter';
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

describe('JSON bodies: an object giving a member name twice is refused, not the last one kept (newcomer ncverify50 F1)', () => {
  let service: FastifyInstance;
  beforeAll(async () => {
    service = await echoApp((app) => useJsonBodies(app, LIMIT));
  });
  afterAll(async () => service.close());

  const refused = (path: string, first: string, again: string) => ({
    code: 'malformed_json',
    message: expect.stringMatching(
      new RegExp(
        `^request body gives the member "\\w+" twice in one object, at ${path.replace(/[[\]]/g, '\\$&')}: first at ${first}, again at ${again} \\(position \\d+\\); send each member once`,
      ),
    ),
  });

  // Content-Types read by parseUtf8Json and (with another parameter) by body-parser's reader; +json types; compressed or not.
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=utf8',
    'application/json; foo=bar',
    'application/json; foo=bar; charset=UTF-8',
    'application/vnd.api+json',
  ])('%s: 400 malformed_json naming the member, its path and both places', async (contentType) => {
    const bodies = [
      ['{"events":[{"id":"A"}],"events":[{"id":"B"}]}', 'events', 'line 1, column 2', 'line 1, column 24'],
      ['\uFEFF{"events":[{"type":"user","text":"A",\n  "text":"B"}]}', 'events[0].text', 'line 1, column 27', 'line 2, column 3'],
      ['{"events":[{"id":"e1","metadata":{"\\u0061":1,"a":2}}]}', 'events[0].metadata.a', 'line 1, column 35', 'line 1, column 46'],
    ] as const;
    for (const [text, path, first, again] of bodies)
      for (const gzip of [false, true]) {
        const headers = { 'content-type': contentType, ...(gzip ? { 'content-encoding': 'gzip' } : {}) };
        const res = await service.inject({ method: 'POST', url: '/echo', headers, payload: gzip ? gzipSync(Buffer.from(text)) : Buffer.from(text) });
        expect({ text, gzip, status: res.statusCode, body: res.json() }).toEqual({ text, gzip, status: 400, body: refused(path, first, again) });
      }
  });

  it(`a body of ${LARGE_BODY_BYTES} bytes or more, decoded after other requests' turn, is refused the same way`, async () => {
    const text = `{"events":[{"text":"${'x'.repeat(LARGE_BODY_BYTES)}","text":"B"}]}`;
    const res = await service.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: text });
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: refused('events[0].text', 'line 1, column 13', `line 1, column ${LARGE_BODY_BYTES + 23}`),
    });
  });

  it('the same name in two objects, or as a value, is read as before', async () => {
    const value = {
      events: [
        { id: 'a', text: 'text' },
        { id: 'b', text: 'text', metadata: { id: 'id' } },
      ],
    };
    const res = await service.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json; foo=bar' },
      payload: JSON.stringify(value),
    });
    expect(res.json()).toEqual({ body: value });
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

  it.each(['identity', 'IDENTITY'])(
    '%s (no coding) is read as a body sent without Content-Encoding, as docs/http-api.md says (newcomer ncapi73 F4)',
    async (encoding) => {
      const res = await service.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        payload: '{"events":[{"type":"user","text":"plain"}]}',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ body: { events: [{ type: 'user', text: 'plain' }] } });
    },
  );

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

/** A Fastify app with the service's body reading and error filter, echoing bodies on POST/PUT of `/v1/sessions/s/<route>`. */
async function routesApp(): Promise<FastifyInstance> {
  const app = Fastify();
  useJsonBodies(app, LIMIT);
  answerErrorsWithFilter(app);
  for (const route of ['events', 'messages', 'policy', 'compactions'])
    app.route({ method: ['POST', 'PUT'], url: `/v1/sessions/s/${route}`, handler: async (request) => ({ body: request.body }) });
  await app.ready();
  return app;
}

describe('413 payload_too_large: the advice fits what the route body holds (newcomer ncgocurl A9)', () => {
  let app: FastifyInstance;
  beforeAll(async () => (app = await routesApp()));
  afterAll(() => app.close());
  const big = Buffer.from(JSON.stringify({ strategy: { type: 'summarize', systemPrompt: 'x'.repeat(LIMIT + 10) } }));

  it.each([
    ['POST', 'events', /; split the events into several requests, in order$/],
    ['POST', 'messages', /; split the messages into several requests, in order$/],
    ['PUT', 'policy', /; this body holds no events: shorten the strategy's prompts \(systemPrompt at most 100,000 characters, shadowPrompt at most 10,000\)$/],
    ['POST', 'compactions', /; this body holds no events: shorten the strategy's prompts/],
  ] as const)('%s …/%s: declared too large (before the body) and inflated too large (gzip) alike', async (method, route, advice) => {
    const url = `/v1/sessions/s/${route}`;
    const declared = await app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: big });
    const inflated = await app.inject({ method, url, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: gzipSync(big) });
    for (const res of [declared, inflated]) {
      expect(res.statusCode).toBe(413);
      expect(res.json<{ message: string }>().message).toMatch(advice);
    }
  });

  it('over NATS the same rule, per command kind', () => {
    expect(tooLargeAdvice('append', 'commands')).toBe('split the events into several commands, in order');
    expect(tooLargeAdvice('policy', 'commands')).toMatch(/^this body holds no events/);
    expect(tooLargeAdvice('compact', 'commands')).toMatch(/^this body holds no events/);
    expect(tooLargeAdvice('/health')).toBe('send a smaller body');
  });
});

describe('Content-Encoding refusals say what was sent and what deflate is (newcomer ncgocurl A2, A11)', () => {
  let app: FastifyInstance;
  beforeAll(async () => (app = await routesApp()));
  afterAll(() => app.close());
  const body = Buffer.from('{"events":[{"type":"user","text":"hi"}]}');
  const post = (encoding: string, payload: Buffer) =>
    app.inject({ method: 'POST', url: '/v1/sessions/s/events', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, payload });

  it.each([
    ['gzip, gzip', /^unsupported Content-Encoding "gzip, gzip" \(a list of codings is not read\): send the body uncompressed, or compressed once/],
    ['compress', /^unsupported Content-Encoding "compress": .*gzip, deflate \(the zlib format\) or br$/],
  ])('415 for %s names it', async (encoding, message) => {
    const res = await post(encoding, gzipSync(body));
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ code: 'unsupported_encoding', message: expect.stringMatching(message) });
  });

  it('raw DEFLATE sent as deflate: 400 saying deflate is the zlib format (RFC 1950); the zlib format is read', async () => {
    const raw = await post('deflate', deflateRawSync(body));
    expect(raw.statusCode).toBe(400);
    expect(raw.json<{ message: string }>().message).toMatch(
      /Content-Encoding deflate is the zlib format \(RFC 1950, RFC 9110 §8\.4\.1\.2\), not raw DEFLATE: .*compress\/zlib/,
    );
    expect((await post('deflate', deflateSync(body))).statusCode).toBe(200);
    // A broken gzip body is not told about deflate.
    const gzip = await post('gzip', deflateRawSync(body));
    expect([gzip.statusCode, gzip.json<{ message: string }>().message]).toEqual([
      400,
      'the body could not be decoded with its Content-Encoding: send it uncompressed, or compressed as the header says',
    ]);
  });
});

describe('Content-Type: one, said once; +json types accepted and said so (newcomer ncgocurl A3, A4)', () => {
  let app: FastifyInstance;
  beforeAll(async () => (app = await routesApp()));
  afterAll(() => app.close());
  const post = (contentType: string) =>
    app.inject({ method: 'POST', url: '/v1/sessions/s/events', headers: { 'content-type': contentType }, payload: '{"events":[]}' });

  it('two Content-Type header lines: 415 saying so (was: the first one read)', async () => {
    // Over a socket: Node keeps the first of two Content-Type lines in req.headers (inject would join them).
    const server = await routesApp();
    await server.listen({ port: 0, host: '127.0.0.1' });
    const body = '{"events":[]}';
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect((server.server.address() as AddressInfo).port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.end(
        `POST /v1/sessions/s/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    await server.close();
    expect(answer).toMatch(/^HTTP\/1\.1 415 /);
    expect(answer).toMatch(/"message":"Content-Type is given on 2 header lines: send it once, Content-Type: application\/json/);
  });

  it('a charset given twice: 415 saying so, whatever the values', async () => {
    for (const type of ['application/json; charset=utf-8; charset=latin1', 'application/json;charset=utf-8;CHARSET=utf-8']) {
      const res = await post(type);
      expect([res.statusCode, res.json<{ message: string }>().message]).toEqual([
        415,
        "the Content-Type's charset parameter is given 2 times: send it once (charset=utf-8) or leave it out",
      ]);
    }
  });

  it('application/*+json is read as JSON, and the 415 of another type says it is', async () => {
    expect((await post('application/vnd.api+json')).statusCode).toBe(200);
    expect((await post('application/merge-patch+json; charset=utf-8')).statusCode).toBe(200);
    // Not a subtype name (RFC 6838 §4.2: a letter or digit first), not a +json suffix (newcomer ncapi66 F7).
    for (const type of ['application/+json', 'application/.+json', 'application/x+jsonp', 'application/x+json-seq'])
      expect([type, (await post(type)).statusCode]).toEqual([type, 415]);
    const res = await post('text/json');
    expect(res.json<{ message: string }>().message).toBe(
      'send the body as JSON with Content-Type: application/json (or an application/*+json type, e.g. application/vnd.api+json) (got "text/json")',
    );
  });
});
