/**
 * The application module: HTTP controllers, API-key guard, rate limits, logging and metrics on top
 * of the session library (given the store, read models and summarizer by {@link createSessionService}).
 */
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { LoggerModule } from 'nestjs-pino';
import type { FastifyRequest } from 'fastify';
import * as path from 'node:path';
import { READ_MODEL_FILE_NAME, SessionModule, SessionProjector, type SessionModuleOptions } from '@lib/session';
import { NATS_TRANSPORT, SERVICE_CONFIG } from './config/tokens';
import type { ServiceConfig } from './config/service-config';
import { SessionsController } from './http/sessions.controller';
import { RecallController } from './http/recall.controller';
import { SessionHistoryController } from './http/session-history.controller';
import { ErasuresController } from './http/erasures.controller';
import { ApiErrorFilter } from './http/api-error.filter';
import { RateLimitGuard } from './http/rate-limit.guard';
import { HealthController } from './observability/health.controller';
import { requestIdOf } from './observability/request-id';
import { StoreWriteHealth } from './observability/store-write-health';
import { ReadModelsDamage } from './observability/read-models-damage';
import { ErasureOnDisk, type WalScrubbingStore } from './observability/erasure-on-disk';
import { ServiceMetrics } from './observability/metrics';
import { requestLogLevelOptions } from './observability/request-log-level';
import { requestLogSerializers } from './observability/request-log';
import { FAVICON_PATH } from './http/ui-assets';
import { CompactionMetricsHandler } from './observability/compaction-metrics.handler';
import { appendedEventsMetrics } from './observability/appended-events-metrics';
import { SummarizerFailureLog } from './observability/summarizer-failure-log';
import { ApiKeyGuard } from './auth/api-key.guard';
import { RATE_LIMIT_THROTTLER, RATE_LIMIT_WINDOW_MS, rateLimitKey, rateLimitTracker } from './http/rate-limit-budget';
import type { NatsTransport } from './nats/nats-transport';

/** The NATS transport's class, loaded only when `NATS_URL` is set: otherwise the NATS client is never loaded. */
function natsTransport(): typeof NatsTransport {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./nats/nats-transport') as typeof import('./nats/nats-transport')).NatsTransport;
}

/** The root module; build it with {@link AppModule.register}. */
@Module({})
export class AppModule {
  /** The module for `config` and the session library's dependencies. */
  static register(config: ServiceConfig, session: SessionModuleOptions): DynamicModule {
    const throttle = config.rateLimitPerMinute > 0;
    // Made here, not by the injector: the store the session library writes through is observed from the start.
    const metrics = new ServiceMetrics();
    // session_service_build_info{version, commit, node_version} 1: which build runs.
    metrics.registerBuildInfo(config.build);
    const writes = new StoreWriteHealth((code) => metrics.storeWriteFailures.inc({ code }));
    // PostgreSQL: the pool's connections, read at each scrape (absent for a store without a pool).
    if (session.store.poolConnections) metrics.registerPoolConnections(() => session.store.poolConnections!());
    // The model summarizer: the endpoint's rate-limit pause, read at each scrape (absent for the extractive one).
    if (session.summarizer.pauseRemainingMs) metrics.registerSummarizerPause(() => session.summarizer.pauseRemainingMs!());
    return {
      module: AppModule,
      imports: [
        // With LOG_LEVEL=silent the HTTP logging middleware is left out altogether (it costs even when silent).
        ...(config.logLevel === 'silent'
          ? []
          : [
              LoggerModule.forRoot({
                pinoHttp: {
                  level: config.logLevel,
                  // Human-readable on a terminal, JSON lines otherwise (LOG_FORMAT).
                  ...(config.logFormat === 'pretty'
                    ? { transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
                    : {}),
                  // One line per request at REQUEST_LOG_LEVEL (debug unless asked); 503 at warn, server errors at error;
                  // 503 shutting_down at debug (main.ts logs their count); no 503 carries pino-http's made-up error and stack.
                  ...requestLogLevelOptions(config.requestLogLevel as 'debug'),
                  // Never log keys or bodies: only method, path, status and timing.
                  redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
                  serializers: requestLogSerializers,
                  // The request's id as Fastify has it (the client's X-Request-Id when usable): req.id on the line.
                  genReqId: requestIdOf,
                  autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/metrics' || req.url === FAVICON_PATH },
                },
              }),
            ]),
        ThrottlerModule.forRoot({
          // Every /v1 request is counted before its body is read (key-check-before-body.ts, with this module's
          // storage); the guard counts only what that check did not (rate-limit.guard.ts), with the same budgets.
          throttlers: [{ name: RATE_LIMIT_THROTTLER, ttl: RATE_LIMIT_WINDOW_MS, limit: throttle ? config.rateLimitPerMinute : Number.MAX_SAFE_INTEGER }],
          skipIf: () => !throttle,
          getTracker: (req: Record<string, unknown>) => rateLimitTracker(req as unknown as FastifyRequest, config.apiKeys),
          generateKey: (_context, tracker, throttlerName) => rateLimitKey(tracker, throttlerName),
        }),
        SessionModule.forRoot({
          projector: { worker: config.projectorWorker },
          ...session,
          // Every store call of a command (its loads and checks as well as its append or deletion) is observed: /health's
          // store.lastWriteError, event_store_writable, one warn line per outage. The queries' and the projector's reads are not.
          commandStore: (store) => writes.observing(store),
          // events_appended_total: the conversation events each append writes (an import's progress).
          appendedEvents: appendedEventsMetrics(metrics),
          countingDeadlineMs: config.countingDeadlineMs,
          sessionCacheMaxBytes: config.sessionCacheMaxMb * 1024 * 1024,
          settings: {
            autoCompactionMaxFailures: config.autoCompactionMaxFailures,
            autoCompactionBackoffMs: config.autoCompactionBackoffMs,
            compactionClaimPollMs: config.compactionClaimPollMs,
            autoCompactionClaimMaxWaitMs: config.autoCompactionClaimMaxWaitMs,
            compactionCommandClaimMaxWaitMs: config.compactionCommandClaimMaxWaitMs,
            // the longest text an event may hold bounds the summaries too (DESIGN §3.7)
            maxTextLength: config.maxTextLength,
            maxWaitMs: config.maxWaitMs,
            ...session.settings,
          },
        }),
      ],
      controllers: [SessionHistoryController, ErasuresController, SessionsController, RecallController, HealthController],
      providers: [
        { provide: SERVICE_CONFIG, useValue: config },
        { provide: ServiceMetrics, useValue: metrics },
        { provide: StoreWriteHealth, useValue: writes },
        {
          provide: ReadModelsDamage,
          // Before the projector starts (application bootstrap): its damage, on the event loop or in its worker thread, is reported as it is met.
          useFactory: (projector: SessionProjector) => {
            const damage = new ReadModelsDamage(path.join(config.dataDir, READ_MODEL_FILE_NAME), projector.store);
            projector.onReadModelsDamage((error) => damage.report(error, 'the projector'));
            return damage;
          },
          inject: [SessionProjector],
        },
        {
          provide: ErasureOnDisk,
          // The raw store (not the observed wrapper): the SQLite store's WAL scrub after erasures; the read models' own.
          useFactory: (projector: SessionProjector) => {
            const erasure = new ErasureOnDisk(config.dataDir, [session.store as Partial<WalScrubbingStore>, projector.store]);
            // Erasures made since the start, not the records a rebuild or the start-up catch-up replays (newcomer ncdata69 F4).
            const startedAt = Date.now();
            projector.onErasure((_tenant, _session, recordedAt) => {
              if (recordedAt.getTime() >= startedAt) erasure.erased();
            });
            return erasure;
          },
          inject: [SessionProjector],
        },
        CompactionMetricsHandler,
        SummarizerFailureLog,
        ApiKeyGuard,
        // Without a limit the guard would answer true to every request, asynchronously (a promise and Nest's wait for it per request): left out.
        ...(throttle ? [{ provide: APP_GUARD, useClass: RateLimitGuard }] : []),
        { provide: APP_FILTER, useClass: ApiErrorFilter },
        // Commands and decisions over NATS JetStream, only when NATS_URL is set.
        ...(config.natsUrl ? [natsTransport(), { provide: NATS_TRANSPORT, useExisting: natsTransport() }] : []),
      ],
    };
  }
}
