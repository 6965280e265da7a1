/**
 * The store's error when PostgreSQL cannot be reached or refuses the login names `DATABASE_URL`
 * (credentials masked) and what to fix, in the shape of configuration refusals (newcomer ncops:
 * `/health` and the warn line said only `PostgreSQL event store: password authentication failed
 * for user "postgres"`, a start with NATS ended with it). Driver errors as `pg` and Node give them.
 */
import * as net from 'node:net';
import { EventStoreUnavailableError, PostgresNoAnswerError } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { mapPostgresError } from '../../../../libs/event-store/src/postgres/postgres-errors';
import { databaseUrlUnavailable } from './database-url-unavailable';

const URL = 'postgres://app:hunter2@db.internal:5432/events';
const SHOWN = 'PostgreSQL event store: DATABASE_URL=postgres://app:***@db.internal:5432/events';

/** A driver error: an Error with the given fields. */
const driverError = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);

describe('the store’s error when PostgreSQL at DATABASE_URL cannot be reached', () => {
  it.each([
    [
      'a connection refused',
      driverError('connect ECONNREFUSED 10.0.0.5:5432', { code: 'ECONNREFUSED', address: '10.0.0.5', port: 5432 }),
      `${SHOWN}: connection refused by 10.0.0.5:5432: start PostgreSQL (or fix DATABASE_URL); the service retries until it answers`,
    ],
    [
      'a connection refused on every address of a name (Node’s AggregateError, no message)',
      Object.assign(new AggregateError([driverError('connect ECONNREFUSED ::1:5432', { code: 'ECONNREFUSED', address: '::1', port: 5432 })], ''), {
        code: 'ECONNREFUSED',
      }),
      `${SHOWN}: connection refused by [::1]:5432: start PostgreSQL (or fix DATABASE_URL); the service retries until it answers`,
    ],
    [
      'a host that does not resolve',
      driverError('getaddrinfo ENOTFOUND db.internal', { code: 'ENOTFOUND', hostname: 'db.internal' }),
      `${SHOWN}: host db.internal not found (ENOTFOUND): use a host name that resolves; the service retries until it does (a name may not resolve during a failover)`,
    ],
    [
      'no answer',
      new Error('timeout exceeded when trying to connect'),
      `${SHOWN}: no answer (timeout exceeded when trying to connect): check that PostgreSQL is up and reachable at that host and port; the service retries until it answers`,
    ],
    [
      'no answer to a statement within the client-side bound (a frozen server)',
      new PostgresNoAnswerError(35_000, new Error('Query read timeout')),
      `${SHOWN}: no answer to a statement within 35000 ms (the service's bound on an answer: DATABASE_STATEMENT_TIMEOUT_MS + 5000 ms, 65000 ms when that is 0), the connection closed: the server is frozen, overloaded or cut off (a hung host, a network partition): check that PostgreSQL is up, answers and is reachable (raise DATABASE_STATEMENT_TIMEOUT_MS only when single statements are legitimately that slow); the service retries until it answers`,
    ],
    [
      'a wrong password',
      driverError('password authentication failed for user "app"', { code: '28P01' }),
      `${SHOWN}: password authentication failed for user "app": fix the user or password in DATABASE_URL (or the server's pg_hba.conf) and restart the service; it retries meanwhile`,
    ],
    [
      'a database that does not exist',
      driverError('database "events" does not exist', { code: '3D000' }),
      `${SHOWN}: database "events" does not exist: create the database (createdb) or fix its name in DATABASE_URL; the service retries until it exists`,
    ],
    [
      'SSL asked for (sslmode=require) of a server without it (pg’s own error, no code: checked against a server without SSL)',
      new Error('The server does not support SSL connections'),
      `${SHOWN}: the server does not support SSL connections, and DATABASE_URL asks for SSL (sslmode or ssl): enable SSL on the PostgreSQL server, or remove sslmode/ssl from DATABASE_URL (a server on a trusted network) and restart the service; it retries meanwhile`,
    ],
    [
      'a connection without SSL to a server whose pg_hba.conf wants it (hostssl)',
      driverError('no pg_hba.conf entry for host "10.0.0.7", user "app", database "events", no encryption', { code: '28000' }),
      `${SHOWN}: no pg_hba.conf entry for host "10.0.0.7", user "app", database "events", no encryption: the server accepts this connection only over SSL: add sslmode=verify-full to DATABASE_URL (or a host line to the server's pg_hba.conf) and restart the service; it retries meanwhile`,
    ],
  ])('%s: names DATABASE_URL, masked, and the fix', (_case, error, message) => {
    expect(databaseUrlUnavailable(error, URL)).toBe(message);
  });

  // Newcomer ncpg73 F2: the driver's raw "SASL: …" on /health, and writes 500 internal.
  it.each([
    ['the driver’s own SCRAM error (no SQLSTATE)', new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string')],
    ['PostgreSQL’s answer under cleartext password authentication', driverError('empty password returned by client', { code: '28P01' })],
  ])('no password in DATABASE_URL for a server that asks for one (%s): the refused login’s answer, saying the URL carries none', (_case, error) => {
    const url = 'postgres://app@db.internal:5432/events';
    expect(databaseUrlUnavailable(error, url)).toBe(
      // (a URL's lone user part is masked as a token would be)
      `PostgreSQL event store: DATABASE_URL=postgres://***@db.internal:5432/events: the server asks for a password and DATABASE_URL carries none, nor is PGPASSWORD set (${error.message}): put the user's password in DATABASE_URL (postgres://user:password@host:5432/database, percent-encoded; or fix the server's pg_hba.conf) and restart the service; it retries meanwhile`,
    );
    const mapped = mapPostgresError(error, (e) => databaseUrlUnavailable(e, url));
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
  });

  // Newcomer ncpg73 F1: a privilege the role lacks answered 500 internal; /health named neither the role nor the fix.
  it('a privilege denied (SQLSTATE 42501): names the role (never the password) and what to grant it', () => {
    const denied = driverError('permission denied for table es_schema', { code: '42501' });
    const message = databaseUrlUnavailable(denied, URL);
    expect(
      message.startsWith(
        `${SHOWN}: PostgreSQL denied the role app a privilege the service needs (permission denied for table es_schema, SQLSTATE 42501): grant it what it needs: `,
      ),
    ).toBe(true);
    expect(message).toContain('GRANT CREATE ON SCHEMA public TO app');
    expect(message).toContain('GRANT SELECT, INSERT, UPDATE, DELETE ON es_events, es_streams, es_head, es_schema TO app');
    expect(message.endsWith('; the service retries meanwhile')).toBe(true);
    expect(message).not.toContain('hunter2');
    // A role that is not a plain identifier is quoted as SQL wants it.
    expect(databaseUrlUnavailable(denied, 'postgres://App%2DUser:pw@db/events')).toContain('GRANT CREATE ON SCHEMA public TO "App-User"');
  });

  it('leaves the driver’s message as it is for what no setting fixes (a read-only server in a failover, a connection cut)', () => {
    expect(databaseUrlUnavailable(driverError('cannot execute INSERT in a read-only transaction', { code: '25006' }), URL)).toBe(
      'PostgreSQL event store: cannot execute INSERT in a read-only transaction',
    );
    expect(databaseUrlUnavailable(new Error('Connection terminated unexpectedly'), URL)).toBe('PostgreSQL event store: Connection terminated unexpectedly');
  });

  it('never shows the password, in the URL or as a parameter', () => {
    const refused = driverError('connect ECONNREFUSED 10.0.0.5:5432', { code: 'ECONNREFUSED', address: '10.0.0.5', port: 5432 });
    for (const url of ['postgres://app:hunter2@db:5432/events', 'postgres://db:5432/events?password=hunter2', 'postgres://hunter2@db/events'])
      expect(databaseUrlUnavailable(refused, url)).not.toContain('hunter2');
  });
});

/** A throwaway TCP server on an ephemeral port of 127.0.0.1 that is not PostgreSQL: `onConnection` handles each connection. */
async function notPostgres(onConnection: (socket: net.Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      sockets.forEach((s) => s.destroy());
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A server speaking PostgreSQL's protocol as far as SCRAM authentication: it asks for SCRAM-SHA-256 and answers the
 * client's first message with a server-first-message, where a client without a password fails (pg's own error).
 */
function scramAsking(socket: net.Socket): void {
  let messages = 0;
  const auth = (code: number, body: Buffer): Buffer => {
    const head = Buffer.alloc(9);
    head.write('R', 0);
    head.writeInt32BE(8 + body.length, 1);
    head.writeInt32BE(code, 5);
    return Buffer.concat([head, body]);
  };
  socket.on('data', () => {
    messages++;
    // AuthenticationSASL (10) after the start-up message; AuthenticationSASLContinue (11) after the SASLInitialResponse.
    if (messages === 1) socket.write(auth(10, Buffer.from('SCRAM-SHA-256\0\0')));
    else if (messages === 2) socket.write(auth(11, Buffer.from('r=clientnonceservernonce,s=c2FsdA==,i=4096')));
  });
}

describe('DATABASE_URL without a password for a server asking for one (newcomer ncpg73 F2)', () => {
  it('the store’s error is the refused login’s, naming DATABASE_URL and saying it carries no password', async () => {
    const server = await notPostgres(scramAsking);
    const url = `postgres://app@127.0.0.1:${server.port}/events`;
    const saved = process.env.PGPASSWORD;
    delete process.env.PGPASSWORD;
    const store = PostgresEventStore.connect(url, { describeUnavailable: (error) => databaseUrlUnavailable(error, url), connectionTimeoutMs: 5000 });
    try {
      const read = await store.headPosition().catch((e: unknown) => e);
      expect(read).toBeInstanceOf(EventStoreUnavailableError);
      expect((read as Error).message).toBe(
        `PostgreSQL event store: DATABASE_URL=postgres://***@127.0.0.1:${server.port}/events: the server asks for a password and DATABASE_URL carries none, nor is PGPASSWORD set (SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string): put the user's password in DATABASE_URL (postgres://user:password@host:5432/database, percent-encoded; or fix the server's pg_hba.conf) and restart the service; it retries meanwhile`,
      );
    } finally {
      if (saved !== undefined) process.env.PGPASSWORD = saved;
      await store.close();
      await server.close();
    }
  });
});

describe('DATABASE_URL naming a server that is not PostgreSQL (newcomer ncoperator F2: only "Connection terminated unexpectedly")', () => {
  it.each<[string, (socket: net.Socket) => void, string]>([
    ['accepts and closes each connection (a proxy without a backend)', (socket) => socket.end(), 'Connection terminated unexpectedly'],
    [
      'answers garbage and closes (an HTTP server)',
      (socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')),
      'Connection terminated unexpectedly',
    ],
    ['resets the connection', (socket) => socket.once('data', () => socket.resetAndDestroy()), 'read ECONNRESET'],
  ])('a server that %s: the store’s error names DATABASE_URL, masked, the server and the fix', async (_case, onConnection, driverMessage) => {
    const server = await notPostgres(onConnection);
    const url = `postgres://app:hunter2@127.0.0.1:${server.port}/events`;
    const store = PostgresEventStore.connect(url, { describeUnavailable: (error) => databaseUrlUnavailable(error, url), connectionTimeoutMs: 5000 });
    try {
      const expected = `PostgreSQL event store: DATABASE_URL=postgres://app:***@127.0.0.1:${server.port}/events: the server at 127.0.0.1:${server.port} closed the connection before answering as PostgreSQL (${driverMessage}): check that DATABASE_URL names a PostgreSQL server (and its port), not another service or a proxy or load balancer without a PostgreSQL behind it; the service retries until it answers`;
      const read = await store.headPosition().catch((e: unknown) => e);
      expect(read).toBeInstanceOf(EventStoreUnavailableError);
      expect((read as Error).message).toBe(expected);
      // The compaction claims' own connection says the same.
      const claim = await store.tryClaim('session-1').catch((e: unknown) => e);
      expect(claim).toBeInstanceOf(EventStoreUnavailableError);
      expect((claim as Error).message).toBe(expected);
    } finally {
      await store.close();
      await server.close();
    }
  });

  it('a server that answers garbage to the SSL request of a DATABASE_URL asking for SSL: the same (it was a raw error)', async () => {
    const server = await notPostgres((socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')));
    const url = `postgres://app:hunter2@127.0.0.1:${server.port}/events?sslmode=require`;
    const store = PostgresEventStore.connect(url, { describeUnavailable: (error) => databaseUrlUnavailable(error, url), connectionTimeoutMs: 5000 });
    try {
      const read = await store.headPosition().catch((e: unknown) => e);
      expect(read).toBeInstanceOf(EventStoreUnavailableError);
      expect((read as Error).message).toContain(
        `: the server at 127.0.0.1:${server.port} closed the connection before answering as PostgreSQL (There was an error establishing an SSL connection): check that DATABASE_URL names a PostgreSQL server`,
      );
      expect((read as Error).message).not.toContain('hunter2');
    } finally {
      await store.close();
      await server.close();
    }
  });

  it('names the server the driver connects to: a host parameter over the URL’s host', async () => {
    const server = await notPostgres((socket) => socket.end());
    try {
      const url = `postgres://app:pw@localhost:${server.port}/events?host=127.0.0.1`;
      const store = PostgresEventStore.connect(url, { describeUnavailable: (error) => databaseUrlUnavailable(error, url), connectionTimeoutMs: 5000 });
      const read = await store.headPosition().catch((e: unknown) => e);
      await store.close();
      expect((read as Error).message).toContain(`: the server at 127.0.0.1:${server.port} closed the connection before answering as PostgreSQL`);
    } finally {
      await server.close();
    }
  });

  it('leaves a connection cut after it was opened (by PostgreSQL, mid-session) to the driver’s message', () => {
    expect(databaseUrlUnavailable(new Error('Connection terminated unexpectedly'), 'postgres://app:pw@db/events')).toBe(
      'PostgreSQL event store: Connection terminated unexpectedly',
    );
  });
});
