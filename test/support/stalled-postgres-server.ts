/**
 * A TCP server on 127.0.0.1 that takes a PostgreSQL client's connections and holds them without
 * ever answering a query: what a pool meets when its server (or the pooler in front of it) stalls.
 */
import { createServer, type Server, type Socket } from 'node:net';

/**
 * How far the server goes with each connection before it stops answering:
 * - `'silent'`: nowhere; the connection is accepted and never answered (a server that hangs: the
 *   client waits for the answer to its startup message);
 * - `'startup'`: it answers the startup message with AuthenticationOk and ReadyForQuery, then never
 *   answers a query (pgbouncer in session mode whose pool is full: the client waits for a server
 *   connection).
 */
export type StallPoint = 'silent' | 'startup';

/** What {@link useStalledPostgresServer} started: set once its `beforeAll` has run (read it inside tests). */
export interface StalledPostgresServer {
  /** The port it listens on at 127.0.0.1 (chosen by the system). */
  readonly port: number;
  /** The connections it has accepted so far, in order (held open until its `afterAll`). */
  readonly sockets: readonly Socket[];
}

/** AuthenticationOk ('R', length 8, code 0): the server asks for no password. */
const AUTHENTICATION_OK = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]);
/** ReadyForQuery ('Z', length 5, status 'I': idle, outside a transaction). */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

/**
 * Registers in the enclosing `describe`:
 * - a `beforeAll` that starts the server on 127.0.0.1, on a port the system chooses, stalling each
 *   connection at `stallAt` ({@link StallPoint});
 * - an `afterAll` that destroys every connection it accepted and closes it.
 * A test connects a store to `postgres://postgres@127.0.0.1:${server.port}/<any name>`; it needs
 * nothing else to stop the server. Returns the object the `beforeAll` fills in.
 */
export function useStalledPostgresServer(stallAt: StallPoint): StalledPostgresServer {
  const sockets: Socket[] = [];
  const held = { port: 0, sockets };
  let server: Server;
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.push(socket);
      if (stallAt === 'startup') socket.once('data', () => socket.write(Buffer.concat([AUTHENTICATION_OK, READY_FOR_QUERY])));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    held.port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return held;
}
