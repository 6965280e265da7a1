/**
 * The service's life around its requests, over HTTP on loopback: one service per DATA_DIR (a
 * second one on a held directory is refused with a configuration error; separate directories
 * sharing SQLITE_EVENTS_FILE are fine), the answer to requests arriving during shutdown (503
 * `shutting_down` with Retry-After, our shape) and to a request whose body stalls (408
 * `request_timeout` after REQUEST_TIMEOUT_MS, connection closed).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionProjector } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';
import { ConfigurationError } from '../../apps/session-service/src/config/data-dir-lock';

const EVENT = { events: [{ id: 'u1', type: 'user', text: 'hi' }] };

/** Listens on a free loopback port (if not yet) and returns it. */
async function listen(harness: Harness): Promise<number> {
  const server = harness.service.app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** A raw loopback connection: write bytes, read everything until the server closes it. */
async function connect(port: number): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  socket.setEncoding('utf8').on('data', (d: string) => (text += d));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  return { socket, received: () => text, closed };
}

/** Resolves once `check()` holds (polled every 20 ms). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Parses the last HTTP answer in `text`: status, headers (lower-case names), JSON body. */
function lastAnswer(text: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const start = text.lastIndexOf('HTTP/1.1 ');
  const [head, body] = text.slice(start).split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as Record<string, unknown> };
}

describe('one service per DATA_DIR', () => {
  const dirs: string[] = [];
  const running: Harness[] = [];
  const tempDir = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'lifecycle-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const h of running) await h.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('refuses a second service on a held DATA_DIR with a configuration error naming DATA_DIR, the holder and what to do; starts once the first closed', async () => {
    const dir = tempDir();
    const first = await startService({ dataDir: dir });
    await first.http().post('/v1/sessions/s/events').send(EVENT).expect(201);
    const second = startService({ dataDir: dir });
    await expect(second).rejects.toBeInstanceOf(ConfigurationError);
    await expect(second).rejects.toThrow(new RegExp(`DATA_DIR=${dir}: in use by another service process \\(pid ${process.pid} on `));
    await expect(second).rejects.toThrow(/: give each replica its own DATA_DIR \(replicas may share SQLITE_EVENTS_FILE or DATABASE_URL\)/);
    // the first one still works
    await first.http().get('/v1/sessions/s/events').expect(200);
    await first.stop();
    const again = await startService({ dataDir: dir });
    running.push(again);
    const events = await again.http().get('/v1/sessions/s/events?minPosition=1').expect(200);
    expect(events.body.events).toHaveLength(1);
  });

  it('starts services with their own DATA_DIR sharing SQLITE_EVENTS_FILE', async () => {
    const shared = path.join(tempDir(), 'events.sqlite');
    const a = await startService({ dataDir: tempDir(), env: { SQLITE_EVENTS_FILE: shared } });
    running.push(a);
    const b = await startService({ dataDir: tempDir(), env: { SQLITE_EVENTS_FILE: shared } });
    running.push(b);
    await a.http().post('/v1/sessions/r/events').send(EVENT).expect(201);
    const seen = await b.http().get('/v1/sessions/r/events?minPosition=1').expect(200);
    expect(seen.body.events).toHaveLength(1);
  });
});

describe('requests during shutdown', () => {
  it('answers a request arriving once shutdown started 503 shutting_down with Retry-After, in our shape, and closes the connection', async () => {
    const harness = await startService();
    try {
      const port = await listen(harness);
      const conn = await connect(port);
      // one full request, then the head of the next one: the connection is busy, not idle, so the server keeps it while closing
      conn.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await until(() => /\r\n\r\n\{.*\}$/s.test(conn.received()));
      const before = conn.received().length;
      conn.socket.write('POST /v1/sessions/s/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const closing = harness.stop();
      const body = JSON.stringify(EVENT);
      conn.socket.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await conn.closed;
      await closing;
      const answer = lastAnswer(conn.received().slice(before));
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 503,
        body: { code: 'shutting_down', message: expect.stringMatching(/shutting down; retry the request \(it wrote nothing\)/) },
      });
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.headers.connection).toBe('close');
    } finally {
      await harness.stop();
      fs.rmSync(harness.dataDir, { recursive: true, force: true });
    }
  });
});

describe('draining on shutdown', () => {
  it('answers a request sent on an idle keep-alive connection during the drain 503 shutting_down (not a reset connection)', async () => {
    const harness = await startService();
    try {
      const port = await listen(harness);
      const conn = await connect(port);
      conn.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await until(() => /\r\n\r\n\{.*\}$/s.test(conn.received()));
      const before = conn.received().length;
      // The connection is idle now; the service starts closing with a drain, and the client sends its next request.
      const closing = harness.service.close({ drainMs: 400 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const body = JSON.stringify(EVENT);
      conn.socket.write(
        `POST /v1/sessions/s/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await conn.closed;
      // the count main.ts logs in its "shut down" line (each refused request's own line is at debug)
      expect(await closing).toEqual({ refusedWhileShuttingDown: 1, unfinished: [] });
      const answer = lastAnswer(conn.received().slice(before));
      expect({ status: answer.status, code: answer.body.code, connection: answer.headers.connection }).toEqual({
        status: 503,
        code: 'shutting_down',
        connection: 'close',
      });
    } finally {
      await harness.stop();
      fs.rmSync(harness.dataDir, { recursive: true, force: true });
    }
  });
  it('accepts the connections the kernel completed before the drain started (in the listen backlog, not yet accepted) and answers their requests, none reset', async () => {
    const harness = await startService();
    try {
      const port = await listen(harness);
      const sockets = Array.from({ length: 5 }, () => net.connect(port, '127.0.0.1'));
      const outcomes = sockets.map(
        (socket) =>
          new Promise<string>((resolve) => {
            let text = '';
            socket.setEncoding('utf8').on('data', (d: string) => (text += d));
            socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
            socket.on('close', () => resolve(text ? `${lastAnswer(text).status} ${String(lastAnswer(text).body.code)}` : 'closed without an answer'));
            socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
          }),
      );
      // net.connect issues its connect() on the next tick; on loopback the kernel completes the handshake then, and the
      // connection waits in the listen backlog until the event loop polls. The drain starts before it does.
      await new Promise((resolve) => process.nextTick(resolve));
      const closing = harness.service.close({ drainMs: 300 });
      // answered as usual while accepted (then closed as idle at the drain's end) or 503 once the drain started
      for (const outcome of await Promise.all(outcomes)) expect(['200 undefined', '503 shutting_down']).toContain(outcome);
      await closing;
    } finally {
      await harness.stop();
      fs.rmSync(harness.dataDir, { recursive: true, force: true });
    }
  });
});

describe('a request in flight when shutdown starts', () => {
  it('is answered with Connection: close, and the service closes right after it (not after the 72 s keep-alive timeout)', async () => {
    const harness = await startService({ env: { MAX_WAIT_MS: '600' } });
    try {
      const port = await listen(harness);
      await harness.service.app.get(SessionProjector).stop();
      const appended = await harness.http().post('/v1/sessions/s/events').send(EVENT).expect(201);
      const conn = await connect(port);
      // Waits MAX_WAIT_MS for a position the stopped projector never reaches: in flight while the service closes.
      conn.socket.write(`GET /v1/sessions/s/window?minPosition=${appended.body.position as string} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      const closing = harness.stop();
      const outcome = await Promise.race([closing.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still open after 10 s'), 10_000))]);
      expect(outcome).toBe('closed');
      expect(Date.now() - started).toBeLessThan(5_000);
      await conn.closed;
      const answer = lastAnswer(conn.received());
      expect({ status: answer.status, code: answer.body.code, connection: answer.headers.connection }).toEqual({
        status: 503,
        code: 'projection_behind',
        connection: 'close',
      });
    } finally {
      await harness.stop();
      fs.rmSync(harness.dataDir, { recursive: true, force: true });
    }
  }, 20_000);
});

describe('a request whose body stalls', () => {
  it('is answered 408 request_timeout after REQUEST_TIMEOUT_MS, in our shape, and its connection closed', async () => {
    const harness = await startService({ env: { REQUEST_TIMEOUT_MS: '500' } });
    try {
      const port = await listen(harness);
      const conn = await connect(port);
      conn.socket.write('POST /v1/sessions/s/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"events":');
      await conn.closed; // before the fix: never (the test times out)
      const answer = lastAnswer(conn.received());
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 408, code: 'request_timeout' });
      expect(answer.body.message).toMatch(/did not arrive within 500 ms \(REQUEST_TIMEOUT_MS\)/);
      expect(Object.keys(answer.body).sort()).toEqual(['code', 'message']);
      // nothing was written: the session does not exist
      await harness.http().get('/v1/sessions/s/events').expect(404);
    } finally {
      await harness.stop();
      fs.rmSync(harness.dataDir, { recursive: true, force: true });
    }
  }, 20_000);

  /** The count of 408 answers to appends with `tenant` in `/metrics`. */
  const timeouts = async (harness: Harness, tenant: string, key?: string): Promise<number> => {
    const request = harness.http().get('/metrics');
    const text = (await (key ? request.set('authorization', `Bearer ${key}`) : request)).text;
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`http_request_duration_seconds_count{method="POST",route="/v1/sessions/:sessionId/events",status="408",tenant="${tenant}"}`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };

  it('is counted under its key\'s tenant, checked before the body (newcomer ncops73 F5: tenant="none")', async () => {
    const harness = await startService({
      env: { REQUEST_TIMEOUT_MS: '500', API_KEYS: 'alice-key-2f9c:tenantA,bob-key-7d41:tenantB', RATE_LIMIT_PER_MINUTE: '100' },
    });
    try {
      const port = await listen(harness);
      const conn = await connect(port);
      conn.socket.write(
        'POST /v1/sessions/st/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer bob-key-7d41\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"events":',
      );
      await conn.closed;
      expect(lastAnswer(conn.received()).status).toBe(408);
      expect(await timeouts(harness, 'tenantB')).toBe(1);
      expect(await timeouts(harness, 'none')).toBe(0);
    } finally {
      await harness.stop();
      fs.rmSync(harness.dataDir, { recursive: true, force: true });
    }
  }, 20_000);

  it('is counted under tenant "default" in open development mode, also without a rate limit', async () => {
    const harness = await startService({ env: { REQUEST_TIMEOUT_MS: '500', RATE_LIMIT_PER_MINUTE: '0' } });
    try {
      const conn = await connect(await listen(harness));
      conn.socket.write('POST /v1/sessions/st/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"events":');
      await conn.closed;
      expect(lastAnswer(conn.received()).status).toBe(408);
      expect(await timeouts(harness, 'default')).toBe(1);
      expect(await timeouts(harness, 'none')).toBe(0);
    } finally {
      await harness.stop();
      fs.rmSync(harness.dataDir, { recursive: true, force: true });
    }
  }, 20_000);
});
