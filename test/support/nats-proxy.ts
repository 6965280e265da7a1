/**
 * A TCP proxy between NATS clients and a NATS server, for fault tests that need what a throwaway
 * server cannot do: hold a client's frames from one on (its `UNSUB` of a pull request has not
 * reached the server, which meanwhile sends it a command: a command on the wire when the client
 * ends the pull), and drop one message a client publishes (a pull request the server never gets: no
 * reconnect, no 409), or every one on a subject until a given frame passes (a consumer that
 * delivers nothing until it is deleted). It reads the client's protocol frames (`PUB`/`HPUB` with their payloads,
 * every other verb one line); the server's bytes go through unparsed, in order.
 */
import * as net from 'node:net';

/** A frame a client sent through the proxy: its verb (`PUB`, `HPUB`, `SUB`, `UNSUB`, `PING`, …) and, for a publish, its subject. */
export interface ClientFrame {
  verb: string;
  subject: string | null;
  /** False when the proxy dropped it. */
  forwarded: boolean;
}

/** See the module doc; {@link startNatsProxy}. */
export interface NatsProxy {
  /** `nats://127.0.0.1:<port>` of the proxy. */
  readonly url: string;
  /** Every client frame so far, in order. */
  readonly frames: readonly ClientFrame[];
  /** Holds the first client frame matching `match` and every client frame after it (the server gets none of them) until {@link release}. */
  holdFrom(match: (frame: ClientFrame) => boolean): void;
  /** Sends the held client frames to the server, in order, then forwards again. */
  release(): void;
  /** Drops the next publish (`PUB`/`HPUB`) whose subject starts with `subjectPrefix`; resolves once one was dropped. */
  dropNext(subjectPrefix: string): Promise<void>;
  /**
   * Drops every publish whose subject starts with `subjectPrefix` until a client frame matches
   * `until` (that frame, and every one after it, is forwarded); resolves with how many it dropped once one matched.
   */
  dropUntil(subjectPrefix: string, until: (frame: ClientFrame) => boolean): Promise<number>;
  /** Resolves once a client frame after this call matches `match`. */
  next(match: (frame: ClientFrame) => boolean): Promise<ClientFrame>;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
}

/** Splits complete frames off the front of `buffer`; returns them and what is left (a frame not yet whole). */
function splitFrames(buffer: Buffer): { frames: Array<{ bytes: Buffer; verb: string; subject: string | null }>; rest: Buffer } {
  const frames: Array<{ bytes: Buffer; verb: string; subject: string | null }> = [];
  let at = 0;
  for (;;) {
    const eol = buffer.indexOf('\r\n', at);
    if (eol < 0) break;
    const line = buffer.subarray(at, eol).toString('latin1');
    const args = line.trim().split(/\s+/);
    const verb = args[0].toUpperCase();
    let end = eol + 2;
    if (verb === 'PUB' || verb === 'HPUB') {
      end += Number(args[args.length - 1]) + 2;
      if (end > buffer.length) break;
    }
    frames.push({ bytes: buffer.subarray(at, end), verb, subject: verb === 'PUB' || verb === 'HPUB' ? args[1] : null });
    at = end;
  }
  return { frames, rest: buffer.subarray(at) };
}

/** Starts a proxy on a free loopback port forwarding to `target` (`nats://host:port`). */
export async function startNatsProxy(target: string): Promise<NatsProxy> {
  const { hostname, port } = new URL(target);
  const frames: ClientFrame[] = [];
  const sockets = new Set<net.Socket>();
  const upstreams: net.Socket[] = [];
  const held: Array<{ upstream: net.Socket; bytes: Buffer }> = [];
  let holdFrom: ((frame: ClientFrame) => boolean) | null = null;
  let holding = false;
  const drops: Array<{ prefix: string; done: () => void }> = [];
  const blocks: Array<{ prefix: string; until: (frame: ClientFrame) => boolean; dropped: number; done: (dropped: number) => void }> = [];
  const waiters: Array<{ match: (frame: ClientFrame) => boolean; done: (frame: ClientFrame) => void }> = [];

  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port) || 4222, hostname);
    sockets.add(client).add(upstream);
    upstreams.push(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      const { frames: whole, rest } = splitFrames(Buffer.concat([pending, chunk]));
      pending = Buffer.from(rest);
      for (const f of whole) {
        for (const b of blocks.slice()) {
          if (b.until({ verb: f.verb, subject: f.subject, forwarded: true })) {
            blocks.splice(blocks.indexOf(b), 1);
            b.done(b.dropped);
          }
        }
        const block = f.subject === null ? undefined : blocks.find((b) => f.subject!.startsWith(b.prefix));
        const drop = f.subject === null || block ? -1 : drops.findIndex((d) => f.subject!.startsWith(d.prefix));
        const frame: ClientFrame = { verb: f.verb, subject: f.subject, forwarded: drop < 0 && !block };
        frames.push(frame);
        if (!holding && holdFrom?.(frame)) holding = true;
        if (block) block.dropped++;
        else if (drop >= 0) drops.splice(drop, 1)[0].done();
        else if (holding) held.push({ upstream, bytes: Buffer.from(f.bytes) });
        else upstream.write(f.bytes);
        for (const w of waiters.splice(0)) {
          if (w.match(frame)) w.done(frame);
          else waiters.push(w);
        }
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `nats://127.0.0.1:${address.port}`,
    frames,
    holdFrom(match) {
      holdFrom = match;
    },
    release() {
      holdFrom = null;
      holding = false;
      for (const { upstream, bytes } of held.splice(0)) if (!upstream.destroyed) upstream.write(bytes);
    },
    dropNext(prefix) {
      return new Promise((resolve) => drops.push({ prefix, done: resolve }));
    },
    dropUntil(prefix, until) {
      return new Promise((resolve) => blocks.push({ prefix, until, dropped: 0, done: resolve }));
    },
    next(match) {
      return new Promise((resolve) => waiters.push({ match, done: resolve }));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
