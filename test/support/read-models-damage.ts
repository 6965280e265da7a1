/**
 * Helpers for specs of damaged read models met while the service runs: SQLite's own error for a
 * damaged file, a read-models file damaged on disk, and `/health` once it shows the damage.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import type request from 'supertest';

/** SQLite's error for a file that is not a database (`SQLITE_NOTADB`), as better-sqlite3 throws it; writes the file `not-a-database` under `dir`. */
export function sqliteDamageError(dir: string): Error {
  const file = path.join(dir, 'not-a-database');
  fs.writeFileSync(file, Buffer.alloc(8192, 0x5a));
  try {
    new Database(file).prepare('SELECT 1').get();
  } catch (err) {
    return err as Error;
  }
  throw new Error('SQLite read a file of garbage as a database');
}

/**
 * Overwrites every page of the read models file `file` (open as `db`) with garbage but page 1 (the
 * header and schema) and those of `projector_checkpoints` (its table and index, one page each while
 * small), after emptying the WAL into the file: the checkpoint is still read on `db`'s connection,
 * while another connection's next transaction on the rows meets the damage.
 */
export function damagePagesButCheckpoints(db: Database.Database, file: string): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const kept = new Set([1, ...db.prepare("SELECT rootpage FROM sqlite_master WHERE tbl_name = 'projector_checkpoints'").pluck().all()].map(Number));
  const pages = fs.statSync(file).size / pageSize;
  const fd = fs.openSync(file, 'r+');
  try {
    for (let page = 1; page <= pages; page++) if (!kept.has(page)) fs.writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (page - 1) * pageSize);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `GET /health` of the service `http` reaches, asked every 100 ms until its `readModels.damaged` is
 * set or 10 s passed: the last answer (the caller asserts on it).
 */
export async function healthOnceDamaged(http: () => request.Agent): Promise<request.Response> {
  const deadline = Date.now() + 10_000;
  let health = await http().get('/health');
  while (health.body.readModels.damaged === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    health = await http().get('/health');
  }
  return health;
}

/**
 * Asserts what the service `http` reaches shows once its read models (`dataDir/read-models.sqlite`)
 * were found damaged by `metBy` (as `ReadModelsDamage` names it, e.g. `a read`): `/health` 200
 * `unavailable` with the store fine and `readModels.damaged` naming the file, SQLite's message, what
 * met it and the restart (asked until it shows, {@link healthOnceDamaged}); `/health/ready` 503
 * `read_models_damaged`; `/metrics` `read_models_damaged 1`. Returns `/health`'s body and the problem.
 */
export async function expectDamageShown(
  http: () => request.Agent,
  dataDir: string,
  metBy: string,
): Promise<{ body: Record<string, unknown>; problem: string }> {
  const health = await healthOnceDamaged(http);
  expect(health.status).toBe(200);
  expect(health.body).toMatchObject({
    status: 'unavailable',
    store: { error: null, lastWriteError: null },
    readModels: { damaged: { problem: expect.any(String), at: expect.any(String) } },
  });
  const problem = (health.body as { readModels: { damaged: { problem: string } } }).readModels.damaged.problem;
  expect(problem).toContain(path.join(dataDir, 'read-models.sqlite'));
  expect(problem).toMatch(
    new RegExp(
      `is damaged \\(SQLite: .+, met by ${metBy}\\): reads meeting it answer 503 read_models_damaged, and the projector cannot apply the log to it; restart the service, which moves the file aside and rebuilds it from the log`,
    ),
  );
  const ready = await http().get('/health/ready');
  expect({ status: ready.status, code: ready.body.code }).toEqual({ status: 503, code: 'read_models_damaged' });
  const metric = (await http().get('/metrics')).text.split('\n').find((line) => line.startsWith('read_models_damaged '));
  expect(metric).toBe('read_models_damaged 1');
  return { body: health.body as Record<string, unknown>, problem };
}
