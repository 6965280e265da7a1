/**
 * Damaged read models found while the service runs: a read meeting a damaged page answers 503
 * `read_models_damaged`, and from then on `/health` says `unavailable` with `readModels.damaged`
 * (the file and the remedy: restart), `/health/ready` answers 503 `read_models_damaged` and
 * `/metrics` `read_models_damaged 1`, until the restart. Before, `/health` said ok while reads
 * answered 503. The damage is SQLite's own error (`SQLITE_NOTADB` from a file that is not a
 * database) thrown where the read models' reads run: a real damaged page is met only once the file
 * is larger than SQLite's page cache (see libs/event-store/test/sqlite-corruption.spec.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { captureLogLines } from '../support/captured-log-lines';
import { startService, type Harness } from '../support/service-harness';

/** SQLite's error for a file that is not a database, as better-sqlite3 throws it. */
function sqliteDamageError(dir: string): Error {
  const file = path.join(dir, 'not-a-database');
  fs.writeFileSync(file, Buffer.alloc(8192, 0x5a));
  try {
    new Database(file).prepare('SELECT 1').get();
  } catch (err) {
    return err as Error;
  }
  throw new Error('SQLite read a file of garbage as a database');
}

describe('read models found damaged while the service runs', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('/health says unavailable with readModels.damaged naming the file and the restart, /health/ready 503, /metrics read_models_damaged 1', async () => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-damaged-')) });
    const http = harness.http;
    const metric = async (name: string): Promise<string | undefined> =>
      ((await http().get('/metrics')).text.split('\n').find((line) => line.startsWith(`${name} `)) ?? '').split(' ')[1];
    await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'hello damaged pages' }] })
      .expect(201);
    expect((await http().get('/v1/recall?q=hello')).status).toBe(200);
    expect((await http().get('/health')).body).toMatchObject({ status: 'ok', readModels: { damaged: null } });
    expect(await metric('read_models_damaged')).toBe('0');

    const damage = sqliteDamageError(harness.dataDir);
    expect((damage as { code?: string }).code).toBe('SQLITE_NOTADB');
    const lines = captureLogLines(['error']);
    jest.spyOn(harness.service.readModels, 'snapshot').mockImplementation(() => {
      throw damage;
    });
    for (let i = 0; i < 2; i++) {
      const read = await http().get('/v1/recall?q=hello');
      expect({ status: read.status, code: read.body.code }).toEqual({ status: 503, code: 'read_models_damaged' });
    }

    const health = await http().get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'unavailable',
      store: { error: null, lastWriteError: null },
      readModels: { damaged: { problem: expect.any(String), at: expect.any(String) } },
    });
    const problem = (health.body as { readModels: { damaged: { problem: string } } }).readModels.damaged.problem;
    expect(problem).toContain(path.join(harness.dataDir, 'read-models.sqlite'));
    expect(problem).toMatch(
      /is damaged \(SQLite: .+, met by a read\): reads meeting it answer 503 read_models_damaged, and the projector cannot apply the log to it; restart the service, which moves the file aside and rebuilds it from the log/,
    );
    const ready = await http().get('/health/ready');
    expect({ status: ready.status, code: ready.body.code }).toEqual({ status: 503, code: 'read_models_damaged' });
    expect(await metric('read_models_damaged')).toBe('1');
    // One error line for the damage, not one per read.
    expect(lines.filter((line) => line.startsWith('the read models file '))).toEqual([problem]);
  });

  it('shows it too when the projector meets it applying the log (reads then wait for it: 503 projection_behind)', async () => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-damaged-projector-')) });
    const http = harness.http;
    const damage = sqliteDamageError(harness.dataDir);
    captureLogLines(['warn', 'error']);
    jest.spyOn(harness.service.readModels, 'transaction').mockImplementation(() => {
      throw damage;
    });
    await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'never projected' }] })
      .expect(201);
    const deadline = Date.now() + 10_000;
    let health = await http().get('/health');
    while (health.body.readModels.damaged === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      health = await http().get('/health');
    }
    expect(health.body).toMatchObject({
      status: 'unavailable',
      projector: { lastError: expect.stringContaining(damage.message) },
      readModels: { damaged: { problem: expect.stringMatching(/is damaged \(SqliteError: .+, met by the projector\): .*restart the service/) } },
    });
    const ready = await http().get('/health/ready');
    expect({ status: ready.status, code: ready.body.code }).toEqual({ status: 503, code: 'read_models_damaged' });
  });
});
