/**
 * Request heads a raw-socket client sends and no HTTP library does (newcomer findings): a `#` in the
 * request target (`DELETE /v1/sessions/S#` erased S), an upgrade offer with requests pipelined behind
 * it (never answered; the connection closed at the keep-alive timeout), `Transfer-Encoding: gzip,
 * chunked` (read as if not compressed), `CONNECT` (closed without an answer) and a head whose lines
 * end in a bare LF (refused as "not valid HTTP/1.1", also for HTTP/1.0). Raw sockets, so that the
 * bytes sent and read are exactly the test's.
 */
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { useService } from '../support/service-harness';
import { RawConnection, requestBytes, rawConnections } from '../support/raw-connection';

const user = (id: string) => JSON.stringify({ events: [{ id, type: 'user', text: `text of ${id}` }] });

/** A chunked body of `bytes` (one chunk, then the last chunk). */
const chunked = (bytes: Buffer): Buffer => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n0\r\n\r\n')]);

/** The head of a POST of a chunked JSON body to `path` with `Transfer-Encoding: codings`. */
const chunkedPostHead = (path: string, codings: string): string =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: ${codings}\r\n\r\n`;

/** Whether `c` is closed by the server within `ms` (a bound on a wait, not a timing assertion: the old code held it 73 s). */
async function closedWithin(c: RawConnection, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(c.isClosed), ms)));
  try {
    return await Promise.race([c.closed.then(() => true), bound]);
  } finally {
    clearTimeout(timer);
  }
}

describe('request heads only raw clients send', () => {
  const harness = useService();
  let port: number;
  const { connect, closeAll } = rawConnections(() => port);

  beforeAll(async () => {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    closeAll();
  });

  const append = async (sessionId: string, id: string): Promise<void> => {
    await harness.http().post(`/v1/sessions/${sessionId}/events`).set('Content-Type', 'application/json').send(user(id)).expect(201);
  };
  const eventCount = async (sessionId: string): Promise<number | null> => {
    const res = await harness.http().get(`/v1/sessions/${sessionId}`);
    return res.status === 404 ? null : (res.body as { eventCount: number }).eventCount;
  };

  /** The count of `http_request_duration_seconds` for `method`, `route` and `status`, over every tenant (0 when absent). */
  const counted = async (method: string, route: string, status: number): Promise<number> => {
    const metrics = (await harness.http().get('/metrics').expect(200)).text;
    return metrics
      .split('\n')
      .filter((l) => l.startsWith(`http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}",`))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };

  describe('a "#" in the request target', () => {
    it('is answered 400 malformed_request saying to remove it or send %23, on every route, and nothing is written', async () => {
      await append('frag', 'f1');
      const targets: Array<[string, string, string?]> = [
        ['DELETE', '/v1/sessions/frag#'],
        ['DELETE', '/v1/sessions/frag#x'],
        ['GET', '/v1/sessions/frag#x'],
        ['POST', '/v1/sessions/frag/events#x', user('f2')],
        ['GET', '/v1/recall?q=C#'],
        ['GET', '/health#'],
      ];
      for (const [method, target, body] of targets) {
        const c = connect();
        c.send(requestBytes(method, target, body));
        const [answer] = await c.next(1);
        expect([method, target, answer.status, answer.body.code]).toEqual([method, target, 400, 'malformed_request']);
        expect(answer.body.message).toMatch(/request target holds "#".*remove.*%23/);
        expect(answer.headers.connection).toBe('close');
        expect(await closedWithin(c, 5_000)).toBe(true);
      }
      // Neither erased nor written to.
      expect(await eventCount('frag')).toBe(1);
      const erasures = await harness.http().get('/v1/erasures').expect(200);
      expect((erasures.body.erasures as { sessionId: string }[]).filter((e) => e.sessionId === 'frag')).toEqual([]);
      // An encoded "#" is data: %23 in a query value is searched for as usual.
      await harness.http().get('/v1/recall?q=C%23').expect(200);
    });
  });

  describe('a request offering an upgrade', () => {
    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';

    it('is answered as HTTP/1.1 with Connection: close, and the connection closes after it (requests pipelined behind it are resent)', async () => {
      await append('up', 'u1');
      const c = connect();
      // curl --http2 on http://, with a request pipelined behind it in the same write.
      c.send(requestBytes('GET', '/v1/sessions/up', undefined, h2c) + requestBytes('GET', '/health'));
      const [answer] = await c.next(1);
      expect([answer.status, answer.body.sessionId, answer.headers.connection]).toEqual([200, 'up', 'close']);
      expect(await closedWithin(c, 5_000)).toBe(true);
      // The client resends what it pipelined behind it on a new connection.
      const again = connect();
      again.send(requestBytes('GET', '/health'));
      expect((await again.next(1))[0].status).toBe(200);
    });

    it('reads its body as any other (a websocket offer on a POST): written once, answered with Connection: close', async () => {
      const c = connect();
      c.send(requestBytes('POST', '/v1/sessions/up-ws/events', user('w1'), 'Connection: Upgrade\r\nUpgrade: websocket\r\n') + requestBytes('GET', '/health'));
      const [answer] = await c.next(1);
      expect([answer.status, answer.headers.connection]).toEqual([201, 'close']);
      expect(await closedWithin(c, 5_000)).toBe(true);
      expect(await eventCount('up-ws')).toBe(1);
    });

    it('keeps the connection when Upgrade is sent without Connection: upgrade (no offer: Node parses past it)', async () => {
      const c = connect();
      c.send(requestBytes('GET', '/health', undefined, 'Upgrade: h2c\r\n') + requestBytes('GET', '/health'));
      const answers = await c.next(2);
      expect(answers.map((a) => [a.status, a.headers.connection])).toEqual([
        [200, 'keep-alive'],
        [200, 'keep-alive'],
      ]);
    });
  });

  describe('Transfer-Encoding other than chunked', () => {
    it('is answered 501 unsupported_transfer_coding naming chunked and Content-Encoding, before the body, and nothing is written', async () => {
      const plain = Buffer.from(user('t1'));
      const bodies: Array<[string, Buffer]> = [
        ['gzip, chunked', chunked(gzipSync(plain))],
        // plain JSON sent as gzip: was written as it was
        ['gzip, chunked', chunked(plain)],
        ['identity, chunked', chunked(plain)],
      ];
      for (const [codings, body] of bodies) {
        const c = connect();
        c.send(Buffer.concat([Buffer.from(chunkedPostHead('/v1/sessions/te/events', codings)), body]));
        const [answer] = await c.next(1);
        expect([codings, answer.status, answer.body.code]).toEqual([codings, 501, 'unsupported_transfer_coding']);
        expect(answer.body.message).toContain(`Transfer-Encoding: "${codings}" is not supported`);
        expect(answer.body.message).toMatch(/Transfer-Encoding: chunked.*Content-Encoding: gzip/);
        expect(answer.headers.connection).toBe('close');
      }
      expect(await eventCount('te')).toBeNull();
      // chunked alone is read as ever
      const c = connect();
      c.send(Buffer.concat([Buffer.from(chunkedPostHead('/v1/sessions/te/events', 'Chunked')), chunked(Buffer.from(user('t2')))]));
      expect((await c.next(1))[0].status).toBe(201);
    });

    it('is counted under its route', async () => {
      const before = await counted('POST', '/v1/sessions/:sessionId/events', 501);
      const c = connect();
      c.send(Buffer.concat([Buffer.from(chunkedPostHead('/v1/sessions/te-count/events', 'gzip, chunked')), chunked(Buffer.from(user('c1')))]));
      expect((await c.next(1))[0].status).toBe(501);
      expect(await counted('POST', '/v1/sessions/:sessionId/events', 501)).toBe(before + 1);
    });

    it('that Node refuses itself (not ending in chunked) is answered 400 malformed_request saying which Transfer-Encoding is read', async () => {
      const body = gzipSync(Buffer.from(user('t3')));
      const c = connect();
      c.send(
        Buffer.concat([
          Buffer.from(
            `POST /v1/sessions/te/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\nContent-Length: ${body.length}\r\n\r\n`,
          ),
          body,
        ]),
      );
      const [answer] = await c.next(1);
      expect([answer.status, answer.body.code]).toEqual([400, 'malformed_request']);
      expect(answer.body.message).toMatch(/Transfer-Encoding: chunked.*Content-Encoding: gzip/);
    });
  });

  describe('CONNECT', () => {
    it('is answered 405 method_not_allowed (no tunnel: the service is no proxy) with Allow and Connection: close, logged and counted', async () => {
      const before = await counted('CONNECT', 'unknown', 405);
      const c = connect();
      c.send('CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n');
      const [answer] = await c.next(1, 5_000);
      expect([answer.status, answer.body.code]).toEqual([405, 'method_not_allowed']);
      expect(answer.body.message).toMatch(/CONNECT is not allowed: the service is not a proxy/);
      // An authority is no resource of the service: it allows no method.
      expect(answer.headers.allow).toBe('');
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers['x-request-id']).toBeTruthy();
      expect(await closedWithin(c, 5_000)).toBe(true);
      expect(await counted('CONNECT', 'unknown', 405)).toBe(before + 1);
    });

    it('of a path names the methods the path has in Allow', async () => {
      const c = connect();
      c.send('CONNECT /v1/sessions/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const [answer] = await c.next(1, 5_000);
      expect([answer.status, answer.headers.allow]).toEqual([405, 'DELETE, GET, HEAD']);
    });
  });

  describe('HTTP/1.0 and line ends', () => {
    it('answers an HTTP/1.0 request without Host', async () => {
      const c = connect();
      c.send('GET /health HTTP/1.0\r\n\r\n');
      expect((await c.next(1))[0].status).toBe(200);
    });

    it('answers a head whose lines end in a bare LF 400 malformed_request saying to end them with CRLF (not "not valid HTTP/1.1")', async () => {
      for (const head of ['GET /health HTTP/1.0\n\n', 'GET /health HTTP/1.1\nHost: 127.0.0.1\n\n', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\n\r\n']) {
        const c = connect();
        c.send(head);
        const [answer] = await c.next(1);
        expect([JSON.stringify(head), answer.status, answer.body.code]).toEqual([JSON.stringify(head), 400, 'malformed_request']);
        expect(answer.body.message).toMatch(/lines end in a bare LF.*CRLF/);
        expect(answer.body.message).not.toContain('not valid HTTP/1.1');
      }
    });

    it('answers a request line naming HTTP/2.0, or no version, 400 malformed_request saying to send HTTP/1.1, on every route, and nothing is written', async () => {
      await append('v1', 'e1');
      const heads = [
        ['GET /health HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n', /names HTTP\/2\.0: the service speaks HTTP\/1\.1 and HTTP\/1\.0 only/],
        ['GET /health\r\n\r\n', /names no HTTP version \(HTTP\/0\.9 form\)/],
        [`DELETE /v1/sessions/v1 HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n`, /HTTP\/2\.0/],
        [requestBytes('POST', '/v1/sessions/v1/events', user('e2')).replace('HTTP/1.1', 'HTTP/2.0'), /HTTP\/2\.0/],
      ] as const;
      for (const [head, message] of heads) {
        const c = connect();
        c.send(head);
        const [answer] = await c.next(1, 5_000);
        expect([JSON.stringify(head.split('\r\n')[0]), answer.status, answer.body.code, answer.headers.connection]).toEqual([
          JSON.stringify(head.split('\r\n')[0]),
          400,
          'malformed_request',
          'close',
        ]);
        expect(answer.body.message).toMatch(message);
      }
      // was: 200, the session erased, e2 written
      expect(await eventCount('v1')).toBe(1);
    });

    it("names the parser's reason for any other head Node cannot parse", async () => {
      const c = connect();
      c.send('FETCH /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const [answer] = await c.next(1);
      expect([answer.status, answer.body.code]).toEqual([400, 'malformed_request']);
      expect(answer.body.message).toMatch(/^the request is not valid HTTP\/1\.1 or HTTP\/1\.0 \(Invalid method encountered\)/);
    });
  });
});
