/**
 * Answers no controller gives (issue 17 hardening): over-long paths, paths leaving /ui, requests
 * Node cannot parse, wrong methods. Each is in our `{ code, message }` shape with a documented
 * status, and counted in `http_request_duration_seconds`. Sent with node:http as written (no
 * client-side normalisation of `..` or `%2e%2e`).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useService } from '../support/service-harness';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { code?: unknown; message?: unknown; [key: string]: unknown };
  keys: string[];
}

const long = (n: number) => 'a'.repeat(n);

describe('answers Fastify and Node would give themselves', () => {
  const harness = useService();

  beforeAll(async () => {
    await harness
      .http()
      .post('/v1/sessions/x/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'hi' }] })
      .expect(201);
  });

  /** Sends `method path` verbatim and reads the JSON answer. */
  async function send(method: string, path: string): Promise<Answer> {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, headers: { connection: 'close' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          try {
            const body = JSON.parse(text) as Answer['body'];
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body, keys: Object.keys(body).sort() });
          } catch {
            reject(new Error(`not JSON (${res.statusCode}): ${text.slice(0, 200)}`));
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  const CASES: Array<{ name: string; method: string; path: string; status: number; code: string; mentions: RegExp }> = [
    {
      name: '5,000-character session id',
      method: 'GET',
      path: `/v1/sessions/${long(5000)}/window`,
      status: 400,
      code: 'invalid_session_id',
      mentions: /sessionId.*128/,
    },
    {
      name: '10,000-character session id',
      method: 'POST',
      path: `/v1/sessions/${long(10_000)}/events`,
      status: 400,
      code: 'invalid_session_id',
      mentions: /128/,
    },
    {
      name: '5,000-character compaction id',
      method: 'GET',
      path: `/v1/sessions/x/compactions/${long(5000)}`,
      status: 404,
      code: 'compaction_not_found',
      mentions: /compaction|session/,
    },
    { name: '100,000-character path', method: 'GET', path: `/v1/sessions/${long(100_000)}/window`, status: 414, code: 'uri_too_long', mentions: /URL.*16 KiB/ },
    // A request line over 16 KiB that arrives whole (with its line end) in one packet: still the URL's fault.
    { name: '20,000-character path', method: 'GET', path: `/v1/sessions/${long(20_000)}/window`, status: 414, code: 'uri_too_long', mentions: /URL.*16 KiB/ },
    {
      name: '60,000-character query',
      method: 'GET',
      path: `/v1/sessions/x/window?q=${long(60_000)}`,
      status: 414,
      code: 'uri_too_long',
      mentions: /URL.*16 KiB/,
    },
    // The message is about the whole URL (was "ids are at most 128 characters" for a long q too).
    {
      name: '20,000-character recall q',
      method: 'GET',
      path: `/v1/recall?q=${long(20_000)}`,
      status: 414,
      code: 'uri_too_long',
      mentions: /^the URL is longer than 16 KiB \(the request line\): shorten it, e.g. a shorter query string \(such as recall's q\) or shorter ids$/,
    },
    { name: 'path leaving /ui with ..', method: 'GET', path: '/ui/../../../../etc/passwd', status: 404, code: 'route_not_found', mentions: /no such route/ },
    {
      name: 'path leaving /ui with %2e%2e',
      method: 'GET',
      path: '/ui/%2e%2e/%2e%2e/package.json',
      status: 404,
      code: 'route_not_found',
      mentions: /no such route/,
    },
    // Only the page's files are served: not the tsconfig.json beside them, nor anything else there.
    { name: "the /ui page's tsconfig.json", method: 'GET', path: '/ui/tsconfig.json', status: 404, code: 'route_not_found', mentions: /no such route/ },
    { name: 'a /ui file that is not the page', method: 'GET', path: '/ui/app.ts', status: 404, code: 'route_not_found', mentions: /no such route/ },
    { name: 'bad percent-encoding', method: 'GET', path: '/v1/sessions/%zz/window', status: 400, code: 'invalid_path', mentions: /percent-encoded/ },
    { name: 'a method HTTP does not know', method: 'FOO', path: '/v1/sessions/x/window', status: 400, code: 'malformed_request', mentions: /method/ },
    { name: 'PATCH on the window', method: 'PATCH', path: '/v1/sessions/x/window', status: 405, code: 'method_not_allowed', mentions: /PATCH.*GET/ },
    { name: 'DELETE on the log', method: 'DELETE', path: '/v1/sessions/x/events', status: 405, code: 'method_not_allowed', mentions: /DELETE.*GET.*POST/ },
    // Routes have no trailing slash (Fastify's default, kept: one URL per resource).
    // …and the answer says so when the path without it is a route.
    {
      name: 'a trailing slash',
      method: 'GET',
      path: '/v1/sessions/?limit=1',
      status: 404,
      code: 'route_not_found',
      mentions: /^no such route: routes have no trailing slash; remove it \("\/v1\/sessions\?limit=1"\)$/,
    },
    {
      name: "a trailing slash after a session's path",
      method: 'GET',
      path: '/v1/sessions/bad1/',
      status: 404,
      code: 'route_not_found',
      mentions: /remove it \("\/v1\/sessions\/bad1"\)/,
    },
    {
      name: 'a trailing slash on an unknown path',
      method: 'GET',
      path: '/v1/nothing/',
      status: 404,
      code: 'route_not_found',
      mentions: /^no such route; see \/docs/,
    },
    { name: 'unknown route', method: 'GET', path: '/v1/nothing', status: 404, code: 'route_not_found', mentions: /docs/ },
  ];

  it.each(CASES.map((c) => [c.name, c] as const))('%s → documented status and code, in our shape', async (_name, c) => {
    const answer = await send(c.method, c.path);
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: c.status, code: c.code });
    expect(answer.body.message).toMatch(c.mentions);
    expect(answer.keys).not.toContain('statusCode');
    expect(answer.keys).not.toContain('error');
    expect(JSON.stringify(answer.body)).not.toMatch(/root:|"name": "session|\/etc\//);
  });

  it('answers 431 headers_too_large to headers over 16 KiB after a short request line', async () => {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<{ status: number; body: { code?: string; message?: string } }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: '/health', headers: { 'x-big': long(20_000), connection: 'close' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { code?: string } }));
      });
      req.on('error', reject);
      req.end();
    });
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 431, code: 'headers_too_large' });
    expect(answer.body.message).toMatch(/headers.*16 KiB/);
  });

  it('answers 413 at once to a body declaring more than MAX_BODY_BYTES, without waiting for it', async () => {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<{ status: number; body: { code?: string } }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/sessions/x/events',
          headers: { 'content-type': 'application/json', 'content-length': '999999999' },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { code?: string } }));
        },
      );
      req.on('error', reject);
      req.setTimeout(5000, () => req.destroy(new Error('no answer within 5 s')));
      req.write('{}');
    });
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 413, code: 'payload_too_large' });
  });

  it('names the allowed methods in an Allow header on 405', async () => {
    const answer = await send('PUT', '/v1/sessions/x/events');
    expect(answer.status).toBe(405);
    expect(answer.headers.allow?.split(', ')).toEqual(expect.arrayContaining(['GET', 'POST']));
  });

  it("serves the /ui page's files: index.html (also as /ui/), app.js and style.css", async () => {
    for (const path of ['/ui/', '/ui/index.html', '/ui/app.js', '/ui/style.css', '/ui/app.js?v=1']) {
      const res = await harness.http().get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    expect((await harness.http().get('/ui')).status).toBe(301);
  });

  it('answers a browser asking for /favicon.ico with 204 No Content (not a 404 error), HEAD too, and sends the /ui page no favicon request', async () => {
    const get = await harness.http().get('/favicon.ico');
    expect({ status: get.status, body: get.text ?? '' }).toEqual({ status: 204, body: '' });
    expect((await harness.http().head('/favicon.ico')).status).toBe(204);
    const page = await harness.http().get('/ui/').expect(200);
    expect(page.text).toMatch(/<link rel="icon" href="data:,"/);
  });

  it('counts each of these answers in /metrics', async () => {
    await send('GET', `/v1/sessions/${long(5000)}/window`);
    await send('GET', '/v1/sessions/%zz/window');
    await send('GET', `/v1/sessions/${long(100_000)}/window`);
    await send('PATCH', '/v1/sessions/x/window');
    const metrics = (await harness.http().get('/metrics')).text;
    for (const status of ['400', '405', '414']) {
      expect({ status, counted: new RegExp(`http_request_duration_seconds_count\\{[^}]*status="${status}"[^}]*\\} [1-9]`).test(metrics) }).toEqual({
        status,
        counted: true,
      });
    }
    expect(metrics).not.toMatch(/status="500"/);
  });

  // They were labelled route="unknown", although the path exists.
  it('counts a 405 under the route pattern its path matches', async () => {
    expect((await send('PATCH', '/v1/sessions/bad1')).status).toBe(405);
    expect((await send('PATCH', '/v1/sessions/x/window')).status).toBe(405);
    const metrics = (await harness.http().get('/metrics')).text;
    const counted = metrics
      .split('\n')
      .filter((line) => line.startsWith('http_request_duration_seconds_count{') && line.includes('status="405"'))
      .map((line) => line.replace(/ \d+$/, ''));
    expect(counted).toEqual(
      expect.arrayContaining([
        'http_request_duration_seconds_count{method="PATCH",route="/v1/sessions/:sessionId",status="405",tenant="none"}',
        'http_request_duration_seconds_count{method="PATCH",route="/v1/sessions/:sessionId/window",status="405",tenant="none"}',
      ]),
    );
    expect(counted.filter((line) => line.includes('route="unknown"'))).toEqual([]);
  });
});
