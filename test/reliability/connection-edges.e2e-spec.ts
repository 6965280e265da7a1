/**
 * What a client sees of its connection in the edge cases a retrying client meets (ncretry repro
 * scripts 13–15): a half-close (FIN) inside a body is answered 400 `request_aborted` through the
 * request's route (it was 400 `malformed_request`, a warn line and a count under route `unknown`);
 * a half-close after whole requests still gets every answer (a POST was written but unanswered and
 * uncounted); requests pipelined behind a `malformed_json` are answered (the connection was closed
 * after it); a DELETE carrying a body is refused (it was ignored: the session was erased whatever
 * the body said), and one with an empty body (Content-Length: 0, a chunked body of no byte) is not
 * (it was 400 or 415). Raw sockets, so that the bytes sent and read are exactly the test's.
 */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Logger } from '@nestjs/common';
import { useService } from '../support/service-harness';

/** What a raw exchange read: the bytes (latin1), and whether the service closed the connection within the wait. */
interface Exchange {
  text: string;
  closed: boolean;
}

/** A step of a raw exchange: half-close (shut down the sending side, a TCP FIN). */
const FIN = Symbol('FIN');

/** A step of a raw exchange: bytes to write, {@link FIN}, or a pause in ms. */
type Step = string | Buffer | typeof FIN | number;

/** An HTTP/1.1 POST of `body` (JSON) to `path`, with `extra` header lines (each ending with CRLF). */
function post(path: string, body: string | Buffer, extra = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n${extra}\r\n`;
  return Buffer.concat([Buffer.from(head), bytes]);
}

/** The status lines of the answers in `text`, in order. */
function statusLines(text: string): string[] {
  return [...text.matchAll(/HTTP\/1\.1 \d{3} [^\r]*/g)].map((m) => m[0]);
}

/** The JSON bodies of the answers in `text` (each answer's body is one JSON object here), in order. */
function bodies(text: string): Array<Record<string, unknown>> {
  return text
    .split(/HTTP\/1\.1 \d{3}/)
    .slice(1)
    .map((answer) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>);
}

/** The head (status line and headers, lower-cased names) of the `index`th answer in `text`. */
function headOf(text: string, index: number): string {
  const answer = text.split(/(?=HTTP\/1\.1 \d{3})/)[index] ?? '';
  return answer.slice(0, answer.indexOf('\r\n\r\n')).toLowerCase();
}

describe('connection edges: half-close, pipelining after an error, DELETE bodies', () => {
  const harness = useService();
  let port: number;

  beforeAll(async () => {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(() => jest.restoreAllMocks());

  /**
   * Connects (allowHalfOpen: the client reads after its FIN), runs `steps`, and reads until the
   * service closes the connection (its FIN) or `waitMs` passed after the last step.
   */
  async function exchange(steps: Step[], waitMs = 5_000): Promise<Exchange> {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let text = '';
    let closed = false;
    socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
    socket.on('error', () => undefined);
    // The service's FIN ('end'; with allowHalfOpen the socket closes only once this side ends too).
    const closing = new Promise<void>((resolve) =>
      socket.once('end', () => {
        closed = true;
        resolve();
      }),
    );
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    for (const step of steps) {
      if (step === FIN) socket.end();
      else if (typeof step === 'number') await new Promise((resolve) => setTimeout(resolve, step));
      else socket.write(step);
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    socket.destroy();
    return { text, closed };
  }

  /** The count of `http_request_duration_seconds` for `method`, `route` and `status`, over every `tenant` label (0 when absent). */
  async function counted(method: string, route: string, status: number): Promise<number> {
    const metrics = (await harness.http().get('/metrics').expect(200)).text;
    const lines = metrics
      .split('\n')
      .filter((l) => l.startsWith(`http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}",tenant="`));
    return lines.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  }

  /** Appends one user event to `sessionId` (201; sent again, a retry): a session for a DELETE to erase or keep, or a GET to read. */
  const appendOne = async (sessionId: string): Promise<void> => {
    await harness
      .http()
      .post(`/v1/sessions/${sessionId}/events`)
      .send({ events: [{ id: `${sessionId}-1`, type: 'user', text: 'hello' }] })
      .expect(201);
  };

  describe('a client that half-closes inside a body', () => {
    const EVENTS = '/v1/sessions/:sessionId/events';
    const body = JSON.stringify({ events: [{ id: 'fin1', type: 'user', text: 'x'.repeat(500) }] });

    it('reads 400 request_aborted (not malformed_request), counted under its route, with no warn line, and nothing is written', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const [routeBefore, unknownBefore] = [await counted('POST', EVENTS, 400), await counted('unknown', 'unknown', 400)];
      const full = post('/v1/sessions/fin-mid-body/events', body);
      const { text, closed } = await exchange([full.subarray(0, full.length - 300), 200, FIN]);
      expect(statusLines(text)).toEqual(['HTTP/1.1 400 Bad Request']);
      expect(bodies(text)[0]).toEqual({ code: 'request_aborted', message: 'the connection closed before the whole body arrived; nothing was written' });
      expect(headOf(text, 0)).toContain('connection: close');
      expect(closed).toBe(true);
      expect(await counted('POST', EVENTS, 400)).toBe(routeBefore + 1);
      expect(await counted('unknown', 'unknown', 400)).toBe(unknownBefore);
      expect(warn.mock.calls.map((call) => String(call[0])).filter((line) => /could not parse|malformed_request/.test(line))).toEqual([]);
      await harness.http().get('/v1/sessions/fin-mid-body').expect(404);
    });

    it('reads 400 request_aborted for a chunked body without its last chunk, and for a gzip body cut short', async () => {
      const chunked = `POST /v1/sessions/fin-chunked/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n`;
      const gzip = gzipSync(Buffer.from(body));
      const compressed = post('/v1/sessions/fin-gzip/events', gzip, 'Content-Encoding: gzip\r\n');
      for (const steps of [
        [chunked, 200, FIN],
        [compressed.subarray(0, compressed.length - 10), 200, FIN],
      ] as Step[][]) {
        const { text, closed } = await exchange(steps);
        expect({ answers: statusLines(text), code: bodies(text)[0]?.code, closed }).toEqual({
          answers: ['HTTP/1.1 400 Bad Request'],
          code: 'request_aborted',
          closed: true,
        });
      }
      await harness.http().get('/v1/sessions/fin-chunked').expect(404);
      await harness.http().get('/v1/sessions/fin-gzip').expect(404);
    });

    it('reads the answer a pipelined whole request got before the one cut short', async () => {
      const first = post('/v1/sessions/fin-pipelined/events', JSON.stringify({ events: [{ id: 'p1', type: 'user', text: 'whole' }] }));
      const second = post('/v1/sessions/fin-pipelined/events', body);
      const { text, closed } = await exchange([Buffer.concat([first, second.subarray(0, second.length - 100)]), 200, FIN], 15_000);
      expect({ answers: statusLines(text), codes: bodies(text).map((b) => b.code), closed }).toEqual({
        answers: ['HTTP/1.1 201 Created', 'HTTP/1.1 400 Bad Request'],
        codes: [undefined, 'request_aborted'],
        closed: true,
      });
    });

    it('gets no second answer when its request was answered before the body (415), and no warn line', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const head = `POST /v1/sessions/fin-415/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 500\r\n\r\nabc`;
      const { text, closed } = await exchange([head, 300, FIN]);
      expect({ answers: statusLines(text), closed }).toEqual({ answers: ['HTTP/1.1 415 Unsupported Media Type'], closed: true });
      expect(warn.mock.calls.map((call) => String(call[0])).filter((line) => /could not parse/.test(line))).toEqual([]);
    });

    it('still gets 400 malformed_request for a request Node cannot parse', async () => {
      const { text } = await exchange(['BREW /v1/sessions HTTP/1.1\r\nHost: localhost\r\n\r\n']);
      expect(bodies(text)[0]?.code).toBe('malformed_request');
    });
  });

  describe('a client that half-closes after whole requests (nc -N)', () => {
    it.each([
      ['GET', () => Buffer.from('GET /v1/sessions/hc-get HTTP/1.1\r\nHost: localhost\r\n\r\n'), 'HTTP/1.1 404 Not Found', 'hc-get', undefined],
      [
        'a small POST',
        () => post('/v1/sessions/hc-small/events', JSON.stringify({ events: [{ id: 'h1', type: 'user', text: 'half close' }] })),
        'HTTP/1.1 201 Created',
        'hc-small',
        'h1',
      ],
      [
        'a POST of 15,000 characters (counted off the request thread)',
        () => post('/v1/sessions/hc-large/events', JSON.stringify({ events: [{ id: 'h2', type: 'user', text: 'word '.repeat(3000) }] })),
        'HTTP/1.1 201 Created',
        'hc-large',
        'h2',
      ],
    ])(
      '%s is answered, then the connection closed, and counted',
      async (_name, request, statusLine, session, written) => {
        const method = request().toString('latin1').split(' ')[0];
        const route = method === 'GET' ? '/v1/sessions/:sessionId' : '/v1/sessions/:sessionId/events';
        const status = Number(statusLine.split(' ')[1]);
        const before = await counted(method, route, status);
        // Up to 60 s: the first large text starts the counting worker, seconds on a loaded machine.
        const { text, closed } = await exchange([request(), FIN], 60_000);
        expect({ answers: statusLines(text), closed }).toEqual({ answers: [statusLine], closed: true });
        expect(await counted(method, route, status)).toBe(before + 1);
        if (written !== undefined) {
          const log = await harness.http().get(`/v1/sessions/${session}/events`).expect(200);
          expect((log.body as { events: Array<{ eventId: string }> }).events.map((e) => e.eventId)).toEqual([written]);
        }
      },
      90_000,
    );

    it('answers every request pipelined before the half-close, in order', async () => {
      const append = (id: string) => post('/v1/sessions/hc-pipelined/events', JSON.stringify({ events: [{ id, type: 'user', text: `pipelined ${id}` }] }));
      // (Processed one at a time, in order: pipelined-in-order.ts.)
      const { text, closed } = await exchange(
        [Buffer.concat([append('a'), append('b'), Buffer.from('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n')]), FIN],
        15_000,
      );
      expect({ answers: statusLines(text), closed }).toEqual({ answers: ['HTTP/1.1 201 Created', 'HTTP/1.1 201 Created', 'HTTP/1.1 200 OK'], closed: true });
    });
  });

  it('answers the requests pipelined behind a malformed_json, on the same connection', async () => {
    const path = '/v1/sessions/pipe-after-error/events';
    const good = (id: string) => post(path, JSON.stringify({ events: [{ id, type: 'user', text: 'ok' }] }));
    const requests = [
      post(path, '{"events": [}'),
      good('g1'),
      Buffer.from(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\nx`),
      good('g2'),
      Buffer.from('GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n'),
      good('g3'),
    ];
    const { text, closed } = await exchange([Buffer.concat(requests)], 3_000);
    expect(statusLines(text)).toEqual([
      'HTTP/1.1 400 Bad Request',
      'HTTP/1.1 201 Created',
      'HTTP/1.1 415 Unsupported Media Type',
      'HTTP/1.1 201 Created',
      'HTTP/1.1 404 Not Found',
      'HTTP/1.1 201 Created',
    ]);
    expect(bodies(text)[0].code).toBe('malformed_json');
    expect(headOf(text, 0)).not.toContain('connection: close');
    expect(closed).toBe(false);
  });

  it.each([
    ['bytes that are not HTTP', 'GARBAGE\r\n\r\n', 'HTTP/1.1 400 Bad Request'],
    ['a header with a NUL', 'GET /health HTTP/1.1\r\nHost: localhost\r\nX-A: a\u0000b\r\n\r\n', 'HTTP/1.1 400 Bad Request'],
    ['headers over 16 KiB', `GET /health HTTP/1.1\r\nHost: localhost\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`, 'HTTP/1.1 431 Request Header Fields Too Large'],
  ])(
    'answers a write sent just ahead of %s before refusing them: its write is acknowledged, never written unanswered (newcomer ncapi71 F1)',
    async (_name, bad, refusal) => {
      const sessionId = `ahead-of-garbage-${refusal.slice(9, 12)}-${_name.length}`;
      const path = `/v1/sessions/${sessionId}/events`;
      const write = post(path, JSON.stringify({ events: [{ id: 'w1', type: 'user', text: 'kept' }] }));
      const { text, closed } = await exchange([write, Buffer.from(bad, 'latin1')], 5_000);
      expect(statusLines(text)).toEqual(['HTTP/1.1 201 Created', refusal]);
      expect(closed).toBe(true);
      const log = await harness.http().get(`${path}`).expect(200);
      expect((log.body as { events: Array<{ data: { event: { id: string } } }> }).events.map((e) => e.data.event.id)).toEqual(['w1']);
    },
  );

  it('tells an HTTP/1.0 POST without Content-Length that its body needs one (newcomer ncapi71 F7: "Data after Connection: close")', async () => {
    const body = JSON.stringify({ events: [{ id: 'h10', type: 'user', text: 'x' }] });
    const { text } = await exchange([`POST /v1/sessions/http10/events HTTP/1.0\r\nContent-Type: application/json\r\n\r\n${body}`], 3_000);
    expect(bodies(text)).toEqual([
      { code: 'validation_failed', parameter: '(body)', message: expect.stringMatching(/^the request has no body: .*Content-Length/) },
    ]);
    await harness.http().get('/v1/sessions/http10').expect(404);
  });

  describe('DELETE /v1/sessions/{sessionId}', () => {
    beforeAll(async () => {
      await appendOne('del-body');
    });

    it.each([
      ['a JSON body', 'application/json', '{"expectedRevision": "5"}'],
      ['an empty JSON object', 'application/json', '{}'],
      ['a text body', 'text/plain', 'please'],
    ])('refuses %s with 400 validation_failed naming (body), and erases nothing', async (_name, type, body) => {
      const answer = await harness.http().delete('/v1/sessions/del-body').set('content-type', type).send(body).expect(400);
      expect(answer.body).toEqual({
        code: 'validation_failed',
        message: 'DELETE takes no body: the erasure has no options (it erases the whole session); send the request without a body',
        parameter: '(body)',
      });
      await harness.http().get('/v1/sessions/del-body').expect(200);
    });

    it('refuses a body declared over MAX_BODY_BYTES with the same 400 (not a 413 advising to split it), before reading it', async () => {
      const { text } = await exchange(
        [Buffer.from('DELETE /v1/sessions/del-body HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 900000000\r\n\r\n{}')],
        3_000,
      );
      expect(statusLines(text)).toEqual(['HTTP/1.1 400 Bad Request']);
      expect(bodies(text)[0]).toMatchObject({ code: 'validation_failed', parameter: '(body)' });
      await harness.http().get('/v1/sessions/del-body').expect(200);
    });

    it('answers the next request on the connection after refusing a body, and erases without one', async () => {
      const { text } = await exchange(
        [
          Buffer.concat([
            Buffer.from('DELETE /v1/sessions/del-body HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'),
            Buffer.from('DELETE /v1/sessions/del-body HTTP/1.1\r\nHost: localhost\r\n\r\n'),
          ]),
        ],
        3_000,
      );
      expect(statusLines(text)).toEqual(['HTTP/1.1 400 Bad Request', 'HTTP/1.1 200 OK']);
      expect(bodies(text)[1]).toMatchObject({ sessionId: 'del-body', erasedEvents: 1 });
    });

    // An empty body is no body (it was 400 for a chunked one, 415 for Content-Length: 0 with a type other than JSON).
    describe('with an empty body: erases, as without one', () => {
      const DELETE = 'DELETE /v1/sessions/del-empty HTTP/1.1\r\nHost: localhost\r\n';
      it.each([
        ['Content-Length: 0 and Content-Type: application/json', 'Content-Type: application/json\r\nContent-Length: 0\r\n\r\n'],
        ['Content-Length: 0 and Content-Type: text/plain', 'Content-Type: text/plain\r\nContent-Length: 0\r\n\r\n'],
        ['a chunked body of no byte, Content-Type: application/json', 'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
        ['a chunked body of no byte, no Content-Type', 'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
      ])('%s: 200, and the next request on the connection is answered', async (_name, rest) => {
        await appendOne('del-empty');
        const { text, closed } = await exchange([`${DELETE}${rest}`, 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n'], 1_500);
        expect(statusLines(text)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
        expect(bodies(text)[0]).toMatchObject({ sessionId: 'del-empty', erasedEvents: 1 });
        expect(closed).toBe(false);
        await harness.http().get('/v1/sessions/del-empty').expect(404);
      });

      it('a chunked body whose end comes later: 200 once it ends', async () => {
        await appendOne('del-empty');
        const { text } = await exchange([`${DELETE}Transfer-Encoding: chunked\r\n\r\n`, 300, '0\r\n\r\n'], 1_500);
        expect(statusLines(text)).toEqual(['HTTP/1.1 200 OK']);
        expect(bodies(text)[0]).toMatchObject({ sessionId: 'del-empty', erasedEvents: 1 });
      });
    });

    describe('with a chunked body', () => {
      beforeAll(async () => {
        await appendOne('del-chunked');
      });

      it.each([
        ['at once', ['2\r\n{}\r\n0\r\n\r\n']],
        ['its end later', ['2\r\n{}\r\n', 300, '0\r\n\r\n']],
      ])('refuses a chunked body of a byte or more (%s) with the same 400, closing the connection after it, and erases nothing', async (_name, rest) => {
        const head = 'DELETE /v1/sessions/del-chunked HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
        const { text, closed } = await exchange([head, ...(rest as Step[])], 1_500);
        expect(statusLines(text)).toEqual(['HTTP/1.1 400 Bad Request']);
        expect(bodies(text)[0]).toMatchObject({ code: 'validation_failed', parameter: '(body)' });
        expect(headOf(text, 0)).toContain('connection: close');
        expect(closed).toBe(true);
        await harness.http().get('/v1/sessions/del-chunked').expect(200);
      });

      it('answers a chunked body cut short by a half-close 400 request_aborted, and erases nothing', async () => {
        const head = 'DELETE /v1/sessions/del-chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n';
        const { text } = await exchange([head, 200, FIN], 1_500);
        expect(statusLines(text)).toEqual(['HTTP/1.1 400 Bad Request']);
        expect(bodies(text)[0]).toMatchObject({ code: 'request_aborted' });
        await harness.http().get('/v1/sessions/del-chunked').expect(200);
      });
    });
  });

  // The other routes without a request body: an empty body, declared JSON or not, is no body either.
  it.each([
    'GET /v1/sessions/get-empty',
    'GET /v1/sessions/get-empty/window',
    'GET /v1/recall?q=keep',
    'GET /health',
    'GET /metrics',
    'HEAD /v1/sessions/get-empty',
  ])('%s with an empty body (Content-Length: 0 or chunked, declared JSON): 200', async (request) => {
    await appendOne('get-empty');
    for (const rest of [
      'Content-Type: application/json\r\nContent-Length: 0\r\n\r\n',
      'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ]) {
      const { text } = await exchange([`${request} HTTP/1.1\r\nHost: localhost\r\n${rest}`], 700);
      expect([request, rest, statusLines(text)]).toEqual([request, rest, ['HTTP/1.1 200 OK']]);
    }
  });

  it('says Keep-Alive: timeout=72 on a persistent connection (README: pools must close idle connections sooner)', async () => {
    const { text } = await exchange([Buffer.from('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n')], 1_000);
    expect(headOf(text, 0)).toContain('keep-alive: timeout=72');
  });

  // Node answered both itself: a bare 400 / 417 with an empty body, no log line, not counted.
  describe('answers Node gave bare, now in our shape', () => {
    it('answers an HTTP/1.1 request without a Host header 400 malformed_request, logged and counted, and writes nothing', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const before = await counted('POST', '/v1/sessions/:sessionId/events', 400);
      const body = JSON.stringify({ events: [{ id: 'h1', type: 'user', text: 'hi' }] });
      const { text, closed } = await exchange([
        `POST /v1/sessions/no-host/events HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      ]);
      expect(statusLines(text)).toEqual(['HTTP/1.1 400 Bad Request']);
      expect(bodies(text)[0]).toEqual({
        code: 'malformed_request',
        message: 'an HTTP/1.1 request needs a Host header (e.g. Host: 127.0.0.1:3000); the request was not read',
      });
      expect(headOf(text, 0)).toContain('content-type: application/json');
      expect(headOf(text, 0)).toContain('connection: close');
      expect(closed).toBe(true);
      expect(await counted('POST', '/v1/sessions/:sessionId/events', 400)).toBe(before + 1);
      expect(warn.mock.calls.map((call) => String(call[0]))).toContain('refused POST /v1/sessions/no-host/events: 400 malformed_request (no Host header)');
      await harness.http().get('/v1/sessions/no-host').expect(404);
      // HTTP/1.0 needs no Host.
      const old = await exchange([Buffer.from('GET /health HTTP/1.0\r\n\r\n')]);
      expect(statusLines(old.text)).toEqual(['HTTP/1.1 200 OK']);
    });

    it('answers an Expect other than 100-continue 417 unsupported_expectation, logged and counted, and writes nothing', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const before = await counted('POST', 'unknown', 417);
      const { text, closed } = await exchange([
        post('/v1/sessions/expect-odd/events', '{"events":[{"id":"e1","type":"user","text":"hi"}]}', 'Expect: 200-ok\r\n'),
      ]);
      expect(statusLines(text)).toEqual(['HTTP/1.1 417 Expectation Failed']);
      expect(bodies(text)[0]).toEqual({
        code: 'unsupported_expectation',
        message: 'Expect: "200-ok" is not supported; the service meets only Expect: 100-continue (or send no Expect header)',
      });
      expect(headOf(text, 0)).toContain('connection: close');
      expect(closed).toBe(true);
      expect(await counted('POST', 'unknown', 417)).toBe(before + 1);
      expect(warn.mock.calls.map((call) => String(call[0]))).toContain('refused POST /v1/sessions/expect-odd/events: 417 unsupported_expectation');
      await harness.http().get('/v1/sessions/expect-odd').expect(404);
    });

    // Last of these: its nine refusals fill most of the 10 warn lines per 60 s the refusals share.
    it('answers a request with two Host header lines 400 malformed_request on every route, whichever comes first, and writes nothing', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const expected = {
        code: 'malformed_request',
        message: 'the request has 2 Host header lines; HTTP/1.1 allows exactly one (RFC 9112 section 3.2): send a single Host header; the request was not read',
      };
      const body = JSON.stringify({ events: [{ id: 'h1', type: 'user', text: 'hi' }] });
      for (const hosts of ['Host: localhost\r\nHost: evil.example', 'Host: evil.example\r\nHOST: localhost', 'host: localhost\r\nHost: localhost']) {
        const { text, closed } = await exchange([
          `POST /v1/sessions/two-hosts/events HTTP/1.1\r\n${hosts}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        ]);
        expect(statusLines(text)).toEqual(['HTTP/1.1 400 Bad Request']);
        expect(bodies(text)[0]).toEqual(expected);
        expect(headOf(text, 0)).toContain('connection: close');
        expect(closed).toBe(true);
      }
      for (const path of ['/v1/sessions/two-hosts', '/health', '/metrics', '/ui/', '/docs/openapi.json', '/nope']) {
        const { text } = await exchange([`GET ${path} HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n`]);
        expect([path, statusLines(text)]).toEqual([path, ['HTTP/1.1 400 Bad Request']]);
        expect(bodies(text)[0]).toEqual(expected);
      }
      expect(warn.mock.calls.map((call) => String(call[0]))).toContain('refused POST /v1/sessions/two-hosts/events: 400 malformed_request (2 Host headers)');
      await harness.http().get('/v1/sessions/two-hosts').expect(404);
    });
  });
});

describe('a DELETE carrying a body, with API_KEYS', () => {
  const harness = useService({ env: { API_KEYS: 'ops-key-51c8e0:default' } });
  const key = 'Bearer ops-key-51c8e0';

  it('is answered 401 without a known key (the key comes first, as for a query parameter), 400 with one', async () => {
    await harness
      .http()
      .post('/v1/sessions/keyed/events')
      .set('authorization', key)
      .send({ events: [{ id: 'k1', type: 'user', text: 'hi' }] })
      .expect(201);
    const without = await harness.http().delete('/v1/sessions/keyed').set('content-type', 'application/json').send('{"expectedRevision": "0"}');
    expect([without.status, without.body.code]).toEqual([401, 'unauthorized']);
    const withKey = await harness
      .http()
      .delete('/v1/sessions/keyed')
      .set('authorization', key)
      .set('content-type', 'application/json')
      .send('{"expectedRevision": "0"}');
    expect([withKey.status, withKey.body.code, withKey.body.parameter]).toEqual([400, 'validation_failed', '(body)']);
    await harness.http().get('/v1/sessions/keyed').set('authorization', key).expect(200);
  });
});
