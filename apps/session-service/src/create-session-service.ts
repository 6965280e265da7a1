/**
 * Builds the whole service for a configuration: the event store (embedded SQLite under DATA_DIR,
 * KurrentDB, or PostgreSQL), the read models, the summarizer, and the NestJS application with its OpenAPI
 * document at `/docs`. Used by `main.ts`, the end-to-end tests and the CLI tools.
 */
import 'reflect-metadata';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import fastifyStatic from '@fastify/static';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { Logger as NestLogger } from '@nestjs/common';
import { FrameworkLogger } from './observability/framework-logger';
import { ESTIMATOR_NAMES, getEstimator } from '@lib/compaction';
import {
  EventStoreDatabaseEncodingError,
  EventStoreHeadBehindError,
  EventStoreSchemaMismatchError,
  EventStoreSchemaNewerError,
  EventStoreUnavailableError,
  isPostgresPermissionDenied,
  type EventStore,
} from '@lib/event-store';
import {
  AutoCompactionScheduler,
  COMMAND_EVENT_STORE,
  CompactSessionHandler,
  READ_MODEL_FILE_NAME,
  ReadModelStore,
  SessionProjector,
  LatestErasureTimes,
  readSessionLifeAt,
  SessionStateCache,
  summarizerFromEnv,
  type Summarizer,
} from '@lib/session';
import { checkReadModelsOfThisLog } from './config/read-models-of-this-log';
import { openReadModelsSettingDamageAside } from './config/damaged-read-models';
import { AppModule } from './app.module';
import { getStorageToken, type ThrottlerStorage } from '@nestjs/throttler';
import { useJsonBodies } from './http/json-body';
import { checkKeyBeforeBody } from './auth/key-check-before-body';
import { answerBadQueryEncoding, parseQueryString } from './http/query-string';
import { echoRequestIds, FASTIFY_REQUEST_ID_OPTIONS } from './observability/request-id';
import {
  answerClientErrors,
  answerFrameworkErrors,
  answerMissingHost,
  answerUnsupportedExpectations,
  answerWhileShuttingDown,
  answerNearRoutes,
  answerUnroutedBeforeBody,
  MAX_PARAM_LENGTH,
  refusedRequestLines,
  unparseableRequestLines,
} from './http/framework-answers';
import { answerHalfClosedConnections } from './http/half-close';
import { refuseFragments } from './http/fragment-in-target';
import { refuseUnspokenVersions } from './http/http-version';
import { closeAfterUpgradeOffers } from './http/upgrade-offers';
import { answerConnectRequests } from './http/connect-method';
import { processPipelinedInOrder } from './http/pipelined-in-order';
import { readLivesOnArrival, stampArrivals } from './commands/write-admissions';
import { useSecurityHeaders } from './http/security-headers';
import { foreignHostRefusal, refuseForeignHosts } from './http/foreign-host';
import { foreignHostLines } from './http/foreign-host-lines';
import { forbidCachingOfData } from './http/no-store';
import { refuseDeleteBodies } from './http/delete-takes-no-body';
import { refuseReadsOnceDamaged } from './http/reads-refused-once-damaged';
import { ReadModelsDamage } from './observability/read-models-damage';
import { logAnswerCodes } from './observability/request-log';
import { ServiceMetrics } from './observability/metrics';
import { countAnswers } from './observability/http-metrics';
import { buildOpenApiDocument } from './http/openapi-document';
import { answerFavicon, isUiFile, UI_PREFIX, uiDirectory } from './http/ui-assets';
import type { ServiceConfig } from './config/service-config';
import { eventStoreKind, openEventStore } from './config/event-store-config';
import { asConfigurationError } from './config/configuration-error';
import { databaseEncodingRefusal } from './config/database-encoding-refusal';
import { databaseSchemaMismatchRefusal } from './config/database-schema-mismatch-refusal';
import { databaseHeadBehindRefusal } from './config/database-head-behind-refusal';
import { databasePrivilegeRefusal } from './config/database-privilege-refusal';
import { holdSchemaCreation, releaseSchemaCreation } from './config/schema-creation-hold';
import { refuseCopyInProgress } from './config/copy-in-progress-refusal';
import { ensureDataDir, refuseFullDisk, requireEventsFileDirectory, requireWritableClaimsDirectory, withholdModeBitsFromServiceFiles } from './config/data-dir';
import { lockDataDir } from './config/data-dir-lock';
import { abortedAtShutdown, closeReadModelsAtBound, settlesWithin } from './shutdown/shutdown-bound';
import { acceptListenBacklog } from './shutdown/accept-listen-backlog';
import { NATS_TRANSPORT } from './config/tokens';
import type { NatsTransport } from './nats/nats-transport';

/**
 * A built service. `close()` stops the app (first telling, in one line each, the refused requests' warn lines
 * counted and not written yet: `refusedRequestLines`), then closes the read models and the store, and releases the lock on `DATA_DIR`.
 * With `drainMs`, it first closes the port (a new connection is refused) and answers every new request on the open
 * connections 503 `shutting_down` (with `Connection: close`) for that long (ms), so that clients on keep-alive
 * connections get that answer instead of a reset connection. It resolves with how many
 * requests were answered 503 `shutting_down` (their request lines log at debug; main.ts logs the count).
 * It takes at most `timeoutMs` (default `SHUTDOWN_TIMEOUT_MS`; shutdown-bound.ts), the drain included: at half of it
 * model calls still running are aborted and NATS is closed without draining; what has not finished at its end
 * (in-flight work or the store's close waiting on a store that does not answer) is left, named in `unfinished`
 * (empty when everything closed), the read models' file closed all the same (best effort, see
 * `closeReadModelsAtBound`), and the lock released: the caller then ends the process.
 */
export interface SessionService {
  app: NestFastifyApplication;
  store: EventStore;
  readModels: ReadModelStore;
  summarizer: Summarizer;
  config: ServiceConfig;
  /** The service's files an earlier release left readable by other users, from which the start took that access (`withholdModeBitsFromServiceFiles`). */
  modesWithheld: string[];
  close(options?: { drainMs?: number; timeoutMs?: number }): Promise<{ refusedWhileShuttingDown: number; unfinished: string[] }>;
}

/**
 * Starts a drain without resetting connections: closes the listening port (a new
 * connection is refused: the client sent nothing, and retries elsewhere; call it once the event loop has
 * accepted the connections waiting in the listen backlog, which closing resets) but not the open
 * connections, whose requests get 503 `shutting_down` with `Connection: close` until the drain
 * ends. Closing the port later, at the end of a busy drain, reset the connections clients had just
 * opened (after such a 503) and not yet seen accepted. `http.Server.close` would also destroy every
 * connection without a request in progress (a client whose request is on its way gets a reset): the
 * server's own `close()` comes after the drain, and finds the port closed already, which Fastify allows for.
 */
function stopAccepting(server: Server): void {
  if (server.listening) net.Server.prototype.close.call(server);
}

/**
 * The most rounds of the event loop (one or two polls each, ~µs when idle) a shutdown lets the listening port accept
 * the connections waiting in its backlog before closing it (see {@link acceptListenBacklog}): a busy service has a
 * few, one per client that connected during its last turn; clients that open connections without pause (no
 * keep-alive) cannot hold the port open for longer.
 */
const BACKLOG_ROUNDS_AT_SHUTDOWN = 64;

/** Optional replacements (tests): a summarizer, or environment for the summarizer settings. */
export interface SessionServiceOverrides {
  summarizer?: Summarizer;
  env?: NodeJS.ProcessEnv;
  /** Use Nest's plain logger instead of pino (quieter in tests). */
  quiet?: boolean;
}

/** proxy-addr's trust function for `hops` proxies in front of the service (what Fastify's numeric `trustProxy` means). */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/**
 * Builds and initialises (but does not listen) the service.
 * Takes the lock on `DATA_DIR` first (one service process per data directory; see `data-dir-lock.ts`).
 * @throws ConfigurationError naming the variable when the summarizer settings are invalid, `DATA_DIR` is
 *   a file or cannot be created, `SQLITE_EVENTS_FILE` is set in a directory that does not exist or this
 *   process may not write, or to a directory,
 *   another service holds that directory (naming its holder), or
 *   `KURRENTDB_CONNECTION_STRING` cannot be parsed; with NATS_URL, what `natsConnectError` gives
 *   when connecting is refused for a reason only a change fixes (a host that does not resolve,
 *   credentials, TLS; a server that is down is waited for: `NatsTransport`) and `natsSetUpError`
 *   when the streams cannot be set up; the store's errors when it cannot be opened; `refuseFullDisk`'s
 *   error (`the disk is full: …`) when DATA_DIR's or the events file's file system has less than 1 MiB free.
 */
export async function createSessionService(config: ServiceConfig, overrides: SessionServiceOverrides = {}): Promise<SessionService> {
  if (overrides.quiet) config = { ...config, logLevel: 'silent' };
  // The summarizer settings are configuration too: refused (by name) before DATA_DIR is touched.
  let summarizer: Summarizer;
  try {
    summarizer = overrides.summarizer ?? summarizerFromEnv(overrides.env ?? process.env);
  } catch (err) {
    throw asConfigurationError(err) ?? err;
  }
  // An explicit events file in a directory that does not exist is a mistyped path, not a new store; one SQLite could not open (a
  // directory, an unwritable directory or file) is refused by name, not by SQLite's "unable to open database file": before DATA_DIR is touched.
  if (eventStoreKind(config) === 'sqlite') requireEventsFileDirectory(config);
  ensureDataDir(config.dataDir);
  if (eventStoreKind(config) === 'sqlite') requireWritableClaimsDirectory(config);
  const lock = lockDataDir(config.dataDir);
  try {
    // A start on a full disk is refused (exit code 1) rather than listening while nothing can be written.
    refuseFullDisk(eventStoreKind(config) === 'sqlite' ? [config.dataDir, path.dirname(config.sqliteEventsFile)] : [config.dataDir]);
    // Files an earlier release wrote readable by other users (conversation text): no longer (data-dir-modes.ts).
    const modesWithheld = withholdModeBitsFromServiceFiles(config);
    return { ...(await buildService(config, { ...overrides, summarizer }, () => lock.release())), modesWithheld };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** Builds the service on a locked DATA_DIR; `overrides.summarizer` is set (by {@link createSessionService}). */
async function buildService(
  config: ServiceConfig,
  overrides: SessionServiceOverrides,
  releaseLock: () => void,
): Promise<Omit<SessionService, 'modesWithheld'>> {
  // Build the tokenizers' tables now (about a second of CPU), not inside the first append.
  for (const name of ESTIMATOR_NAMES) getEstimator(name);
  const summarizer = overrides.summarizer!;
  // Aborted at half of the shutdown's bound: model calls still running then fail their pass (shutdown-bound.ts).
  const shutdownAbort = new AbortController();
  const store = openEventStore(config);
  // PostgreSQL: a new database (none of the service's tables) reads as an empty log and is not set up until the checks
  // below passed: a start they refuse (read models of a log, an empty one here) leaves it as found, ready for a pg_restore.
  holdSchemaCreation(store);
  let readModels: ReadModelStore;
  // What opening the read models says (a damaged file moved aside): logged at warn by the service's logger once it exists,
  // a JSON line like every other (newcomer ncops67 F2: plain text on stderr, which a pipeline keeping JSON lines missed);
  // on stderr when the start fails before.
  const openingLines: string[] = [];
  const openingLinesOnStderr = () => {
    if (config.logLevel !== 'silent') for (const line of openingLines.splice(0)) process.stderr.write(`${line}\n`);
  };
  try {
    // A partial copy (copy-store's mark, es_copy_in_progress) is refused before anything reads its log (SQLite: at open).
    await refuseCopyInProgress(config, store);
    // A damaged read-models file is moved aside and rebuilt from the log (unless the log is empty: refused).
    readModels = await openReadModelsSettingDamageAside(config.dataDir, path.join(config.dataDir, READ_MODEL_FILE_NAME), store, {
      quickCheck: config.sqliteQuickCheck,
      say: (line) => openingLines.push(line),
    });
  } catch (err) {
    openingLinesOnStderr();
    await store.close();
    throw err;
  }
  try {
    await checkReadModelsOfThisLog(config.dataDir, store, readModels);
    // PostgreSQL: the schema is set up at start, once the checks above passed (a database set up by a newer build, one whose
    // encoding is not UTF8, one with a table of the service's names that is not its own, one whose events go past its head
    // (a collided restore), or a role denied a privilege the set-up needs, is refused here, failing the start); a server down now is set up on
    // first use, as before.
    releaseSchemaCreation(store);
    if (eventStoreKind(config) === 'postgres')
      await store.headPosition().catch((err: unknown) => {
        if (err instanceof EventStoreSchemaNewerError) throw err;
        if (err instanceof EventStoreDatabaseEncodingError) throw databaseEncodingRefusal(err, config.databaseUrl!);
        if (err instanceof EventStoreSchemaMismatchError) throw databaseSchemaMismatchRefusal(err, config.databaseUrl!);
        if (err instanceof EventStoreHeadBehindError) throw databaseHeadBehindRefusal(err, config.databaseUrl!);
        if (err instanceof EventStoreUnavailableError && isPostgresPermissionDenied(err.cause)) throw databasePrivilegeRefusal(err.cause, config.databaseUrl!);
      });
  } catch (err) {
    openingLinesOnStderr();
    readModels.close();
    await store.close();
    throw err;
  }
  // The metrics exist once the application does; the adapter's handlers are made before it.
  const bound: { metrics?: ServiceMetrics } = {};
  // Set when close() starts: from then on every new request is answered 503 shutting_down (it wrote nothing).
  const shutdown = { started: false };
  // Warn lines of requests refused before a route, rate-limited: anyone can send them. Closed at shutdown, telling the last count.
  const refusedLines = refusedRequestLines();
  const unparseableLines = unparseableRequestLines();
  // Open mode's Host refusals: one warn line per Host name per minute, naming ALLOWED_HOSTS and what to set (their own bound).
  const hostLines = foreignHostLines(config.allowedHosts);
  const adapter = new FastifyAdapter({
    bodyLimit: config.maxBodyBytes,
    // Each request's id: the client's X-Request-Id when short printable ASCII, else a UUID (request-id.ts).
    ...FASTIFY_REQUEST_ID_OPTIONS,
    // TRUST_PROXY: request.ip from X-Forwarded-For when the peer is a trusted proxy (the rate limit's client address).
    // (A hop count as proxy-addr reads a number: trust the first `hops` peers from the socket's side.)
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    // Our onRequest hook answers requests arriving during shutdown (503 shutting_down, Retry-After), not Fastify's own 503.
    return503OnClosing: false,
    // A request whose head or body does not arrive within REQUEST_TIMEOUT_MS gets 408 request_timeout (clientErrorHandler)
    // and its connection is closed. Node checks at connectionsCheckingInterval, so keep that well under the timeout.
    requestTimeout: config.requestTimeoutMs,
    http: {
      // answerMissingHost answers a request without Host in our shape (Node's own answer is a bare 400, never logged).
      requireHostHeader: false,
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(config.requestTimeoutMs / 4))),
    },
    // Every id Node lets through reaches its handler, which answers 400 invalid_session_id (or 404) naming the limit.
    // Query strings are decoded strictly: a parameter that is not valid percent-encoded UTF-8 is answered 400 (query-string.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, querystringParser: parseQueryString },
    // Answers Fastify and Node's parser give themselves: our error shape, logged and counted.
    // A foreign Host in open mode is refused 403 first, as on every route: before a path's invalid_path (foreign-host.ts).
    frameworkErrors: answerFrameworkErrors(
      () => bound.metrics,
      refusedLines,
      (request) => foreignHostRefusal(request, config, hostLines),
    ),
    clientErrorHandler: answerClientErrors(() => bound.metrics, { requestTimeoutMs: config.requestTimeoutMs }, unparseableLines),
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register(config, { store, readModels, summarizer: abortedAtShutdown(summarizer, shutdownAbort.signal) }),
    adapter,
    {
      bodyParser: false,
      bufferLogs: config.logLevel !== 'silent',
      logger: config.logLevel === 'silent' ? ['error'] : undefined,
    },
  ).catch((err: unknown) => {
    openingLinesOnStderr();
    throw err;
  });
  // Nest's own lines through the service's logger, its route-mapping lines at debug (FrameworkLogger).
  if (config.logLevel !== 'silent') app.useLogger(new FrameworkLogger(app.get(Logger)));
  for (const line of openingLines.splice(0)) new NestLogger('ReadModels').warn(line);
  // One line each time the PostgreSQL schema set-up changed the database (at start, or at first use when the server was down then).
  // (LOG_LEVEL=silent registers no pino Logger: app.get(Logger) would throw there, and nothing is logged anyway.)
  if (config.logLevel !== 'silent')
    (store as { reportSchemaChanges?: (listener: (line: string) => void) => void }).reportSchemaChanges?.((line) => app.get(Logger).log(line, 'EventStore'));
  // One error line when the SQLite store first meets a damaged page of its file (from then on it refuses every operation: 503 store_corrupt).
  if (config.logLevel !== 'silent')
    (store as { reportCorruption?: (listener: (error: Error) => void) => void }).reportCorruption?.((error) =>
      app.get(Logger).error(error.message, 'EventStore'),
    );
  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(ServiceMetrics);
  bound.metrics = metrics;
  // session_state_cache_bytes / _sessions: what the write side's cache of session states holds (SESSION_CACHE_MAX_MB bounds it).
  const sessionStates = app.get(SessionStateCache);
  metrics.registerSessionStateCache(() => ({ bytes: sessionStates.estimatedBytes, sessions: sessionStates.size }));
  // A client that half-closes (FIN) after its request reads the answer; one that half-closes inside a body reads 400 request_aborted.
  answerHalfClosedConnections(fastify.server);
  // Each request's arrival, for the write deadline (WRITE_DEADLINE_MS) its write handler checks.
  stampArrivals(fastify.server);
  // Expect other than 100-continue: 417 unsupported_expectation in our shape, logged and counted (not Node's bare 417).
  answerUnsupportedExpectations(fastify.server, () => bound.metrics, refusedLines);
  // A write request's session life, read as it is routed, before it waits for anything (WRITE_DEADLINE_MS's rule 3): not held below.
  const commandStore = app.get<EventStore>(COMMAND_EVENT_STORE);
  // The life it arrived in, also when the read ends after another replica's erasure (its store pool busy): newcomer ncrace74 F1.
  const erasureTimes = new LatestErasureTimes();
  readLivesOnArrival(fastify, {
    apiKeys: config.apiKeys,
    readLife: (tenantId, sessionId, atMs, role) => readSessionLifeAt(commandStore, erasureTimes, tenantId, sessionId, atMs, role !== 'erasure'),
  });
  // Then: a request pipelined behind another on its connection waits for that one's answer (a read sees the write ahead).
  processPipelinedInOrder(fastify, { heldBodyBytes: config.maxBodyBytes });
  // Before every hook that may answer: each answer carries its X-Request-Id.
  echoRequestIds(fastify);
  // CSP, X-Frame-Options, nosniff, Referrer-Policy on every answer from here on (/docs gets its own CSP).
  useSecurityHeaders(fastify);
  // Cache-Control: no-store on /v1 and /health answers (conversation text; the audit page's reads).
  forbidCachingOfData(fastify);
  const refusals = answerWhileShuttingDown(fastify, () => shutdown.started);
  // A request line naming HTTP/2.0, or none (HTTP/0.9's form), which Node lets through: 400 malformed_request.
  refuseUnspokenVersions(fastify, refusedLines);
  answerMissingHost(fastify, refusedLines);
  // Open development mode: 403 host_not_allowed to a Host that is not this machine's (DNS rebinding), operations routes aside;
  // once the Host is readable (one Host header, HTTP/1.x), before every other refusal of the request ("#", its path, query, key).
  refuseForeignHosts(fastify, config, hostLines);
  // A request target holding "#" (a fragment, never sent in HTTP): 400 malformed_request before the router's reading of it is used.
  refuseFragments(fastify, refusedLines);
  // A request offering an upgrade (h2c, websocket) is answered as HTTP/1.1 with Connection: close (Node reads nothing after it).
  closeAfterUpgradeOffers(fastify);
  useJsonBodies(fastify, config.maxBodyBytes);
  countAnswers(fastify, metrics);
  // The request log line names the tenant and an error answer's code (LOG_LEVEL=silent writes no request line: no hook).
  if (config.logLevel !== 'silent') logAnswerCodes(fastify);
  const routes = answerNearRoutes(fastify);
  // CONNECT (Node never hands it to Fastify): 405 method_not_allowed on its socket, closed after it.
  answerConnectRequests(fastify.server, routes, () => bound.metrics, refusedLines);
  answerBadQueryEncoding(fastify);
  // The rate limit and the API key of /v1 requests, before their body is read (after the onRequest answers above).
  checkKeyBeforeBody(fastify, {
    apiKeys: config.apiKeys,
    rateLimitPerMinute: config.rateLimitPerMinute,
    storage: app.get<ThrottlerStorage>(getStorageToken()),
  });
  // Damaged read models found: every /v1 read 503 read_models_damaged until the restart (after the key's 401).
  refuseReadsOnceDamaged(fastify, app.get(ReadModelsDamage));
  // A path no route has: 404 before its body is read or parsed (after the key's 401 under /v1).
  answerUnroutedBeforeBody(fastify);
  // A DELETE carrying a body: 400, after the key check (as the write routes' query parameters).
  refuseDeleteBodies(fastify);
  // No Nest signal handlers: main.ts closes the service on SIGTERM/SIGINT (and logs it).
  // The audit page: static files, no key needed to load them (its API calls carry the key).
  // Only the page's own files (not its tsconfig.json): anything else under /ui is 404.
  await app.register(fastifyStatic, {
    root: uiDirectory(),
    prefix: UI_PREFIX,
    index: 'index.html',
    redirect: true,
    decorateReply: false,
    allowedPath: (pathName) => isUiFile(pathName),
  });
  answerFavicon(fastify);
  const document = buildOpenApiDocument(app, config.build);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json' });
  try {
    await app.init();
  } catch (err) {
    // A start that failed (e.g. NATS refused the credentials) leaves nothing running behind it: the
    // providers already started (the projector, the scheduler) stop, the store and read models close.
    await app.close().catch(() => undefined);
    readModels.close();
    await store.close();
    throw err;
  }
  await fastify.ready();
  const nats = config.natsUrl ? app.get<NatsTransport>(NATS_TRANSPORT) : null;
  let closed = false;
  return {
    app,
    store,
    readModels,
    summarizer,
    config,
    async close(options: { drainMs?: number; timeoutMs?: number } = {}) {
      if (closed) return { refusedWhileShuttingDown: refusals.count, unfinished: [] };
      closed = true;
      const started = Date.now();
      // Connections the kernel completed before now wait in the listen backlog: accepted while the service still
      // answers as usual (a 503 with `Connection: close` would send their clients to open others meanwhile), as
      // closing the port resets them, a request possibly sent on them already.
      if (options.drainMs) await acceptListenBacklog(app.getHttpServer(), BACKLOG_ROUNDS_AT_SHUTDOWN);
      shutdown.started = true;
      const timeoutMs = options.timeoutMs ?? config.shutdownTimeoutMs;
      const left = (): number => Math.max(0, started + timeoutMs - Date.now());
      // Half-way: in-flight work stops waiting for what may not answer (a model, a NATS server).
      const halfway = setTimeout(() => {
        shutdownAbort.abort();
        nats?.stopDraining(Math.floor(timeoutMs / 2));
      }, timeoutMs / 2);
      if (options.drainMs) {
        stopAccepting(app.getHttpServer());
        await new Promise((resolve) => setTimeout(resolve, Math.min(options.drainMs!, left())));
      }
      // The refused requests' lines counted and not written yet: told now, before the logger stops.
      refusedLines.close();
      hostLines.close();
      unparseableLines.close();
      // Compaction passes in flight answer through the event bus (the failed-pass log line, the metrics), whose handlers
      // app.close() unsubscribes before any hook waits for them (Nest runs onModuleDestroy before onApplicationShutdown):
      // they end first (a model call is aborted half-way), within the bound.
      const scheduler = app.get(AutoCompactionScheduler);
      scheduler.stopWaiting();
      await settlesWithin(Promise.all([scheduler.whenIdle(), app.get(CompactSessionHandler).whenIdle()]), left());
      const unfinished: string[] = [];
      // Requests in flight, automatic compactions, the projector and NATS: each may wait on a store that does not answer.
      if (await settlesWithin(app.close(), left())) readModels.close();
      else {
        unfinished.push('in-flight requests or background work (projector, automatic compactions, NATS) waiting for the store');
        await closeReadModelsAtBound(app.get(SessionProjector), readModels);
      }
      clearTimeout(halfway);
      if (!(await settlesWithin(store.close(), left()))) unfinished.push("the event store's connections closing");
      releaseLock();
      return { refusedWhileShuttingDown: refusals.count, unfinished };
    },
  };
}
