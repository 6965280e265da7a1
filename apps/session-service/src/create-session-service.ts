/**
 * Builds the whole service for a configuration: the event store (embedded SQLite under DATA_DIR,
 * KurrentDB, or PostgreSQL), the read models, the summarizer, and the NestJS application with its OpenAPI
 * document at `/docs`. Used by `main.ts`, the end-to-end tests and the CLI tools.
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { ESTIMATOR_NAMES, getEstimator } from '@lib/compaction';
import { createEventStore, type EventStore } from '@lib/event-store';
import { READ_MODEL_FILE_NAME, ReadModelStore, summarizerFromEnv, type Summarizer } from '@lib/session';
import { AppModule } from './app.module';
import { useJsonBodies } from './http/json-body';
import { toApiError } from './http/api-error.filter';
import { ServiceMetrics } from './observability/metrics';
import { countAnswers } from './observability/http-metrics';
import { buildOpenApiDocument } from './http/openapi-document';
import { UI_PREFIX, uiDirectory } from './http/ui-assets';
import type { ServiceConfig } from './config/service-config';
import { eventStoreConfig } from './config/event-store-config';

const INVALID_PATH = { code: 'invalid_path', message: 'the URL path is not valid percent-encoded UTF-8' };

/** A built service. `close()` stops the app, then closes the read models and the store. */
export interface SessionService {
  app: NestFastifyApplication;
  store: EventStore;
  readModels: ReadModelStore;
  summarizer: Summarizer;
  config: ServiceConfig;
  close(): Promise<void>;
}

/** Optional replacements (tests): a summarizer, or environment for the summarizer settings. */
export interface SessionServiceOverrides {
  summarizer?: Summarizer;
  env?: NodeJS.ProcessEnv;
  /** Use Nest's plain logger instead of pino (quieter in tests). */
  quiet?: boolean;
}

/**
 * Builds and initialises (but does not listen) the service.
 * @throws Error naming the variable when the summarizer settings are invalid; the store's errors when it cannot be opened.
 */
export async function createSessionService(config: ServiceConfig, overrides: SessionServiceOverrides = {}): Promise<SessionService> {
  if (overrides.quiet) config = { ...config, logLevel: 'silent' };
  fs.mkdirSync(config.dataDir, { recursive: true });
  // Build the tokenizers' tables now (about a second of CPU), not inside the first append.
  for (const name of ESTIMATOR_NAMES) getEstimator(name);
  const summarizer = overrides.summarizer ?? summarizerFromEnv(overrides.env ?? process.env);
  const store = createEventStore(eventStoreConfig(config));
  const readModels = ReadModelStore.open(path.join(config.dataDir, READ_MODEL_FILE_NAME));
  const adapter = new FastifyAdapter({
    bodyLimit: config.maxBodyBytes,
    // Long ids reach the handlers, which answer 400 invalid_session_id with the limit (the router's default cut is 100 characters).
    routerOptions: { maxParamLength: 4096 },
    // A path that is not valid percent-encoded UTF-8 gets our error shape, not Fastify's.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const { status, body } = error.code === 'FST_ERR_BAD_URL' ? { status: 400, body: INVALID_PATH } : toApiError(error);
      void reply.code(status).send(body);
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register(config, { store, readModels, summarizer }), adapter, {
    bodyParser: false,
    bufferLogs: config.logLevel !== 'silent',
    logger: config.logLevel === 'silent' ? ['error'] : undefined,
  });
  if (config.logLevel !== 'silent') app.useLogger(app.get(Logger));
  const fastify = app.getHttpAdapter().getInstance();
  useJsonBodies(fastify, config.maxBodyBytes);
  countAnswers(fastify, app.get(ServiceMetrics));
  app.enableShutdownHooks();
  // The audit page: static files, no key needed to load them (its API calls carry the key).
  await app.register(fastifyStatic, { root: uiDirectory(), prefix: UI_PREFIX, index: 'index.html', redirect: true, decorateReply: false });
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json' });
  await app.init();
  await fastify.ready();
  let closed = false;
  return {
    app,
    store,
    readModels,
    summarizer,
    config,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      readModels.close();
      await store.close();
    },
  };
}
