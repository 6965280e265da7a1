/**
 * One HTTP/1.1 connection over a bare TCP socket that reads the answers in order: for pipelined
 * requests and for request heads no HTTP client sends (a fragment in the target, CONNECT, an upgrade
 * offer), so that the bytes sent and read are exactly a test's.
 */
import * as net from 'node:net';

/** One HTTP/1.1 request's bytes (JSON body when given; `headers`: extra header lines, each ending with CRLF), keeping the connection open. */
export function requestBytes(method: string, path: string, body?: string, headers = ''): string {
  const head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}`;
  if (body === undefined) return `${head}\r\n`;
  return `${head}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** An answer read off a raw connection: its status, its headers (names lower-cased) and its JSON body (`{}` when empty). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: { code?: string; [key: string]: unknown };
}

/** A connection to 127.0.0.1:`port` that reads answers in order (Content-Length or chunked bodies). */
export class RawConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly waiting: { count: number; resolve: (answers: RawAnswer[]) => void }[] = [];
  private readonly answers: RawAnswer[] = [];
  private ended = false;
  readonly socket: net.Socket;
  /** Settles when the server ends the connection (its FIN, or a close). */
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => {
      const end = () => {
        this.ended = true;
        resolve();
      };
      this.socket.once('end', end);
      this.socket.once('close', end);
    });
  }

  send(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  /** Whether the server has ended the connection by now. */
  get isClosed(): boolean {
    return this.ended;
  }

  /**
   * The next `count` answers; rejects when they have not all arrived within `withinMs` (a bound for a
   * test that would otherwise wait for jest's timeout, not a timing assertion), naming how many did.
   */
  next(count: number, withinMs = 20_000): Promise<RawAnswer[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.answers.length} of ${count} answers arrived within ${withinMs} ms (connection ${this.ended ? 'closed' : 'open'})`)),
        withinMs,
      );
      this.waiting.push({
        count,
        resolve: (answers) => {
          clearTimeout(timer);
          resolve(answers);
        },
      });
      this.deliver();
    });
  }

  private parse(): void {
    for (;;) {
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = this.buffer.subarray(0, headEnd).toString('latin1');
      const status = Number(head.slice(9, 12));
      const headers: Record<string, string> = {};
      for (const line of head.split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body: Buffer;
      let rest: Buffer;
      if (headers['content-length'] !== undefined) {
        const end = headEnd + 4 + Number(headers['content-length']);
        if (this.buffer.length < end) return;
        body = this.buffer.subarray(headEnd + 4, end);
        rest = this.buffer.subarray(end);
      } else {
        // chunked
        const parts: Buffer[] = [];
        let at = headEnd + 4;
        for (;;) {
          const lineEnd = this.buffer.indexOf('\r\n', at);
          if (lineEnd < 0) return;
          const size = parseInt(this.buffer.subarray(at, lineEnd).toString('latin1'), 16);
          if (this.buffer.length < lineEnd + 2 + size + 2) return;
          parts.push(this.buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
          at = lineEnd + 2 + size + 2;
          if (size === 0) break;
        }
        body = Buffer.concat(parts);
        rest = this.buffer.subarray(at);
      }
      this.buffer = rest;
      this.answers.push({ status, headers, body: body.length ? JSON.parse(body.toString('utf8')) : {} });
      this.deliver();
    }
  }

  private deliver(): void {
    const first = this.waiting[0];
    if (first && this.answers.length >= first.count) {
      this.waiting.shift();
      first.resolve(this.answers.splice(0, first.count));
    }
  }
}

/** Raw connections a spec opens to the service at `port()`, all closed by `closeAll()` (in its `afterAll`). */
export function rawConnections(port: () => number): { connect: () => RawConnection; closeAll: () => void } {
  const open: RawConnection[] = [];
  return {
    connect: () => {
      const c = new RawConnection(port());
      open.push(c);
      return c;
    },
    closeAll: () => {
      for (const c of open.splice(0)) c.socket.destroy();
    },
  };
}
