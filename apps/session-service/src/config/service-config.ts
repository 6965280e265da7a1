/**
 * The service's configuration, read from environment variables (documented in docs/configuration.md).
 * Invalid values stop the start-up with a {@link ConfigurationError} naming the variable, its value,
 * what is wrong and what to fix.
 */
import * as path from 'node:path';
import { isIP, isIPv6 } from 'node:net';
import { SERVICE_NUMBER_VARIABLES } from './number-variables';
import type { NumberVariable } from '@lib/session';
import { parseAllowedHosts } from './allowed-hosts';
import { ConfigurationError } from './configuration-error';
import { natsConnectionTarget } from './nats-credentials';
import { parseReplyPrefixes } from '../nats/nats-reply-to';
import { trimmedEnvironment } from './environment-values';
import { resolveBuildIdentity, type BuildIdentity } from './build-identity';

/** Resolved configuration. Durations in milliseconds, sizes in bytes. */
export interface ServiceConfig {
  /** HTTP port (`PORT`, default 3000, 0 to 65535; 0 picks a free port). */
  port: number;
  /** Interface to listen on (`HOST`, default `127.0.0.1`). */
  host: string;
  /** Directory of the embedded store and read models (`DATA_DIR`, default `./data`). */
  dataDir: string;
  /** File of the embedded SQLite store (`SQLITE_EVENTS_FILE`, default `<DATA_DIR>/events.sqlite`). Replicas may share it, each with its own DATA_DIR for read models. */
  sqliteEventsFile: string;
  /** KurrentDB connection string (`KURRENTDB_CONNECTION_STRING`); the embedded SQLite store when absent. */
  kurrentDbConnectionString?: string;
  /**
   * PostgreSQL URL of the event store (`DATABASE_URL`, `postgres://` or `postgresql://`). Several
   * replicas may share it; each keeps its own read models under `dataDir`.
   */
  databaseUrl?: string;
  /**
   * Most connections this replica opens to PostgreSQL (`DATABASE_POOL_SIZE`, default 16, 1 to
   * 1000): the server's `max_connections` must exceed replicas × this plus its other clients.
   */
  databasePoolSize: number;
  /**
   * The longest one PostgreSQL statement may run, waiting for locks included (`DATABASE_STATEMENT_TIMEOUT_MS`,
   * default 30000, 0 to 3,600,000): set as `statement_timeout` and `lock_timeout` on each of the
   * service's connections; 0 sets none (the role's or database's settings apply).
   */
  databaseStatementTimeoutMs: number;
  /** API key → tenant id (`API_KEYS="key1:tenantA,key2:tenantB"`). Empty (API_KEYS unset) = open development mode. */
  apiKeys: Map<string, string>;
  /**
   * Host names open development mode answers besides localhost, `*.localhost` and IP addresses
   * (`ALLOWED_HOSTS`, comma-separated, lower case; `.name` also every name under it; see `allowed-hosts.ts`).
   * Without effect when `apiKeys` is set.
   */
  allowedHosts: string[];
  /** Largest accepted request body (`MAX_BODY_BYTES`, default 5 MiB). Larger bodies get 413. */
  maxBodyBytes: number;
  /** Most events (or messages) in one append request (`MAX_EVENTS_PER_REQUEST`, default 1000). */
  maxEventsPerRequest: number;
  /** Longest text of one event field, in characters (Unicode code points; `MAX_TEXT_LENGTH`, default 1,000,000). */
  maxTextLength: number;
  /**
   * Longest time to receive a whole request, head and body (`REQUEST_TIMEOUT_MS`, default 60000,
   * 100 to 3,600,000). A request not received in time is answered 408 `request_timeout` and its
   * connection closed, when Node next checks (every quarter of the timeout, at most every 30 s).
   */
  requestTimeoutMs: number;
  /**
   * Longest time (ms) a SIGTERM/SIGINT/SIGHUP shutdown takes (`SHUTDOWN_TIMEOUT_MS`, default 20000, 1000 to
   * 3,600,000; below Kubernetes' default 30 s grace period): at half of it model calls still running are
   * aborted and NATS is closed without draining; at its end the process ends whatever it still waits for
   * (a store that does not answer), with one warn line naming it.
   */
  shutdownTimeoutMs: number;
  /** How long `minPosition` waits for the projection at most (`MAX_WAIT_MS`, default 5000, 0 to 60,000). */
  maxWaitMs: number;
  /**
   * Deadline (ms) of counting a large request's tokens, or a compaction's text work, in the worker
   * thread, queueing included (`COUNTING_DEADLINE_MS`, default 30000, 1000 to 600,000): past it 503
   * `counting_timeout`, or 413 `counting_too_costly` when the task had the thread to itself.
   */
  countingDeadlineMs: number;
  /**
   * Longest time (ms) from a write request's arrival at this replica (HTTP: its head; NATS: its
   * delivery) to the start of its write (`WRITE_DEADLINE_MS`, default 30000, 100 to 3,600,000): a
   * write (append, policy, erasure) not started by then is answered 503 `request_expired` and never
   * written (see `checkWriteAdmission`).
   */
  writeDeadlineMs: number;
  /**
   * Bound of the memory the write side's cached session states hold, estimated, in MiB
   * (`SESSION_CACHE_MAX_MB`, default 256, 1 to 1,048,576): a cached state keeps its session's active
   * events whole; past the bound the least recently used are forgotten and loaded from the store
   * when next used. At most 2,000 states are cached in any case.
   */
  sessionCacheMaxMb: number;
  /**
   * The projector applies events in a worker thread (`PROJECTOR_WORKER`: `true`/`1` or `false`/`0`,
   * default false): the read-model writes and the recall index leave the event loop (issue 14).
   */
  projectorWorker: boolean;
  /**
   * The embedded SQLite store commits in a worker thread (`SQLITE_WRITER_THREAD`: `true`/`1` or
   * `false`/`0`, default true): an append's transaction and its fsync do not block the event loop
   * (issue 14). Reads stay on the event loop's own connection.
   */
  sqliteWriterThread: boolean;
  /**
   * The embedded SQLite store runs `PRAGMA quick_check` on its events file at start
   * (`SQLITE_QUICK_CHECK`: `true`/`1` or `false`/`0`, default true) and refuses a damaged file
   * (up to ~15 s per GiB on a busy machine, with a line when it takes a second or more; `false` skips it, e.g. for a very large file checked otherwise).
   */
  sqliteQuickCheck: boolean;
  /** Requests per minute per API key (or per client address in open mode) (`RATE_LIMIT_PER_MINUTE`, default 6000; 0 disables). */
  rateLimitPerMinute: number;
  /**
   * Which peers' `X-Forwarded-For` gives a request's client address (`TRUST_PROXY`), as Fastify's
   * `trustProxy` takes it: false (none: the peer's own address, the default), a number of proxy
   * hops in front of the service, or a list of the proxies' addresses and CIDR ranges. The address
   * is what the rate limit counts per client without a known key.
   */
  trustProxy: false | number | string[];
  /** Log level (`LOG_LEVEL`, default `info`; `silent` turns logging off). */
  logLevel: string;
  /**
   * Log format (`LOG_FORMAT`): `pretty` (human-readable lines) or `json` (one JSON object per
   * line). Default: `pretty` when stdout is a terminal, `json` otherwise.
   */
  logFormat: 'pretty' | 'json';
  /** Level of the one log line per HTTP request (`REQUEST_LOG_LEVEL`, default `debug`: shown with `LOG_LEVEL=debug`). */
  requestLogLevel: string;
  /** Auto-compaction backoff: failures in a row before backing off (`AUTO_COMPACTION_MAX_FAILURES`, default 3). */
  autoCompactionMaxFailures: number;
  /** Auto-compaction backoff base (`AUTO_COMPACTION_BACKOFF_MS`, default 30000). */
  autoCompactionBackoffMs: number;
  /** How often (ms) a compaction waiting for its session's claim (PostgreSQL replicas) looks again (`COMPACTION_CLAIM_POLL_MS`, default 250, 10 to 60,000). */
  compactionClaimPollMs: number;
  /** The longest (ms) an automatic compaction waits for its session's claim, then runs unclaimed (`AUTO_COMPACTION_CLAIM_MAX_WAIT_MS`, default 120000, 0 to 3,600,000). */
  autoCompactionClaimMaxWaitMs: number;
  /**
   * The longest (ms) a commanded compaction (HTTP, NATS) waits for its session's claim, then runs
   * unclaimed (`COMPACTION_CLAIM_MAX_WAIT_MS`, 0 to 3,599,999 and less than `REQUEST_TIMEOUT_MS`;
   * default 15000 or half of `REQUEST_TIMEOUT_MS`, whichever is less).
   */
  compactionCommandClaimMaxWaitMs: number;
  /** NATS server(s) for the JetStream command and decision transport (`NATS_URL`, comma-separated, as given: credentials in it are sent, see `nats-credentials.ts`); off when absent. */
  natsUrl?: string;
  /** User and password for the NATS server (`NATS_USER`, `NATS_PASSWORD`), when it asks for them and `NATS_URL` carries none. */
  natsUser?: string;
  natsPassword?: string;
  /** First subject token and stream-name prefix of the NATS transport (`NATS_PREFIX`, default `compaction`). */
  natsPrefix: string;
  /** Commands handled at once per replica over NATS (`NATS_CONCURRENCY`, default 16, 1 to 1024). */
  natsConcurrency: number;
  /** How long a delivered command may go unacknowledged before JetStream gives it to another replica (`NATS_ACK_WAIT_MS`, default 30000, 1000 to 3,600,000; set when the consumer is created). */
  natsAckWaitMs: number;
  /**
   * How often (ms) the client pings the NATS server (`NATS_PING_INTERVAL_MS`, default 10000, 1000 to
   * 600,000): a server that stops answering without closing the connection (a partition, a frozen
   * host) is taken as lost once two pings are unanswered at the next one, 2 to 3 intervals after it froze.
   */
  natsPingIntervalMs: number;
  /**
   * How long (ms) the durable command consumer may deliver nothing while commands wait in the
   * command stream and a replica asks for them before that replica takes it as stuck and re-creates
   * it (`NATS_CONSUMER_STUCK_MS`, default 60000, 5000 to 3,600,000; see `stuck-consumer.ts`).
   */
  natsConsumerStuckMs: number;
  /**
   * Each handled command is deleted from the command stream with JetStream's erase flag before its
   * acknowledgement (`NATS_ERASE_HANDLED_COMMANDS`: `true`/`1` or `false`/`0`, default false): an
   * acknowledged message of a work-queue stream is only marked deleted, its bytes (the texts it
   * appended) staying in the stream's block file until the whole block is removed. On, no command
   * text outlives its handling on the NATS server's disk; it costs about a third of the NATS command
   * throughput (benchmark figure 9: 583–636 → 401–404 commands/s on the 2-core machine).
   */
  natsEraseHandledCommands: boolean;
  /**
   * Subject prefixes (whole tokens, no trailing dot) a command's `Reply-To` must be under for its
   * answer to go there (`NATS_REPLY_PREFIXES`, comma-separated, default `_INBOX`); never a `$`
   * subject nor under `NATS_PREFIX` (see `nats-reply-to.ts`).
   */
  natsReplyPrefixes: string[];
  /**
   * Which build runs: the `package.json` version, the commit (`BUILD_COMMIT`, else the checkout's `.git`, else
   * `unknown`) and the Node.js version; see `build-identity.ts`. Shown by `/health`, `/metrics` and the start-up line.
   */
  build: BuildIdentity;
}

/** `env[name]` checked against its row of {@link SERVICE_NUMBER_VARIABLES}; the message of a refusal states that range. */
function intVar(env: NodeJS.ProcessEnv, name: keyof typeof SERVICE_NUMBER_VARIABLES): number {
  return numberVariable(env, name, SERVICE_NUMBER_VARIABLES[name]);
}

/**
 * `COMPACTION_CLAIM_MAX_WAIT_MS`: in its range and less than `REQUEST_TIMEOUT_MS` (a commanded
 * compaction waiting for its session's claim must answer before a request would time out). Unset:
 * its default (15000) or half of `REQUEST_TIMEOUT_MS`, whichever is less.
 * @throws ConfigurationError naming `COMPACTION_CLAIM_MAX_WAIT_MS`, the request timeout and the fix.
 */
function commandClaimMaxWait(env: NodeJS.ProcessEnv): number {
  const requestTimeout = intVar(env, 'REQUEST_TIMEOUT_MS');
  if (!env.COMPACTION_CLAIM_MAX_WAIT_MS?.trim())
    return Math.min(SERVICE_NUMBER_VARIABLES.COMPACTION_CLAIM_MAX_WAIT_MS.fallback, Math.floor(requestTimeout / 2));
  const wait = intVar(env, 'COMPACTION_CLAIM_MAX_WAIT_MS');
  if (wait < requestTimeout) return wait;
  throw new ConfigurationError({
    variable: 'COMPACTION_CLAIM_MAX_WAIT_MS',
    value: String(wait),
    problem: `not less than REQUEST_TIMEOUT_MS (${requestTimeout})`,
    fix: `use a time in milliseconds less than ${requestTimeout}, or raise REQUEST_TIMEOUT_MS`,
  });
}

/**
 * `env[name]` checked against `row` (an integer from `min` to `max` in plain decimal digits, spaces
 * around them aside; `fallback` when unset or blank): the rule of every number variable, the
 * service's and its commands' (`REBUILD_PAGE_SIZE`, …).
 * @throws ConfigurationError `NAME=<value>: out of range|not an integer in plain decimal digits: use <what>, an integer from <min> to <max>`.
 */
export function numberVariable(env: NodeJS.ProcessEnv, name: string, row: NumberVariable): number {
  const { min, max, fallback, what } = row;
  const raw = env[name];
  // Blank counts as unset; otherwise plain decimal digits, spaces around them aside, as the summarizer's variables (Number() would read " " as 0, "1e3" or "0x10").
  const digits = raw?.trim();
  if (!digits) return fallback;
  const plain = /^\d+$/.test(digits);
  const value = Number(digits);
  if (!plain || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigurationError({
      variable: name,
      value: raw!,
      problem: plain ? 'out of range' : 'not an integer in plain decimal digits',
      fix: `use ${what}, an integer from ${min} to ${max}`,
    });
  }
  return value;
}

/**
 * Parses `API_KEYS` (`key:tenant` pairs, comma-separated; spaces around an entry, its key or its tenant ignored). Unset
 * (`undefined`): no keys, open development mode.
 * @throws ConfigurationError naming the variable (never a key: `API_KEYS=***` unless it holds none) when it is set but holds no key (a missing secret in a
 *   deployment template must not open the service: unset it for open mode), an entry is empty (two commas in a row, a
 *   comma at the start or end: an entry a template failed to render), an entry is not a `key:tenant` pair, its tenant is not 1–64 letters, digits, `_` or `-`, its key is shorter than
 *   8 characters or holds anything but printable ASCII without space, or a key is listed twice. Messages name entries by
 *   their position in the list (1-based), never by the key.
 */
export function parseApiKeys(raw: string | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  if (raw === undefined) return keys;
  const entries = raw.split(',').map((s) => s.trim());
  if (entries.every((entry) => entry === '')) {
    throw new ConfigurationError({
      variable: 'API_KEYS',
      value: raw, // only spaces and commas: no key to hide
      problem: 'set but holds no key',
      fix: 'give key:tenant pairs, or unset API_KEYS for open development mode (no authentication)',
    });
  }
  const positions = new Map<string, number>();
  entries.forEach((entry, index) => {
    // An entry a deployment template failed to render ("$A,$B,$C" with one empty) would leave a tenant without its key (newcomer ncops73 F4).
    if (entry === '') {
      throw refuseApiKeys(
        `entry ${index + 1} of ${entries.length} is empty (${index === 0 ? 'a comma at the start' : index === entries.length - 1 ? 'a comma at the end' : 'nothing between two commas'}), perhaps a key a deployment template failed to render`,
        'give every entry as key:tenant, or remove the comma too many',
      );
    }
    const at = entry.lastIndexOf(':');
    // Spaces around the key or the tenant are not part of them (an HTTP header value loses them too).
    const key = entry.slice(0, Math.max(at, 0)).trim();
    const tenant = entry.slice(at + 1).trim();
    if (at <= 0) {
      throw refuseApiKeys(
        `entry ${index + 1} is not a key:tenant pair`,
        'use a comma-separated list of key:tenant pairs (key at least 8 characters; tenant letters, digits, _ or -)',
      );
    }
    if (!TENANT_ID.test(tenant)) {
      throw refuseApiKeys(
        `the tenant of entry ${index + 1} is not 1 to 64 letters, digits, _ or -`,
        'name the tenant with 1 to 64 ASCII letters, digits, _ or -',
      );
    }
    if (key.length < 8) throw refuseApiKeys(`the key of entry ${index + 1} is shorter than 8 characters`, 'use keys of at least 8 characters');
    // An HTTP header carries bytes: a key with other characters (é, a space) could never be sent as configured.
    if (!API_KEY_CHARACTERS.test(key)) {
      throw refuseApiKeys(
        `the key of entry ${index + 1} holds a character other than printable ASCII (e.g. a letter with an accent or a space), which clients cannot send as configured in an HTTP header`,
        'use keys of printable ASCII characters without spaces (e.g. letters, digits, - and _)',
      );
    }
    const first = positions.get(key);
    if (first !== undefined) {
      throw refuseApiKeys(`the key of entry ${first} is listed again as entry ${index + 1}`, 'give each key once (one tenant per key)');
    }
    positions.set(key, index + 1);
    keys.set(key, tenant);
  });
  return keys;
}

/** A tenant id in `API_KEYS`: 1–64 ASCII letters, digits, `_` or `-`. */
const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Characters of an API key: printable ASCII without space (U+0021–U+007E), what an HTTP header value carries as sent. */
const API_KEY_CHARACTERS = /^[\x21-\x7e]+$/;

/** A refusal of `API_KEYS`: its value is never shown (`API_KEYS=***`), entries are named by position. */
function refuseApiKeys(problem: string, fix: string): ConfigurationError {
  return new ConfigurationError({ variable: 'API_KEYS', value: '', mask: 'secret', problem, fix });
}

/** A `BUILD_COMMIT` value: 1 to 128 printable ASCII characters without spaces (a commit id, or e.g. `v1.2.0-3-gabc1234-dirty`). */
const BUILD_COMMIT_VALUE = /^[\x21-\x7e]{1,128}$/;

/**
 * `BUILD_COMMIT` (trimmed; unset or empty: undefined, the checkout's commit is read instead).
 * @throws ConfigurationError naming `BUILD_COMMIT` when it holds a space, a character other than printable ASCII, or more than 128 characters.
 */
export function parseBuildCommit(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (BUILD_COMMIT_VALUE.test(raw)) return raw;
  throw new ConfigurationError({
    variable: 'BUILD_COMMIT',
    value: raw,
    problem: 'not a commit id: it holds a space or a character other than printable ASCII, or is longer than 128 characters',
    fix: 'set it to the commit the build was made from, e.g. BUILD_COMMIT=$(git rev-parse HEAD), or unset it',
  });
}

/** pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * `env[name]` as one of `allowed` (lower-case names), in any case (`INFO` is `info`, as booleans take `TRUE`); unset: `fallback`.
 * @throws ConfigurationError `NAME=<value>: not one of its values: use one of …` otherwise.
 */
function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase();
  if (!(allowed as readonly string[]).includes(value))
    throw new ConfigurationError({ variable: name, value: raw, problem: 'not one of its values', fix: `use one of ${allowed.join(', ')} (any case)` });
  return value as T;
}

/**
 * `env[name]` as a boolean: `true`/`1` or `false`/`0`, any case, surrounding spaces ignored; unset: `fallback`. @throws ConfigurationError naming the variable and the accepted values otherwise.
 */
function boolVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigurationError({
    variable: name,
    value: env[name]!,
    problem: 'not a boolean',
    fix: `use true, false, 1 or 0 (any case), or unset it for the default (${fallback})`,
  });
}

/**
 * Parses `DATABASE_URL` (empty: not set; spaces around it ignored).
 * @throws ConfigurationError `DATABASE_URL=<value>: <problem>: <fix>` when it is not a URL, not a PostgreSQL one, or
 *   has an `sslmode` the driver does not know (it would take it silently);
 *   the value is shown with its credentials masked (`withoutCredentials` of `@lib/event-store`), never a password.
 */
export function parseDatabaseUrl(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigurationError({
      variable: 'DATABASE_URL',
      value: raw!,
      mask: 'url',
      problem: 'not a URL',
      fix: 'use postgres://user:password@host:5432/database',
    });
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigurationError({
      variable: 'DATABASE_URL',
      value: raw!,
      mask: 'url',
      problem: `not a PostgreSQL URL (scheme ${url.protocol})`,
      fix: 'use postgres:// or postgresql://, e.g. postgres://user:password@host:5432/database',
    });
  }
  if (url.port === '0')
    throw new ConfigurationError({
      variable: 'DATABASE_URL',
      value: raw!,
      mask: 'url',
      problem: 'port 0 is no port a server can be reached on, so every connection would fail',
      fix: "use the server's port, e.g. postgres://user:password@host:5432/database (or none for 5432)",
    });
  // The driver (pg-connection-string) takes the database from the path only: a `database` parameter is ignored, so
  // `postgres://host?database=sessions` connected to the database named as the user (newcomer ncops67 F4: accepted, the
  // start-up line named no database, the tables went to `postgres`), and `/a?database=b` to `a` without a word.
  // (also `dbname`, libpq's name for it, and any letter case: newcomer ncrecheck68 N3)
  const databaseParameter = [...url.searchParams.keys()].find((key) => /^(database|dbname)$/i.test(key));
  if (databaseParameter !== undefined)
    throw new ConfigurationError({
      variable: 'DATABASE_URL',
      value: raw!,
      mask: 'url',
      problem: `gives the database as a parameter (${databaseParameter}=${url.searchParams.get(databaseParameter)}), which the PostgreSQL driver ignores: it takes the database from the path only${url.pathname.length > 1 ? ` (here ${decodeURIComponent(url.pathname.slice(1))})` : ', and would use the one named as the user'}`,
      fix: 'name the database in the path and drop the parameter, e.g. postgres://user:password@host:5432/sessions',
    });
  // Without a database the driver connects to the one named as the user: often the server's maintenance database
  // `postgres`, where the service would create its tables (newcomer ncops65 F2: a template with an unset name did).
  const database = url.pathname.length > 1 ? url.pathname.slice(1) : null;
  if (!database)
    throw new ConfigurationError({
      variable: 'DATABASE_URL',
      value: raw!,
      mask: 'url',
      problem: `names no database (nothing after the host${url.port ? ' and port' : ''}): the driver would use the database named as the user, often the server's maintenance database postgres, and the service would create its tables there`,
      fix: 'add the database the service is to use, e.g. postgres://user:password@host:5432/sessions (create it first: createdb -E UTF8 -T template0 sessions)',
    });
  // The driver takes any sslmode without a word, and an unknown one as no SSL mode at all.
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && !POSTGRES_SSL_MODES.includes(sslmode)) {
    throw new ConfigurationError({
      variable: 'DATABASE_URL',
      value: raw!,
      mask: 'url',
      problem: `sslmode=${sslmode} is not an SSL mode the PostgreSQL driver knows`,
      fix: `use one of ${POSTGRES_SSL_MODES.join(', ')} (verify-full: SSL with the server's certificate and name checked), or leave sslmode out`,
    });
  }
  return value;
}

/** The `sslmode` values of a `DATABASE_URL` the pg driver reads (pg-connection-string); any other is refused at start. */
const POSTGRES_SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/** The schemes a `NATS_URL` server may have: the NATS client's (`tls://` requires TLS: {@link natsUrlRequiresTls}). */
const NATS_URL_SCHEMES = ['nats:', 'tls:'];

/** The scheme of each server of `raw` (comma-separated), lower case (`nats:`, `tls:`, …), undefined for a bare `host:port`. */
function natsServerSchemes(raw: string): Array<string | undefined> {
  return raw.split(',').map((server) => /^\s*([a-z][a-z0-9+.-]*:)\/\//i.exec(server)?.[1].toLowerCase());
}

/**
 * `HOST` (undefined: not set, `127.0.0.1`) → the interface to listen on. An IPv6 address may be
 * given bracketed, as in URLs (`[::1]` is `::1`); brackets around anything else are refused
 * ({@link ConfigurationError}: drop them), as no host name is written so.
 */
export function parseHost(raw: string | undefined): string {
  if (!raw) return '127.0.0.1';
  const inner = /^\[(.*)\]$/.exec(raw)?.[1];
  if (inner === undefined) return raw;
  if (isIPv6(inner)) return inner;
  throw new ConfigurationError({
    variable: 'HOST',
    value: raw,
    problem: 'brackets around what is not an IPv6 address',
    fix: `drop the brackets (${inner || '127.0.0.1'}); only an IPv6 address may be bracketed, e.g. [::1]`,
  });
}

/**
 * Parses `NATS_URL` (empty: not set): comma-separated servers, each `nats://host:port`,
 * `tls://host:port` or a bare `host:port` (the client's `nats://`). The client drops any other
 * scheme and connects as it would with `nats://`, so an `http://` URL (the monitoring port's, a
 * proxy's) was accepted and failed later or elsewhere: refused here. `tls://` on some servers and
 * not on others is refused too: the client requires TLS of every server or of none
 * ({@link natsUrlRequiresTls}).
 * @throws ConfigurationError `NATS_URL=<value, credentials masked>: server N has scheme <s> …: use nats:// …`,
 *   or `…: server N is tls:// and server M is not: …`.
 */
export function parseNatsUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const schemes = natsServerSchemes(raw);
  const several = schemes.length > 1;
  for (const [i, scheme] of schemes.entries()) {
    if (scheme !== undefined && !NATS_URL_SCHEMES.includes(scheme))
      throw new ConfigurationError({
        variable: 'NATS_URL',
        value: raw,
        mask: 'url-list',
        problem: `${several ? `server ${i + 1} has` : 'has'} scheme ${scheme}, not a NATS server's`,
        fix: 'use comma-separated nats://host:4222 URLs (tls:// or a bare host:port also work)',
      });
  }
  for (const [i, server] of raw.split(',').entries()) {
    const port = natsServerPort(server, schemes[i]);
    if (port === '0')
      throw new ConfigurationError({
        variable: 'NATS_URL',
        value: raw,
        mask: 'url-list',
        problem: `${several ? `server ${i + 1} has` : 'has'} port 0, which is no port a server can be reached on, so the connection would never be made`,
        fix: "use the NATS server's port, e.g. nats://host:4222 (or none for 4222)",
      });
  }
  const tls = schemes.findIndex((s) => s === 'tls:');
  const plain = schemes.findIndex((s) => s !== 'tls:');
  if (tls !== -1 && plain !== -1)
    throw new ConfigurationError({
      variable: 'NATS_URL',
      value: raw,
      mask: 'url-list',
      problem: `server ${tls + 1} is tls:// and server ${plain + 1} is not, but the connection requires TLS of every server or of none`,
      fix: 'use tls:// on every server (TLS required) or on none',
    });
  return raw;
}

/** The port written in one server of a `NATS_URL` (`scheme` its scheme, undefined for a bare `host:port`); '' when none is, or it cannot be read. */
function natsServerPort(server: string, scheme: string | undefined): string {
  try {
    return new URL(scheme === undefined ? `nats://${server.trim()}` : server.trim()).port;
  } catch {
    return '';
  }
}

/**
 * True when `natsUrl` (a value {@link parseNatsUrl} accepted) names its servers `tls://`: the
 * connection then requires TLS (the client's `tls` option) and refuses a server that does not
 * offer it, instead of the client's default, which reads `tls://` as `nats://` and uses TLS only
 * when the server asks for it (a server without TLS got the credentials in plain text).
 */
export function natsUrlRequiresTls(natsUrl: string): boolean {
  return natsServerSchemes(natsUrl)[0] === 'tls:';
}

/**
 * `TRUST_PROXY`: unset, empty, `false` or `0` → false; a number of hops 1–16 (`1`: one proxy in front,
 * e.g. the compose file's nginx); or a comma-separated list of IPv4/IPv6 addresses and CIDR ranges
 * of the proxies (`10.0.0.0/8,127.0.0.1`). `true` (every peer) is refused: any client could then
 * pick its own address and escape the rate limit.
 * @throws ConfigurationError for anything else.
 */
export function parseTrustProxy(value: string | undefined): false | number | string[] {
  const text = value?.trim() ?? '';
  // Words in any case, as the booleans (`False`, `TRUE`).
  const word = text.toLowerCase();
  if (text === '' || word === 'false' || text === '0') return false;
  const fix = "use a number of proxy hops (1 to 16), or the proxies' addresses or CIDR ranges, comma-separated (e.g. 10.0.0.0/8,127.0.0.1), or false";
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 16) throw new ConfigurationError({ variable: 'TRUST_PROXY', value: value!, problem: 'out of range', fix });
    return hops;
  }
  if (word === 'true')
    throw new ConfigurationError({ variable: 'TRUST_PROXY', value: value!, problem: 'trusts every peer, so any client could choose its own address', fix });
  const entries = text.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const okBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !okBits || rest.length > 0)
      throw new ConfigurationError({ variable: 'TRUST_PROXY', value: value!, problem: `${JSON.stringify(entry)} is not an address or CIDR range`, fix });
  }
  return entries;
}

/**
 * Reads the configuration from `env`; `stdoutIsTerminal` picks the default log format. Every
 * variable first goes through {@link trimmedEnvironment} (the one rule: values trimmed, a blank
 * one refused unless documented as unset). Also reads the running build's identity (`build`: the service's
 * `package.json` and, without `BUILD_COMMIT`, its checkout's `.git`; see `build-identity.ts`).
 * @throws ConfigurationError naming the first invalid variable.
 */
export function loadServiceConfig(givenEnv: NodeJS.ProcessEnv = process.env, stdoutIsTerminal = Boolean(process.stdout.isTTY)): ServiceConfig {
  const env = trimmedEnvironment(givenEnv);
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const natsPrefix = env.NATS_PREFIX || 'compaction';
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(natsPrefix)) {
    throw new ConfigurationError({ variable: 'NATS_PREFIX', value: natsPrefix, problem: 'not a subject token', fix: 'use 1 to 32 letters, digits, _ or -' });
  }
  const kurrentDbConnectionString = env.KURRENTDB_CONNECTION_STRING || undefined;
  const databaseUrl = parseDatabaseUrl(env.DATABASE_URL);
  if (kurrentDbConnectionString && databaseUrl) {
    throw new ConfigurationError({
      variable: 'DATABASE_URL',
      value: env.DATABASE_URL!,
      mask: 'url',
      problem: 'set together with KURRENTDB_CONNECTION_STRING',
      fix: 'choose one event store (unset the other)',
    });
  }
  const natsUrl = parseNatsUrl(env.NATS_URL);
  const natsUser = env.NATS_USER || undefined;
  const natsPassword = env.NATS_PASSWORD || undefined;
  // Credentials in NATS_URL and in NATS_USER/NATS_PASSWORD both, or different on two servers: refused now, by name.
  if (natsUrl) natsConnectionTarget(natsUrl, { natsUser, natsPassword });
  return {
    port: intVar(env, 'PORT'),
    host: parseHost(env.HOST),
    dataDir,
    sqliteEventsFile: env.SQLITE_EVENTS_FILE ? path.resolve(env.SQLITE_EVENTS_FILE) : path.join(dataDir, 'events.sqlite'),
    kurrentDbConnectionString,
    databaseUrl,
    databasePoolSize: intVar(env, 'DATABASE_POOL_SIZE'),
    databaseStatementTimeoutMs: intVar(env, 'DATABASE_STATEMENT_TIMEOUT_MS'),
    apiKeys: parseApiKeys(env.API_KEYS),
    allowedHosts: parseAllowedHosts(env.ALLOWED_HOSTS),
    maxBodyBytes: intVar(env, 'MAX_BODY_BYTES'),
    maxEventsPerRequest: intVar(env, 'MAX_EVENTS_PER_REQUEST'),
    maxTextLength: intVar(env, 'MAX_TEXT_LENGTH'),
    maxWaitMs: intVar(env, 'MAX_WAIT_MS'),
    countingDeadlineMs: intVar(env, 'COUNTING_DEADLINE_MS'),
    writeDeadlineMs: intVar(env, 'WRITE_DEADLINE_MS'),
    sessionCacheMaxMb: intVar(env, 'SESSION_CACHE_MAX_MB'),
    requestTimeoutMs: intVar(env, 'REQUEST_TIMEOUT_MS'),
    shutdownTimeoutMs: intVar(env, 'SHUTDOWN_TIMEOUT_MS'),
    projectorWorker: boolVar(env, 'PROJECTOR_WORKER', false),
    sqliteWriterThread: boolVar(env, 'SQLITE_WRITER_THREAD', true),
    sqliteQuickCheck: boolVar(env, 'SQLITE_QUICK_CHECK', true),
    rateLimitPerMinute: intVar(env, 'RATE_LIMIT_PER_MINUTE'),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['pretty', 'json'] as const, stdoutIsTerminal ? 'pretty' : 'json'),
    requestLogLevel: oneOf(env, 'REQUEST_LOG_LEVEL', LOG_LEVELS, 'debug'),
    autoCompactionMaxFailures: intVar(env, 'AUTO_COMPACTION_MAX_FAILURES'),
    autoCompactionBackoffMs: intVar(env, 'AUTO_COMPACTION_BACKOFF_MS'),
    compactionClaimPollMs: intVar(env, 'COMPACTION_CLAIM_POLL_MS'),
    autoCompactionClaimMaxWaitMs: intVar(env, 'AUTO_COMPACTION_CLAIM_MAX_WAIT_MS'),
    compactionCommandClaimMaxWaitMs: commandClaimMaxWait(env),
    natsUrl,
    natsUser,
    natsPassword,
    natsPrefix,
    natsConcurrency: intVar(env, 'NATS_CONCURRENCY'),
    natsAckWaitMs: intVar(env, 'NATS_ACK_WAIT_MS'),
    natsPingIntervalMs: intVar(env, 'NATS_PING_INTERVAL_MS'),
    natsConsumerStuckMs: intVar(env, 'NATS_CONSUMER_STUCK_MS'),
    natsEraseHandledCommands: boolVar(env, 'NATS_ERASE_HANDLED_COMMANDS', false),
    natsReplyPrefixes: parseReplyPrefixes(env.NATS_REPLY_PREFIXES, natsPrefix),
    build: resolveBuildIdentity({ buildCommit: parseBuildCommit(env.BUILD_COMMIT) }),
  };
}
