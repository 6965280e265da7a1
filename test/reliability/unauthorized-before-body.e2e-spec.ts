/**
 * With API keys, a request without a known key is answered 401 `unauthorized` before its body is
 * read, and one over its rate limit 429 `rate_limited` (both decided from the key, or the client
 * address, alone): the body is neither parsed (a 4 MiB body that is not JSON gets 401 or 429, not
 * 400 `malformed_json`) nor asked for (a client sending `Expect: 100-continue` gets the answer
 * instead of `100 Continue` and sends nothing), and a client already sending reads the answer (its
 * body read and discarded, as after an early 413). Before, the key and the limit were checked by
 * Nest guards after Fastify had read and parsed the whole body (up to MAX_BODY_BYTES), and a client
 * with `Expect: 100-continue` was told `100 Continue` first. Clients in their own processes (Node's
 * fetch, curl), and raw sockets. Runs in about 20 s (curl's part skipped without curl).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { curlPostFile, hasCurl, nodeProcess } from '../support/outside-clients';
import { useService, type ServiceInUse } from '../support/service-harness';

const MiB = 1024 * 1024;
const KEY = 'key-tenant-a-0001';

/** The documented 401 bodies (what the guard answered, unchanged). */
const NO_KEY = { code: 'unauthorized', message: 'this service needs an API key: send Authorization: Bearer <key>' };
const UNKNOWN_KEY = { code: 'unauthorized', message: 'unknown API key' };
/** The 429 body of tenant `tenantA`'s spent budget of 2 requests per minute (`retryAfter`: the answer's `Retry-After`). */
const rateLimited = (retryAfter: string | undefined) => ({
  code: 'rate_limited',
  message: `too many requests: the budget of tenant tenantA (shared by all of the tenant's API keys) of 2 requests per minute (RATE_LIMIT_PER_MINUTE) is spent: slow down, and retry after ${retryAfter} seconds (Retry-After)`,
});

/** 4 MiB that are not JSON (an unfinished array of strings): parsing it would answer 400 `malformed_json`. */
const NOT_JSON = Buffer.from(`{"events":[${'"xxxxxxxxxxxxxx",'.repeat((4 * MiB) / 17)}`);

/** Posts the file `path` with Node's fetch (keep-alive, no `Expect`) and `headers` (JSON); prints `{ status, body }` or the error fetch threw. */
const FETCH = `
const [url, file, headers] = process.argv.slice(1);
const body = require('node:fs').readFileSync(file);
fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...JSON.parse(headers) }, body })
  .then(async (res) => console.log(JSON.stringify({ status: res.status, body: await res.json() })))
  .catch((error) => console.log(JSON.stringify({ threw: error.message, cause: error.cause && error.cause.code })));
`;

/** A raw answer: the interim `100 Continue` if one came, the final status line, headers (lower-case names) and JSON body, and the body bytes the client sent. */
interface RawAnswer {
  continued: boolean;
  statusLine: string;
  headers: Record<string, string>;
  body: unknown;
  sent: number;
  failed: string | null;
}

/**
 * Sends `head` (a request head, its blank line included) on a keep-alive connection, then `body`:
 * at once (`sendBody: 'at once'`, the whole body before reading, as a client that writes its
 * request first), or only once told `100 Continue` (`'on continue'`, as curl does with
 * `Expect: 100-continue`). Resolves with the first final answer, once its body is complete.
 */
function rawRequest(port: number, head: string, body: Buffer, sendBody: 'at once' | 'on continue'): Promise<RawAnswer> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let continued = false;
    let sent = 0;
    let failed: string | null = null;
    let done = false;
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      socket.write(head);
      if (sendBody === 'at once') send();
    });
    const send = () => {
      const chunk = 256 * 1024;
      const pump = () => {
        while (!socket.destroyed && sent < body.length) {
          const part = body.subarray(sent, sent + chunk);
          sent += part.length;
          if (!socket.write(part)) return void socket.once('drain', pump);
        }
      };
      pump();
    };
    const finish = (answer: Omit<RawAnswer, 'continued' | 'sent' | 'failed'>) => {
      if (done) return;
      done = true;
      resolve({ continued, ...answer, sent, failed });
      socket.destroy();
    };
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      for (;;) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = received.subarray(0, end).toString('latin1').split('\r\n');
        if (/^HTTP\/1\.1 100 /.test(lines[0])) {
          continued = true;
          received = received.subarray(end + 4);
          if (sendBody === 'on continue') send();
          continue;
        }
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length']);
        if (received.length < end + 4 + length) return;
        return finish({ statusLine: lines[0], headers, body: JSON.parse(received.subarray(end + 4, end + 4 + length).toString('utf8')) });
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => (failed = error.code ?? 'error'));
    socket.on('close', () => finish({ statusLine: received.toString('latin1').split('\r\n')[0], headers: {}, body: null }));
  });
}

/** The head of a JSON POST of `length` bytes to `target`, on a keep-alive connection, with `extra` header lines. */
function postHead(target: string, length: number, ...extra: string[]): string {
  return [`POST ${target} HTTP/1.1`, 'Host: x', 'Connection: keep-alive', 'Content-Type: application/json', `Content-Length: ${length}`, ...extra, '', ''].join(
    '\r\n',
  );
}

/** The port the service listens on (it is listened on here once). */
async function portOf(harness: ServiceInUse): Promise<number> {
  const server = harness.service.app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('with API keys, 401 unauthorized is answered before the body is read', () => {
  const harness = useService({ env: { API_KEYS: `${KEY}:tenantA` } });
  let port: number;
  let dir: string;
  let notJsonFile: string;

  beforeAll(async () => {
    port = await portOf(harness);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'unauthorized-before-body-'));
    notJsonFile = path.join(dir, 'not-json');
    fs.writeFileSync(notJsonFile, NOT_JSON);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['no key', [] as string[], NO_KEY],
    ['an unknown key', ['X-Api-Key: not-a-configured-key'], UNKNOWN_KEY],
  ])('a 4 MiB body with Expect: 100-continue and %s gets 401 instead of 100 Continue, and sends nothing', async (_name, keyHeader, body) => {
    const answer = await rawRequest(port, postHead('/v1/sessions/big/events', NOT_JSON.length, 'Expect: 100-continue', ...keyHeader), NOT_JSON, 'on continue');
    expect({ ...answer, headers: undefined }).toEqual({
      continued: false,
      statusLine: 'HTTP/1.1 401 Unauthorized',
      headers: undefined,
      body,
      sent: 0,
      failed: null,
    });
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['www-authenticate']).toBeUndefined();
  });

  it('a 4 MiB body that is not JSON, sent whole before reading on a keep-alive connection, gets 401 (not 400 malformed_json), without a reset', async () => {
    const answer = await rawRequest(port, postHead('/v1/sessions/big/events', NOT_JSON.length), NOT_JSON, 'at once');
    expect({ statusLine: answer.statusLine, body: answer.body, failed: answer.failed }).toEqual({
      statusLine: 'HTTP/1.1 401 Unauthorized',
      body: NO_KEY,
      failed: null,
    });
    // the connection is not reused: the rest of the unread body is read and discarded, then it closes
    expect(answer.headers.connection).toBe('close');
  });

  it("Node's fetch (keep-alive, no Expect) posting 4 MiB that are not JSON without a known key reads 401 and its JSON", async () => {
    const url = `http://127.0.0.1:${port}/v1/sessions/big/events`;
    expect(await nodeProcess(FETCH, [url, notJsonFile, '{}'])).toEqual({ status: 401, body: NO_KEY });
    expect(await nodeProcess(FETCH, [url, notJsonFile, JSON.stringify({ authorization: 'Bearer not-a-configured-key' })])).toEqual({
      status: 401,
      body: UNKNOWN_KEY,
    });
  });

  (hasCurl() ? it : it.skip)(
    'curl posting 4 MiB without a key (it sends Expect: 100-continue) gets 401 at once, without 100 Continue, uploading nothing',
    async () => {
      const { body, statusAndUpload, trace } = await curlPostFile(`http://127.0.0.1:${port}/v1/sessions/big/events`, notJsonFile);
      expect({ status: statusAndUpload, body: JSON.parse(body) as unknown }).toEqual({ status: '401 0', body: NO_KEY });
      expect(trace).toContain('> Expect: 100-continue');
      expect(trace).not.toContain('100 Continue');
    },
  );

  it('with a known key the body is asked for (100 Continue) and read: not JSON is then 400 malformed_json', async () => {
    const answer = await rawRequest(
      port,
      postHead('/v1/sessions/big/events', NOT_JSON.length, 'Expect: 100-continue', `Authorization: Bearer ${KEY}`),
      NOT_JSON,
      'on continue',
    );
    expect({ continued: answer.continued, statusLine: answer.statusLine, code: (answer.body as { code?: unknown }).code, sent: answer.sent }).toEqual({
      continued: true,
      statusLine: 'HTTP/1.1 400 Bad Request',
      code: 'malformed_json',
      sent: NOT_JSON.length,
    });
  });

  it('without a key, the answers given before the body keep coming first (415, 413 for a declared length, invalid_query_encoding), the body and validation after 401', async () => {
    const codeOf = async (req: Promise<{ status: number; body: { code?: unknown } }>) => {
      const res = await req;
      return `${res.status} ${String(res.body.code)}`;
    };
    const http = harness.http;
    expect(await codeOf(http().post('/v1/sessions/s/events').set('content-type', 'text/plain').send('hello'))).toBe('415 unsupported_media_type');
    const declaredTooLarge = await rawRequest(port, postHead('/v1/sessions/s/events', 6 * MiB, 'Expect: 100-continue'), Buffer.alloc(0), 'on continue');
    expect({ statusLine: declaredTooLarge.statusLine, code: (declaredTooLarge.body as { code?: unknown }).code }).toEqual({
      statusLine: 'HTTP/1.1 413 Payload Too Large',
      code: 'payload_too_large',
    });
    expect(await codeOf(http().get('/v1/recall?q=%FF'))).toBe('400 invalid_query_encoding');
    // a write with a query parameter, a body of the wrong shape: 401 first
    expect(await codeOf(http().post('/v1/sessions/s/compactions?dryRun=true').send({ strategy: 'none' }))).toBe('401 unauthorized');
    // a path near a route: 405 (or a trailing slash's 404) first, whatever the key; a /v1 path no route has: 401 first
    expect(await codeOf(http().patch('/v1/sessions/s/events').send({}))).toBe('405 method_not_allowed');
    expect(await codeOf(http().post('/v1/sessions/s/events/').send({}))).toBe('404 route_not_found');
    expect(await codeOf(http().post('/v1/sessions/s/nothing').send({}))).toBe('401 unauthorized');
  });

  describe('a /v1 path no route has (a mistyped POST /v1/sesions/…/events) is answered before its body is read', () => {
    const TYPO = '/v1/sesions/demo/events';
    const NOT_FOUND = { code: 'route_not_found', message: 'no such route; see /docs for the API' };
    const keys: Array<[string, string[], unknown, string]> = [
      ['no key', [], NO_KEY, 'HTTP/1.1 401 Unauthorized'],
      ['an unknown key', ['Authorization: Bearer WRONG-KEY-123'], UNKNOWN_KEY, 'HTTP/1.1 401 Unauthorized'],
      ['a known key', [`Authorization: Bearer ${KEY}`], NOT_FOUND, 'HTTP/1.1 404 Not Found'],
    ];

    it.each(keys)('a small body that is not JSON, with %s: not 400 malformed_json', async (_name, keyHeader, body, statusLine) => {
      const notJson = Buffer.from('{not json');
      const answer = await rawRequest(port, postHead(TYPO, notJson.length, ...keyHeader), notJson, 'at once');
      expect({ statusLine: answer.statusLine, body: answer.body, failed: answer.failed }).toEqual({ statusLine, body, failed: null });
    });

    it.each(keys)(
      '4 MiB that are not JSON with Expect: 100-continue, with %s: the answer instead of 100 Continue, nothing sent',
      async (_name, keyHeader, body, statusLine) => {
        const answer = await rawRequest(port, postHead(TYPO, NOT_JSON.length, 'Expect: 100-continue', ...keyHeader), NOT_JSON, 'on continue');
        expect({ continued: answer.continued, statusLine: answer.statusLine, body: answer.body, sent: answer.sent, failed: answer.failed }).toEqual({
          continued: false,
          statusLine,
          body,
          sent: 0,
          failed: null,
        });
      },
    );

    it.each(keys)(
      '4 MiB that are not JSON sent whole before reading, with %s: the answer without a reset, the connection closed',
      async (_name, keyHeader, body, statusLine) => {
        const answer = await rawRequest(port, postHead(TYPO, NOT_JSON.length, ...keyHeader), NOT_JSON, 'at once');
        expect({ statusLine: answer.statusLine, body: answer.body, failed: answer.failed, connection: answer.headers.connection }).toEqual({
          statusLine,
          body,
          failed: null,
          connection: 'close',
        });
      },
    );

    it('a path no route has outside /v1 needs no key: 404 before its body, not 400 malformed_json', async () => {
      const answer = await rawRequest(port, postHead('/v2/sessions/demo/events', NOT_JSON.length, 'Expect: 100-continue'), NOT_JSON, 'on continue');
      expect({ continued: answer.continued, statusLine: answer.statusLine, body: answer.body, sent: answer.sent }).toEqual({
        continued: false,
        statusLine: 'HTTP/1.1 404 Not Found',
        body: NOT_FOUND,
        sent: 0,
      });
    });
  });

  it('every /v1 route of the OpenAPI document answers 401 before asking for a body; the operations routes, the page and the document need no key', async () => {
    const document = (await harness.http().get('/docs/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([route, methods]) =>
      Object.keys(methods)
        .filter((method) => ['get', 'post', 'put', 'delete', 'patch'].includes(method))
        .map((method) => ({ method: method.toUpperCase(), route })),
    );
    const v1 = operations.filter(({ route }) => route.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThanOrEqual(12);
    for (const { method, route } of v1) {
      const target = route.replace(/\{[^}]+\}/g, 'some-id') + (route === '/v1/recall' ? '?q=x' : '');
      const head = postHead(target, NOT_JSON.length, 'Expect: 100-continue').replace(/^POST /, `${method} `);
      const answer = await rawRequest(port, head, NOT_JSON, 'on continue');
      expect({ method, route, continued: answer.continued, statusLine: answer.statusLine, body: answer.body }).toEqual({
        method,
        route,
        continued: false,
        statusLine: 'HTTP/1.1 401 Unauthorized',
        body: NO_KEY,
      });
    }
    const open = operations.filter(({ route }) => !route.startsWith('/v1/'));
    expect(open.map(({ route }) => route).sort()).toEqual(['/health', '/health/ready', '/metrics']);
    for (const target of ['/health', '/health/ready', '/metrics', '/ui/', '/ui/app.js', '/docs/openapi.json']) {
      const res = await harness.http().get(target);
      expect({ target, refused: res.status === 401 || res.status === 429 }).toEqual({ target, refused: false });
    }
  });
});

describe('with API keys and a rate limit, 429 rate_limited is answered before the body is read', () => {
  const harness = useService({ env: { API_KEYS: `${KEY}:tenantA`, RATE_LIMIT_PER_MINUTE: '2' } });
  let port: number;

  beforeAll(async () => (port = await portOf(harness)));

  it('a 401 carries the budget headers as before', async () => {
    const res = await harness.http().get('/v1/recall?q=x');
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 401, body: NO_KEY });
    expect([res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining'], Number(res.headers['x-ratelimit-reset']) > 0]).toEqual(['2', '1', true]);
  });

  it('a key over its budget sending 4 MiB that are not JSON gets 429 with its headers, instead of 100 Continue, and sends nothing', async () => {
    for (let i = 0; i < 2; i++) expect((await harness.http().get('/v1/recall?q=x').set('authorization', `Bearer ${KEY}`)).status).toBe(200);
    const answer = await rawRequest(
      port,
      postHead('/v1/sessions/big/events', NOT_JSON.length, 'Expect: 100-continue', `Authorization: Bearer ${KEY}`),
      NOT_JSON,
      'on continue',
    );
    expect({ continued: answer.continued, statusLine: answer.statusLine, body: answer.body, sent: answer.sent, failed: answer.failed }).toEqual({
      continued: false,
      statusLine: 'HTTP/1.1 429 Too Many Requests',
      body: rateLimited(answer.headers['retry-after']),
      sent: 0,
      failed: null,
    });
    expect(answer.headers['x-ratelimit-limit']).toBe('2');
    expect(answer.headers['x-ratelimit-remaining']).toBe('0');
    for (const name of ['x-ratelimit-reset', 'retry-after']) {
      const seconds = Number(answer.headers[name]);
      expect({ name, ok: Number.isInteger(seconds) && seconds > 0 && seconds <= 60 }).toEqual({ name, ok: true });
    }
    // sent whole before reading: 429 too, not 400 malformed_json
    const whole = await rawRequest(port, postHead('/v1/sessions/big/events', NOT_JSON.length, `X-Api-Key: ${KEY}`), NOT_JSON, 'at once');
    expect({ statusLine: whole.statusLine, body: whole.body, failed: whole.failed }).toEqual({
      statusLine: 'HTTP/1.1 429 Too Many Requests',
      body: rateLimited(whole.headers['retry-after']),
      failed: null,
    });
  });
});
