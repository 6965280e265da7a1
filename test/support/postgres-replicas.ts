/**
 * Two replicas (in-process services, each with its own data directory, write-side cache and read
 * models) on one throwaway PostgreSQL database, for the specs of what one replica must take from
 * the other's writes (stale state, erasures, claims, read-your-writes).
 */
import * as fs from 'node:fs';
import type { Summarizer } from '@lib/session';
import { createTestDatabase, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from './service-harness';

/** What {@link usePostgresReplicas} started: set once its `beforeAll` has run (read it inside tests or later hooks). */
export interface PostgresReplicas {
  /** The database both replicas write to (`db.url` for a store of the test's own on it). */
  db: TestDatabase;
  /** Replica A, started first. */
  a: Harness;
  /** Replica B, started once A has. */
  b: Harness;
}

/** Options of {@link usePostgresReplicas}. */
export interface PostgresReplicasOptions {
  /** More environment for both replicas (e.g. `COMPACTION_CLAIM_POLL_MS`); `DATABASE_URL` is the new database's. */
  env?: Record<string, string>;
  /** Replica A's model (default: the service's own). */
  summarizerA?: Summarizer;
  /** Replica B's model (default: the service's own). */
  summarizerB?: Summarizer;
}

/**
 * Registers in the enclosing `describe` (call it there, inside `describeUnlessSkipped` when
 * PostgreSQL may be missing):
 * - a `beforeAll` that creates the database `<dbName>_<random hex>` ({@link createTestDatabase})
 *   and starts replica A, then B, on it ({@link startService} with `DATABASE_URL`, each on a new
 *   temporary data directory);
 * - an `afterAll` that stops A, then B, drops the database and removes both data directories
 *   (whatever of that the `beforeAll` got to start).
 * The tests need nothing else to stop them. Returns the object the `beforeAll` fills in.
 */
export function usePostgresReplicas(dbName: string, options: PostgresReplicasOptions = {}): PostgresReplicas {
  const replicas: Partial<PostgresReplicas> = {};
  beforeAll(async () => {
    replicas.db = await createTestDatabase(dbName);
    const env = { ...options.env, DATABASE_URL: replicas.db.url };
    replicas.a = await startService({ env, summarizer: options.summarizerA });
    replicas.b = await startService({ env, summarizer: options.summarizerB });
  });
  afterAll(async () => {
    const { a, b, db } = replicas;
    await a?.stop();
    await b?.stop();
    await db?.drop();
    for (const h of [a, b]) if (h) fs.rmSync(h.dataDir, { recursive: true, force: true });
  });
  return replicas as PostgresReplicas;
}
