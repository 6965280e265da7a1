/**
 * A body declared over the limit is answered 413 before it is read, and the client reads that
 * answer: a client that sends its whole body before reading, a client with `Expect: 100-continue`
 * without being told to send its body first (undici's fetch and curl in
 * `test/reliability/body-over-limit.e2e-spec.ts`: clients in another process); the rest of the body is
 * read and discarded within the bounds, and the connection is closed when a bound is reached or
 * the server closes. A Fastify app with the service's body handling (`useJsonBodies`), on a real
 * socket.
 */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { toApiError } from './api-error.filter';
import { useJsonBodies } from './json-body';

const LIMIT = 64 * 1024;
const MiB = 1024 * 1024;

async function listeningApp(limits?: { maxBytes: number; maxMs: number }): Promise<{ app: FastifyInstance; port: number }> {
  const app = Fastify();
  useJsonBodies(app, LIMIT, limits);
  app.setErrorHandler((error, _request, reply) => {
    const { status, body } = toApiError(error);
    void reply.code(status).send(body);
  });
  app.post('/echo', async (request) => ({ body: request.body }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port };
}

/** A JSON body of about `bytes` bytes. */
const bodyOf = (bytes: number) => JSON.stringify({ text: 'x'.repeat(bytes) });

/**
 * Sends `head` then as much of a `declared`-byte body as the server takes, without stopping at its
 * answer (a half-open socket: its side stays open after the server's FIN until the body is sent). Resolves with the first
 * status line read, how the connection ended, when (ms after the head) and the bytes written.
 */
function sendWithoutStopping(port: number, head: string, declared: number): Promise<{ statusLine: string; ended: string; ms: number; written: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let text = '';
    let written = 0;
    let ended = 'open';
    let serverClosed = false;
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      socket.write(`${head}Content-Length: ${declared}\r\n\r\n`);
      const chunk = Buffer.alloc(256 * 1024, 'x');
      const pump = () => {
        while (!socket.destroyed && written < declared) {
          written += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
        // All sent: once the server closed its side, close this one too.
        if (serverClosed) socket.end();
      };
      pump();
    });
    socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
    socket.on('end', () => {
      ended = 'server closed its side';
      serverClosed = true;
      if (written >= declared) socket.end();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => (ended = error.code ?? 'error'));
    socket.on('close', () => resolve({ statusLine: text.split('\r\n')[0], ended, ms: Date.now() - started, written }));
  });
}

describe('a body declared over the limit', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => ({ app, port } = await listeningApp()));
  afterAll(() => app.close());

  it('is answered 413 at once, without 100 Continue, to a client that sent Expect: 100-continue (which then sends no body)', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () =>
        socket.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${20 * MiB}\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(answer).not.toContain('100 Continue');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'payload_too_large' });
  });

  it('a body within the limit sent with Expect: 100-continue gets 100 Continue, then its answer', async () => {
    const body = bodyOf(1000);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () =>
        socket.write(
          `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`,
        ),
      );
      let text = '';
      socket.on('data', (data: Buffer) => {
        if (text === '' && data.toString('latin1').startsWith('HTTP/1.1 100 Continue')) socket.write(body);
        text += data.toString('latin1');
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain(body);
  });

  it('a refusal before reading (415) is sent in place of 100 Continue too', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () =>
        socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\nContent-Length: 1000\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(answer).not.toContain('100 Continue');
  });

  it('a client that sends its whole body before reading reads the 413, and the server closes once the body is in', async () => {
    const sent = await sendWithoutStopping(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n', 6 * MiB);
    expect(sent).toMatchObject({ statusLine: 'HTTP/1.1 413 Payload Too Large', written: 6 * MiB });
    expect(sent.ended).not.toMatch(/EPIPE|ECONNRESET/);
  });
});

describe('the discarding after an early 413 is bounded', () => {
  it('reads and discards up to maxBytes under a client that does not stop, then closes the connection', async () => {
    const { app, port } = await listeningApp({ maxBytes: 24 * MiB, maxMs: 30_000 });
    try {
      const sent = await sendWithoutStopping(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n', 1024 * MiB);
      expect(sent.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
      // More than the bound went through (the socket buffers hold a few MiB more), far from the declared GiB.
      expect(sent.written).toBeGreaterThan(24 * MiB);
      expect(sent.written).toBeLessThan(64 * MiB);
      expect(sent.ended).toMatch(/EPIPE|ECONNRESET/);
    } finally {
      await app.close();
    }
  });

  it('closes the connection after maxMs when the body keeps coming slowly', async () => {
    const { app, port } = await listeningApp({ maxBytes: 64 * MiB, maxMs: 300 });
    try {
      const result = await new Promise<{ statusLine: string; ms: number }>((resolve) => {
        const started = Date.now();
        let text = '';
        const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
          socket.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${MiB}\r\n\r\n`);
          const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write('x')), 20);
        });
        socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ statusLine: text.split('\r\n')[0], ms: Date.now() - started }));
      });
      expect(result.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
      expect(result.ms).toBeGreaterThanOrEqual(250);
      expect(result.ms).toBeLessThan(3_000);
    } finally {
      await app.close();
    }
  });

  it("keeps the connection open while discarding within the bounds, and the server's close does not wait for it", async () => {
    const { app, port } = await listeningApp({ maxBytes: 64 * MiB, maxMs: 60_000 });
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const errors: string[] = [];
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? 'error'));
    let text = '';
    socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
    socket.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${MiB}\r\n\r\n{}`);
    while (!text.includes('\r\n\r\n')) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    // Still taking the body after the answer: a closed socket would answer these writes with a reset.
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.write('x'.repeat(1000));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(errors).toEqual([]);
    const started = Date.now();
    await app.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    socket.destroy();
  });
});
