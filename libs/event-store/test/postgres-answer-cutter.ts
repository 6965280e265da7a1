import * as net from 'node:net';

/** What the proxy does after it cut a connection: let new connections through, or refuse them (the server unreachable). */
export type AfterCut = 'pass' | 'refuse';

/** One connection through the proxy: the client's socket, the server's, and the server bytes not yet split into messages. */
interface Link {
  client: net.Socket;
  server: net.Socket;
  pending: Buffer;
  /** Set when the statement to cut went through this link: its answer is held back, and the link is cut at ReadyForQuery. */
  cutting: { after: AfterCut; done: () => void } | null;
  /** Set when the statement to hold went through this link: the server's answers are dropped, the sockets left open until the client closes its own. */
  holding: { after: AfterCut; done: () => void } | null;
}

/**
 * A TCP proxy in front of a PostgreSQL server, for tests, that loses the answer to one chosen
 * statement: the statement reaches the server, the server runs it to the end (its transaction
 * committed: PostgreSQL sends ReadyForQuery after the commit), and the proxy then destroys both
 * sockets instead of passing the answer on, so the client sees its connection end with no answer
 * (`Connection terminated unexpectedly`), as when the network fails right after a commit.
 *
 * Deterministic: {@link cutAnswerTo} arms one cut for the next client message whose bytes contain
 * a given text (e.g. `es_append_v2`, in the Parse message of the append's statement, or `COMMIT`);
 * every other byte is forwarded unchanged. The server's side is split into protocol messages (a
 * type byte and an int32 length) to find the ReadyForQuery (`Z`) that ends the statement's answer.
 */
export class AnswerCuttingProxy {
  private readonly links = new Set<Link>();
  private armed: { text: string; lose: 'answer' | 'request' | 'hold'; after: AfterCut; cut: () => void } | null = null;
  private refusing = false;
  /** Connections the proxy cut so far. */
  cuts = 0;

  private constructor(
    private readonly server: net.Server,
    private readonly target: { host: string; port: number },
  ) {}

  /** A proxy on a free port of 127.0.0.1 forwarding to the server of `databaseUrl` (`postgres://…`). */
  static async start(databaseUrl: string): Promise<AnswerCuttingProxy> {
    const url = new URL(databaseUrl);
    const target = { host: url.hostname, port: Number(url.port || 5432) };
    const server = net.createServer();
    const proxy = new AnswerCuttingProxy(server, target);
    server.on('connection', (socket) => proxy.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The proxy's port. */
  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /**
   * Arms one cut: the next client message containing `text` is forwarded, and the server's answer
   * to it is dropped and both sockets destroyed once the server said ReadyForQuery. Afterwards new
   * connections pass (`pass`) or are closed at once, before any byte reaches the server (`refuse`:
   * the server unreachable, until {@link acceptAgain}). Resolves when the cut happened.
   */
  cutAnswerTo(text: string, after: AfterCut = 'pass'): Promise<void> {
    return new Promise((resolve) => {
      this.armed = { text, lose: 'answer', after, cut: resolve };
    });
  }

  /**
   * Arms one cut of the other kind: the next client message containing `text` never reaches the
   * server (nothing of it runs), and both sockets are destroyed at once. `after` as for {@link cutAnswerTo}.
   */
  loseRequest(text: string, after: AfterCut = 'pass'): Promise<void> {
    return new Promise((resolve) => {
      this.armed = { text, lose: 'request', after, cut: resolve };
    });
  }

  /**
   * Arms one hold, a frozen server as its client sees it: the next client message containing `text`
   * is forwarded (the server runs it), and from then on nothing the server sends on that connection
   * reaches the client, while both sockets stay open (no reset, no end). Once the server ended the
   * statement's transaction (ReadyForQuery), new connections pass or are refused as `after` says.
   * Resolves when the client closed that connection itself.
   */
  holdAnswerTo(text: string, after: AfterCut = 'pass'): Promise<void> {
    return new Promise((resolve) => {
      this.armed = { text, lose: 'hold', after, cut: resolve };
    });
  }

  /** Lets new connections through again after a cut with `refuse`. */
  acceptAgain(): void {
    this.refusing = false;
  }

  /** Stops listening and destroys every connection. */
  async close(): Promise<void> {
    for (const link of this.links) this.destroy(link);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    if (this.refusing) {
      client.destroy();
      return;
    }
    const server = net.connect(this.target);
    const link: Link = { client, server, pending: Buffer.alloc(0), cutting: null, holding: null };
    this.links.add(link);
    client.on('error', () => this.destroy(link));
    server.on('error', () => this.destroy(link));
    client.on('close', () => this.destroy(link));
    server.on('close', () => this.destroy(link));
    client.on('data', (chunk: Buffer) => {
      const armed = this.armed;
      if (armed && chunk.includes(armed.text)) {
        this.armed = null;
        if (armed.lose === 'request') {
          this.cuts++;
          if (armed.after === 'refuse') this.refusing = true;
          this.destroy(link);
          armed.cut();
          return;
        }
        if (armed.lose === 'hold') link.holding = { after: armed.after, done: armed.cut };
        else link.cutting = { after: armed.after, done: armed.cut };
      }
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => this.fromServer(link, chunk));
  }

  /** Forwards the server's complete messages; on a cutting link, holds them back and cuts at ReadyForQuery. */
  private fromServer(link: Link, chunk: Buffer): void {
    link.pending = Buffer.concat([link.pending, chunk]);
    let offset = 0;
    while (link.pending.length - offset >= 5) {
      const length = link.pending.readInt32BE(offset + 1);
      if (link.pending.length - offset < 1 + length) break;
      const message = link.pending.subarray(offset, offset + 1 + length);
      offset += 1 + length;
      if (link.holding) {
        if (message[0] === 0x5a && link.holding.after === 'refuse') this.refusing = true;
        continue;
      }
      if (!link.cutting) {
        link.client.write(message);
        continue;
      }
      if (message[0] === 0x5a /* 'Z' ReadyForQuery: the statement's transaction has ended */) {
        this.cuts++;
        // refusing before the client can see its connection end
        if (link.cutting.after === 'refuse') this.refusing = true;
        this.destroy(link);
        link.cutting.done();
        return;
      }
    }
    link.pending = link.pending.subarray(offset);
  }

  private destroy(link: Link): void {
    if (!this.links.delete(link)) return;
    link.client.destroy();
    link.server.destroy();
    link.holding?.done();
  }
}
