/**
 * Requests pipelined on one connection are processed one at a time, in order (ncverify42 F2): a
 * GET sent right behind a DELETE (before its answer) answered the erased session's content after
 * the DELETE's 200, and a GET behind an append answered 404, as Node hands each request to the
 * service as soon as its head arrives. A request waiting behind one whose client went away is not
 * processed. Raw sockets, so that the requests are really sent together.
 */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ControlledSummarizer, useService } from '../support/service-harness';

/** The status codes of the answers in `text` (latin1), in order. */
function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

/** The JSON bodies of the answers in `text` (each answer's body is one JSON object here), in order. */
function bodies(text: string): Array<Record<string, unknown>> {
  return text
    .split(/HTTP\/1\.1 \d{3}/)
    .slice(1)
    .map((answer) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>);
}

/** An HTTP/1.1 request head (and JSON `body`), Host localhost; `last` asks the service to close the connection after its answer. */
function request(method: string, path: string, body?: unknown, last = false): string {
  const bytes = body === undefined ? '' : JSON.stringify(body);
  const type = body === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(bytes)}\r\n`;
  return `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${type}${last ? 'Connection: close\r\n' : ''}\r\n${bytes}`;
}

describe('pipelined requests on one connection', () => {
  const summarizer = new ControlledSummarizer();
  const harness = useService({ summarizer });
  let port: number;

  beforeAll(async () => {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  /** Sends `requests` in one write on a new connection; resolves with what came back once the service closed it. */
  function pipeline(...requests: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(requests.join(''), 'utf8'));
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
  }

  const append = (sessionId: string, id: string, text: string) =>
    harness
      .http()
      .post(`/v1/sessions/${sessionId}/events`)
      .send({ events: [{ id, type: 'user', text }] })
      .expect(201);

  it.each([1, 2, 3])('a GET window behind a DELETE reads the session erased (try %i)', async (attempt) => {
    const session = `pipe-erase-${attempt}`;
    await append(session, 'e1', 'secret text');
    const text = await pipeline(request('DELETE', `/v1/sessions/${session}`), request('GET', `/v1/sessions/${session}/window`, undefined, true));
    expect(statuses(text)).toEqual([200, 404]);
    expect(bodies(text)[1]).toMatchObject({ code: 'session_not_found' });
    expect(text).not.toContain('secret text');
  });

  it.each([1, 2, 3])('a GET window behind an append reads the appended event (try %i)', async (attempt) => {
    const session = `pipe-append-${attempt}`;
    const text = await pipeline(
      request('POST', `/v1/sessions/${session}/events`, { events: [{ id: 'a1', type: 'user', text: 'first words' }] }),
      request('GET', `/v1/sessions/${session}/window`, undefined, true),
    );
    expect(statuses(text)).toEqual([201, 200]);
    expect((bodies(text)[1].events as Array<{ id: string }>).map((e) => e.id)).toEqual(['a1']);
  });

  it('processes a request behind a slow one only once that one is answered', async () => {
    await append('pipe-slow', 's1', 'one');
    await append('pipe-slow', 's2', 'two');
    await append('pipe-slow-other', 'o1', 'kept until its turn');
    const held = summarizer.hold();
    const exchange = pipeline(
      request('POST', '/v1/sessions/pipe-slow/compactions', { strategy: { type: 'recursive-summarization', maxEventsToKeep: 1, overlapSize: 0 } }),
      request('DELETE', '/v1/sessions/pipe-slow-other', undefined, true),
    );
    await held;
    // The compaction waits on the summarizer: the DELETE behind it has not run.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await harness.http().get('/v1/sessions/pipe-slow-other/window').expect(200);
    summarizer.release();
    expect(statuses(await exchange)).toEqual([200, 200]);
    await harness.http().get('/v1/sessions/pipe-slow-other/window').expect(404);
  });

  it('drops the requests waiting behind one whose client went away, and answers the next connection', async () => {
    await append('pipe-gone', 'g1', 'one');
    await append('pipe-gone', 'g2', 'two');
    await append('pipe-gone-other', 'o1', 'not erased');
    const held = summarizer.hold();
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      request('POST', '/v1/sessions/pipe-gone/compactions', { strategy: { type: 'recursive-summarization', maxEventsToKeep: 1, overlapSize: 0 } }) +
        request('DELETE', '/v1/sessions/pipe-gone-other') +
        request('GET', '/v1/sessions/pipe-gone-other/window'),
    );
    await held;
    // A reset (RST), the connection lost: a FIN alone is a half-close, whose requests are all processed and answered (half-close.ts).
    socket.resetAndDestroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    summarizer.release();
    // The compaction ahead still finishes; the DELETE behind it, which nothing could answer, never ran.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const window = await harness.http().get('/v1/sessions/pipe-gone-other/window').expect(200);
    expect((window.body as { events: Array<{ id: string }> }).events.map((e) => e.id)).toEqual(['o1']);
    // Nothing is left stuck: a new connection, and pipelined requests on it, are answered.
    const text = await pipeline(request('GET', '/health'), request('GET', '/v1/sessions/pipe-gone-other/window', undefined, true));
    expect(statuses(text)).toEqual([200, 200]);
  });
});

describe('a large-bodied request pipelined behind one slower than REQUEST_TIMEOUT_MS', () => {
  const summarizer = new ControlledSummarizer();
  const harness = useService({ summarizer, env: { REQUEST_TIMEOUT_MS: '500' } });
  let port: number;

  beforeAll(async () => {
    const server = harness.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  /** Opens a connection, writes `bytes`, and resolves with it and what it receives (`text()`) and a promise of its close. */
  async function connection(bytes: string): Promise<{ socket: net.Socket; text: () => string; closed: Promise<void> }> {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(bytes, 'utf8');
    return { socket, text: () => text, closed };
  }

  const compaction = (session: string) =>
    request('POST', `/v1/sessions/${session}/compactions`, { strategy: { type: 'recursive-summarization', maxEventsToKeep: 1, overlapSize: 0 } });

  async function twoEvents(session: string): Promise<void> {
    for (const id of ['e1', 'e2'])
      await harness
        .http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: [{ id, type: 'user', text: id }] })
        .expect(201);
  }

  it('counts its timeout from when it is processed: both are answered once the slow one is', async () => {
    await twoEvents('pipe-late');
    const held = summarizer.hold();
    // 20,000 characters in two writes: Node reads no more of the body of a request not yet processed once 16 KiB wait unread.
    const large = request('POST', '/v1/sessions/pipe-late-big/events', { events: [{ id: 'big', type: 'user', text: 'x'.repeat(20_000) }] }, true);
    const conn = await connection(compaction('pipe-late') + large.slice(0, -2_000));
    await new Promise((resolve) => setTimeout(resolve, 100));
    conn.socket.write(large.slice(-2_000));
    await held;
    // Held well past REQUEST_TIMEOUT_MS (Node checks every quarter of it).
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(conn.text()).toBe(''); // before the fix: 408 request_timeout, the connection closed
    summarizer.release();
    await conn.closed;
    expect(statuses(conn.text())).toEqual([200, 201]);
  }, 20_000);

  it('counts a 408 of a body that stalled under its method and route (newcomer ncops67 F6: method and route "unknown")', async () => {
    const head = 'POST /v1/sessions/stall-metric/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n';
    const count = async () => {
      const text = (await harness.http().get('/metrics')).text;
      const line = text
        .split('\n')
        .find((l) => /^http_request_duration_seconds_count\{method="POST",route="\/v1\/sessions\/:sessionId\/events",status="408"/.test(l));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const before = await count();
    const conn = await connection(head + '{"events":[');
    await conn.closed;
    expect(statuses(conn.text())).toEqual([408]);
    expect(await count()).toBe(before + 1);
  }, 20_000);

  it('still answers 408 request_timeout when its body stalls after it is processed', async () => {
    await twoEvents('pipe-stall');
    const held = summarizer.hold();
    const head = 'POST /v1/sessions/pipe-stall-big/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000\r\n\r\n';
    const conn = await connection(compaction('pipe-stall') + head + '{"events":[{"id":"s","type":"user","text":"' + 'y'.repeat(18_000));
    await new Promise((resolve) => setTimeout(resolve, 100));
    conn.socket.write('y'.repeat(2_000)); // and no more
    await held;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(conn.text()).toBe('');
    const released = Date.now();
    summarizer.release();
    await conn.closed;
    const waited = Date.now() - released;
    expect(statuses(conn.text())).toEqual([200, 408]);
    expect(bodies(conn.text())[1]).toMatchObject({ code: 'request_timeout' });
    expect(waited).toBeGreaterThanOrEqual(450);
    await harness.http().get('/v1/sessions/pipe-stall-big/window').expect(404);
  }, 20_000);
});
