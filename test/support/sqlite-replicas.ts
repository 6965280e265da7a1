/**
 * Two replicas (in-process services, each with its own data directory, write-side cache and read
 * models) on one SQLite store file (`SQLITE_EVENTS_FILE`), as {@link usePostgresReplicas} on one
 * PostgreSQL database: two store instances of one process on one file (claims must exclude each
 * other there too, as they do across processes).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PostgresReplicasOptions } from './postgres-replicas';
import { startService, type Harness } from './service-harness';

/** What {@link useSqliteReplicas} started: set once its `beforeAll` has run (read it inside tests or later hooks). */
export interface SqliteReplicas {
  /** The store file both replicas write to. */
  file: string;
  /** Replica A, started first. */
  a: Harness;
  /** Replica B, started once A has. */
  b: Harness;
}

/**
 * Registers in the enclosing `describe` a `beforeAll` that starts replica A, then B, on a new
 * store file in a new temporary directory (each on a new temporary data directory), and an
 * `afterAll` that stops them and removes the directories. Returns the object the `beforeAll` fills in.
 */
export function useSqliteReplicas(options: PostgresReplicasOptions = {}): SqliteReplicas {
  const replicas: Partial<SqliteReplicas> = {};
  let root: string | undefined;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'session-e2e-shared-'));
    replicas.file = path.join(root, 'events.sqlite');
    const env = { ...options.env, SQLITE_EVENTS_FILE: replicas.file };
    replicas.a = await startService({ env, summarizer: options.summarizerA });
    replicas.b = await startService({ env, summarizer: options.summarizerB });
  });
  afterAll(async () => {
    const { a, b } = replicas;
    await a?.stop();
    await b?.stop();
    for (const dir of [a?.dataDir, b?.dataDir, root]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return replicas as SqliteReplicas;
}
