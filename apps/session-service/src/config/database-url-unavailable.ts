/**
 * What the service says when PostgreSQL cannot be reached or refuses the connection: the message
 * of the store's `EventStoreUnavailableError` (shown by `/health` `store.error`, the projector's
 * and the decisions feed's warn lines), naming `DATABASE_URL` in the one shape of configuration
 * refusals, its credentials masked, with what to fix. Never fatal: a store that does not answer at
 * start is waited for (docs/configuration.md), so each text says that the service retries.
 */
import {
  isClosedBeforePostgresAnswer,
  isPostgresPasswordMissing,
  isPostgresPermissionDenied,
  PostgresNoAnswerError,
  postgresUnavailableMessage,
} from '@lib/event-store';
import { configurationRefusalMessage } from '@lib/session';
import { privilegeProblem } from './database-privilege-refusal';

/** The parts of a driver error read here: a socket error (`code`, `address`, `port`, `hostname`; `errors` when Node tried several addresses) or a server error (`code`: SQLSTATE). */
interface DriverError {
  code?: unknown;
  message?: unknown;
  address?: unknown;
  port?: number | string;
  hostname?: unknown;
  errors?: unknown;
}

/** `address:port` of a socket error (the first attempt's when Node tried several addresses), or null. */
function addressOf(error: DriverError): string | null {
  const first = Array.isArray(error.errors) ? (error.errors[0] as DriverError | undefined) : undefined;
  const { address, port } = typeof error.address === 'string' ? error : (first ?? {});
  if (typeof address !== 'string') return null;
  return port === undefined ? address : `${address.includes(':') ? `[${address}]` : address}:${String(port)}`;
}

/**
 * The server `databaseUrl` names, as `host:port` (the port 5432 when the URL gives none; an IPv6
 * host bracketed; a `host` parameter, which the driver takes over the URL's host, first), without
 * credentials; null when the URL cannot be read.
 */
function serverOf(databaseUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return null;
  }
  const host = url.searchParams.get('host') || decodeURIComponent(url.hostname);
  if (!host) return null;
  const port = url.searchParams.get('port') || url.port || '5432';
  return host.startsWith('/') ? `${host} (socket)` : `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** The problem and the fix for a driver error, or null when it is not about reaching or logging in (then the default message stands). */
function problemOf(error: DriverError, databaseUrl: string): { problem: string; fix: string } | null {
  // Closed (or reset) while being opened, before any answer of PostgreSQL's: another service's port, a proxy without a backend.
  if (isClosedBeforePostgresAnswer(error)) {
    const server = serverOf(databaseUrl);
    return {
      problem: `the server${server ? ` at ${server}` : ''} closed the connection before answering as PostgreSQL (${typeof error.message === 'string' && error.message ? error.message : String(error.code)})`,
      fix: 'check that DATABASE_URL names a PostgreSQL server (and its port), not another service or a proxy or load balancer without a PostgreSQL behind it; the service retries until it answers',
    };
  }
  if (error instanceof PostgresNoAnswerError)
    return {
      problem: `no answer to a statement within ${error.withinMs} ms (the service's bound on an answer: DATABASE_STATEMENT_TIMEOUT_MS + 5000 ms, 65000 ms when that is 0), the connection closed: the server is frozen, overloaded or cut off (a hung host, a network partition)`,
      fix: 'check that PostgreSQL is up, answers and is reachable (raise DATABASE_STATEMENT_TIMEOUT_MS only when single statements are legitimately that slow); the service retries until it answers',
    };
  const code = typeof error.code === 'string' ? error.code : '';
  const message = typeof error.message === 'string' ? error.message : '';
  if (code === 'ECONNREFUSED') {
    const address = addressOf(error);
    return {
      problem: `connection refused${address ? ` by ${address}` : ''}`,
      fix: 'start PostgreSQL (or fix DATABASE_URL); the service retries until it answers',
    };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    const host = typeof error.hostname === 'string' ? error.hostname : (/(?:ENOTFOUND|EAI_AGAIN) (\S+)/.exec(message)?.[1] ?? '?');
    return {
      problem: `host ${host} not found (${code})`,
      fix: 'use a host name that resolves; the service retries until it does (a name may not resolve during a failover)',
    };
  }
  if (['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code) || /timeout exceeded when trying to connect|connection timeout/i.test(message)) {
    const address = addressOf(error);
    return {
      problem: `no answer${address ? ` from ${address}` : ''} (${code || message})`,
      fix: 'check that PostgreSQL is up and reachable at that host and port; the service retries until it answers',
    };
  }
  // The client asked for SSL (sslmode=require or verify-full, ssl=true) and the server has none: pg's own error, without a code.
  if (/does not support SSL/i.test(message))
    return {
      problem: 'the server does not support SSL connections, and DATABASE_URL asks for SSL (sslmode or ssl)',
      fix: 'enable SSL on the PostgreSQL server, or remove sslmode/ssl from DATABASE_URL (a server on a trusted network) and restart the service; it retries meanwhile',
    };
  // The reverse: pg_hba.conf accepts this user only over SSL (hostssl) and the client connected without it.
  if (code === '28000' && /no encryption|SSL off/i.test(message))
    return {
      problem: message,
      fix: "the server accepts this connection only over SSL: add sslmode=verify-full to DATABASE_URL (or a host line to the server's pg_hba.conf) and restart the service; it retries meanwhile",
    };
  // No password in the URL (nor PGPASSWORD) for a server asking for one: the driver's own SCRAM error, or 28P01 `empty password` (newcomer ncpg73 F2).
  if (isPostgresPasswordMissing(error))
    return {
      problem: `the server asks for a password and DATABASE_URL carries none, nor is PGPASSWORD set (${message})`,
      fix: "put the user's password in DATABASE_URL (postgres://user:password@host:5432/database, percent-encoded; or fix the server's pg_hba.conf) and restart the service; it retries meanwhile",
    };
  if (code.startsWith('28'))
    return { problem: message, fix: "fix the user or password in DATABASE_URL (or the server's pg_hba.conf) and restart the service; it retries meanwhile" };
  if (code === '3D000') return { problem: message, fix: 'create the database (createdb) or fix its name in DATABASE_URL; the service retries until it exists' };
  // A privilege the role lacks (revoked while running, or met at first use after a start that found the server down; at start: databasePrivilegeRefusal).
  if (isPostgresPermissionDenied(error)) {
    const { problem, fix } = privilegeProblem(error, databaseUrl);
    return { problem, fix: `${fix}; the service retries meanwhile` };
  }
  return null;
}

/**
 * The message of the EventStoreUnavailableError of `error` (a driver error saying PostgreSQL at
 * `databaseUrl` cannot be reached or cannot serve now): for a connection refused, a host that
 * does not resolve, no answer, a connection closed by the server while it was being opened, before
 * any answer of PostgreSQL's (`isClosedBeforePostgresAnswer`: not a PostgreSQL server, e.g. another
 * service's port), SSL asked for of a server without it (or the reverse: pg_hba.conf
 * accepting the user only over SSL), a login refused (SQLSTATE class 28: wrong password, unknown
 * user, pg_hba.conf; no password in the URL for a server asking for one, `isPostgresPasswordMissing`), a database that does not exist,
 * a privilege the role lacks (SQLSTATE 42501: the role named, what to grant) or a statement unanswered within the client-side
 * bound ({@link PostgresNoAnswerError}: a frozen server), `PostgreSQL event store: DATABASE_URL=<the URL,
 * credentials masked>: <what is wrong>: <what to fix>; the service retries …`, e.g.
 * `PostgreSQL event store: DATABASE_URL=postgres://app:***@db:5432/events: connection refused by
 * 10.0.0.5:5432: start PostgreSQL (or fix DATABASE_URL); the service retries until it answers`;
 * otherwise (a failover's read-only server, a connection cut mid-session or mid-query) the default
 * `PostgreSQL event store: <the driver's message>`.
 */
export function databaseUrlUnavailable(error: unknown, databaseUrl: string): string {
  const found = error !== null && typeof error === 'object' ? problemOf(error, databaseUrl) : null;
  if (!found) return postgresUnavailableMessage(error);
  return `PostgreSQL event store: ${configurationRefusalMessage({ variable: 'DATABASE_URL', value: databaseUrl, mask: 'url', ...found })}`;
}
