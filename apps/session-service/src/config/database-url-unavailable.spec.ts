/**
 * The store's error when PostgreSQL cannot be reached or refuses the login names `DATABASE_URL`
 * (credentials masked) and what to fix, in the shape of configuration refusals (newcomer ncops:
 * `/health` and the warn line said only `PostgreSQL event store: password authentication failed
 * for user "postgres"`, a start with NATS ended with it). Driver errors as `pg` and Node give them.
 */
import { PostgresNoAnswerError } from '@lib/event-store';
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
