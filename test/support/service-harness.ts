/**
 * Starts the real service in-process on a temporary embedded store for end-to-end tests, with a
 * supertest agent, and restarts it on the same directory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import type { SummaryRequest } from '@lib/compaction';
import { loadServiceConfig, type ServiceConfig } from '../../apps/session-service/src/config/service-config';
import { createSessionService, type SessionService } from '../../apps/session-service/src/create-session-service';
import { SessionProjector, type Summarizer, type SummarizerOutcome } from '@lib/session';
import { createTestDatabase, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';

/** A running service plus helpers. */
export interface Harness {
  service: SessionService;
  dataDir: string;
  http: () => request.Agent;
  /** Stops the service (the data directory stays). */
  stop(): Promise<void>;
  /**
   * Waits until the projector has applied global position `position` (decimal text, as an append
   * answers it), up to {@link PROJECTION_WAIT_MS}: a wait for the read models, not for a time.
   * Before reads that must not answer 503 `projection_behind` for a slow start: with
   * `PROJECTOR_WORKER`, the projector's thread loads the TypeScript sources through ts-node when
   * it starts, which took 10–25 s on a loaded 2-core machine with an empty transpile cache (as
   * after `npm ci`), past a read's `MAX_WAIT_MS` (5 s).
   * @throws Error naming the checkpoint reached when it does not apply it within that.
   */
  projected(position: string): Promise<void>;
}

/** The longest {@link Harness.projected} waits, in ms: jest's per-test limit (jest.config.js). */
export const PROJECTION_WAIT_MS = 60_000;

/** Options of {@link startService}. */
export interface HarnessOptions {
  dataDir?: string;
  env?: Record<string, string>;
  summarizer?: Summarizer;
  /** Changes the configuration loaded from `env` before the service starts (e.g. another `build`, which no variable sets). */
  configure?: (config: ServiceConfig) => ServiceConfig;
}

/** Starts a service on `options.dataDir` (a new temp dir by default). */
export async function startService(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'session-e2e-'));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    API_KEYS: undefined,
    RATE_LIMIT_PER_MINUTE: '0',
    KURRENTDB_CONNECTION_STRING: undefined,
    DATABASE_URL: undefined,
    ...options.env,
  };
  const config = loadServiceConfig(env);
  const service = await createSessionService(options.configure ? options.configure(config) : config, { quiet: true, summarizer: options.summarizer, env: {} });
  const server = service.app.getHttpServer();
  return {
    service,
    dataDir,
    http: () => request.agent(server),
    stop: async () => {
      await service.close();
    },
    projected: async (position) => {
      const projector = service.app.get(SessionProjector);
      if (!(await projector.waitForPosition(BigInt(position), PROJECTION_WAIT_MS)))
        throw new Error(`the projector did not apply position ${position} within ${PROJECTION_WAIT_MS} ms (it is at ${projector.checkpoint()})`);
    },
  };
}

/**
 * A summarizer for tests: counts calls, records requests, and can hold each call until
 * `release()` so a test can append while a compaction is in flight.
 */
export class ControlledSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'test-controlled' };
  readonly requests: SummaryRequest[] = [];
  private gate: Promise<void> | null = null;
  private open: (() => void) | null = null;
  private entered: (() => void) | null = null;

  constructor(private readonly reply: (request: SummaryRequest) => string = (r) => `SUMMARY of ${r.coveredIds.length} events`) {}

  /** Makes the next calls wait until {@link release}. Resolves when a call is waiting. */
  hold(): Promise<void> {
    this.gate = new Promise((resolve) => (this.open = resolve));
    return new Promise((resolve) => (this.entered = resolve));
  }

  /** Lets held calls finish. */
  release(): void {
    this.open?.();
    this.gate = null;
  }

  get calls(): number {
    return this.requests.length;
  }

  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    this.requests.push(request);
    if (this.gate) {
      this.entered?.();
      await this.gate;
    }
    const text = this.reply(request);
    return { ok: true, text, calls: 1, promptTokens: 10, completionTokens: 5 };
  }
}

/** The service of a `describe` block (see {@link useService}): a {@link Harness} that can also be started again. */
export interface ServiceInUse extends Harness {
  /** Starts the service again on the same data directory with the same options (after {@link Harness.stop}). */
  start(): Promise<void>;
  /** Stops the service and starts it again on the same data directory. */
  restart(): Promise<void>;
}

/**
 * Starts a service (see {@link startService}) before the tests of the enclosing `describe` and
 * stops it after them, removing its data directory unless `options.dataDir` was given. `options`
 * may be a function, called in the `beforeAll` (after hooks declared earlier, e.g. a fake server
 * that must be listening first). The returned harness is usable inside tests only.
 */
export function useService(options: HarnessOptions | (() => HarnessOptions) = {}): ServiceInUse {
  let current: Harness | null = null;
  let running = false;
  let resolved: HarnessOptions = {};
  const harness = (): Harness => {
    if (!current) throw new Error('useService: the service starts in beforeAll; use it inside a test or a later hook');
    return current;
  };
  const start = async (): Promise<void> => {
    current = await startService({ ...resolved, dataDir: current?.dataDir ?? resolved.dataDir });
    running = true;
  };
  const stop = async (): Promise<void> => {
    if (running) await harness().stop();
    running = false;
  };
  beforeAll(async () => {
    resolved = typeof options === 'function' ? options() : options;
    await start();
  });
  afterAll(async () => {
    await stop();
    if (current && !resolved.dataDir) fs.rmSync(current.dataDir, { recursive: true, force: true });
  });
  return {
    get service() {
      return harness().service;
    },
    get dataDir() {
      return harness().dataDir;
    },
    http: () => harness().http(),
    projected: (position) => harness().projected(position),
    stop,
    start,
    restart: async () => {
      await stop();
      await start();
    },
  };
}

/** The service of {@link usePostgresService}: a {@link ServiceInUse} plus the database it runs on. */
export interface PostgresServiceInUse extends ServiceInUse {
  /** The test database the service stores its events in (`db.url` for a client of the test's own). */
  readonly db: TestDatabase;
}

/**
 * {@link useService} on a PostgreSQL database of its own. Registers in the enclosing `describe`:
 * - a `beforeAll` that creates the empty database `<dbName>_<random hex>` on the test server
 *   ({@link createTestDatabase}: `POSTGRES_TEST_URL`, default the shared server at 127.0.0.1:5432),
 *   then starts the service with `DATABASE_URL` set to it (and `options`, as for {@link useService},
 *   on a new temporary data directory unless `options.dataDir` is given);
 * - `afterAll`s that stop the service and remove its temporary data directory, then drop the
 *   database (`WITH (FORCE)`), whatever of that the `beforeAll` got to create.
 * It does not skip by itself: call it inside `describeUnlessSkipped(postgresUnavailableReason(), …)`,
 * which prints one line and skips the block when no PostgreSQL answers, except with `CI` set, where
 * an unreachable server fails the tests. Hooks declared after the call run after the service started.
 * The returned harness and its `db` are usable inside tests or later hooks only.
 */
export function usePostgresService(dbName: string, options: HarnessOptions = {}): PostgresServiceInUse {
  let db: TestDatabase | null = null;
  const database = (): TestDatabase => {
    if (!db)
      throw new Error(`usePostgresService: no database ${dbName} yet: it is created in beforeAll (unless that failed); use it inside a test or a later hook`);
    return db;
  };
  beforeAll(async () => {
    db = await createTestDatabase(dbName);
  });
  const service = useService(() => ({ ...options, env: { ...options.env, DATABASE_URL: database().url } }));
  afterAll(async () => {
    await db?.drop();
  });
  return Object.defineProperties(service, { db: { get: database, enumerable: true } }) as PostgresServiceInUse;
}
