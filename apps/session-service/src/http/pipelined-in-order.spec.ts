/**
 * The bodies of requests held behind a pipelined request are read while they wait, within the
 * connection's budget, so the heads behind them arrive (Node emits `request`) at once; past the
 * budget a held body is left to Node's 16 KiB buffer, as before, and the heads behind it arrive when
 * its turn comes. A Fastify app with only the hold (`processPipelinedInOrder`), on a real socket.
 */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { processPipelinedInOrder } from './pipelined-in-order';

const KB = 1000;

/** A Fastify app whose `POST /slow` waits for the next `release()`; `arrived` lists the paths whose heads Node parsed, in order. */
async function appWithSlowRoute(heldBodyBytes: number): Promise<{ app: FastifyInstance; port: number; arrived: string[]; release: () => void }> {
  const app = Fastify({ bodyLimit: 1024 * KB });
  processPipelinedInOrder(app, { heldBodyBytes });
  const arrived: string[] = [];
  app.server.on('request', (req: { url?: string }) => arrived.push(req.url ?? ''));
  const waiting: (() => void)[] = [];
  app.post('/slow', async () => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return { slow: true };
  });
  app.post('/body', async (request) => ({ length: (request.body as { text: string }).text.length }));
  app.get('/probe', async () => ({ probe: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port, arrived, release: () => waiting.splice(0).forEach((resolve) => resolve()) };
}

const post = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const textOf = (bytes: number) => JSON.stringify({ text: 'x'.repeat(bytes) });

/** Resolves once `socket` has received `count` status lines. */
function answers(socket: net.Socket, count: number): Promise<string[]> {
  let received = '';
  return new Promise((resolve) => {
    const onData = (chunk: Buffer): void => {
      received += chunk.toString('latin1');
      const lines = received.match(/HTTP\/1\.1 \d{3}/g) ?? [];
      if (lines.length >= count) {
        socket.off('data', onData);
        resolve(lines);
      }
    };
    socket.on('data', onData);
  });
}

/** Waits until `done()` or `ms` passed; true when `done()`. */
async function within(ms: number, done: () => boolean): Promise<boolean> {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  return done();
}

describe('processPipelinedInOrder: held bodies are read while they wait, within a budget per connection', () => {
  const apps: FastifyInstance[] = [];
  const sockets: net.Socket[] = [];
  const releases: (() => void)[] = [];
  afterEach(async () => {
    for (const release of releases.splice(0)) release();
    for (const s of sockets.splice(0)) s.destroy();
    for (const a of apps.splice(0)) await a.close();
  });

  const start = async (heldBodyBytes: number) => {
    const started = await appWithSlowRoute(heldBodyBytes);
    apps.push(started.app);
    releases.push(started.release);
    const socket = net.connect(started.port, '127.0.0.1');
    sockets.push(socket);
    return { ...started, socket };
  };

  // (Node parses the rest of each 64 KiB read of the socket before it stops: the body held past the budget is 150 kB.)
  it('reads the head behind held 60 kB and 150 kB bodies at once when the budget holds both', async () => {
    const { socket, arrived, release } = await start(250 * KB);
    const answered = answers(socket, 4);
    socket.write(post('/slow', '{}') + post('/body', textOf(60 * KB)) + post('/body', textOf(150 * KB)) + 'GET /probe HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await within(2_000, () => arrived.includes('/probe'))).toBe(true);
    release();
    expect(await answered).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
  });

  it('leaves a held body past what is left of the budget to Node, so the head behind it arrives only when its turn comes; the budget is given back', async () => {
    const { socket, arrived, release } = await start(200 * KB);
    const bytes = post('/slow', '{}') + post('/body', textOf(60 * KB)) + post('/body', textOf(150 * KB)) + 'GET /probe HTTP/1.1\r\nHost: x\r\n\r\n';
    const answered = answers(socket, 4);
    socket.write(bytes);
    expect(await within(1_000, () => arrived.filter((p) => p === '/body').length === 2)).toBe(true);
    expect(await within(500, () => arrived.includes('/probe'))).toBe(false);
    release();
    expect(await answered).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    // Every grant was given back when its request was let through: a held 150 kB body fits now.
    arrived.length = 0;
    const again = answers(socket, 3);
    socket.write(post('/slow', '{}') + post('/body', textOf(150 * KB)) + 'GET /probe HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await within(2_000, () => arrived.includes('/probe'))).toBe(true);
    release();
    expect(await again).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
  });
});
