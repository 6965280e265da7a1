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
import { READ_MODEL_SCHEMA_VERSION, SessionProjector } from '@lib/session';
import { captureLogLines } from '../support/captured-log-lines';
import { ReadModelsDamage } from '../../apps/session-service/src/observability/read-models-damage';
import { startService, type Harness } from '../support/service-harness';
import { damagePagesButCheckpoints, expectDamageShown, healthOnceDamaged, sqliteDamageError } from '../support/read-models-damage';

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

    const { problem } = await expectDamageShown(http, harness.dataDir, 'a read');
    // One error line for the damage, not one per read.
    expect(lines.filter((line) => line.startsWith('the read models file '))).toEqual([problem]);
  });

  it('once the damage is found, every /v1 read answers 503 read_models_damaged, also those that meet no damaged page; writes go on (newcomer ncdata69 F3)', async () => {
    // Before: reads not meeting a damaged page answered 200, with altered figures or a body that was not JSON
    // (SQLite keeps no checksum of a row's content), after /health had said unavailable.
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-damaged-all-')) });
    const http = harness.http;
    await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'hello damaged pages' }] })
      .expect(201);
    const reads = ['/v1/sessions', '/v1/sessions/s1', '/v1/sessions/s1/window', '/v1/sessions/s1/events', '/v1/sessions/s1/compactions', '/v1/recall?q=hello'];
    for (const read of reads) expect({ read, status: (await http().get(read)).status }).toEqual({ read, status: 200 });
    captureLogLines(['error']);
    harness.service.app.get(ReadModelsDamage).report(sqliteDamageError(harness.dataDir), 'a read');

    for (const read of reads) {
      const answer = await http().get(read);
      expect({ read, status: answer.status, code: answer.body.code }).toEqual({ read, status: 503, code: 'read_models_damaged' });
    }
    expect((await http().head('/v1/sessions/s1/window')).status).toBe(503);
    await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e2', type: 'user', text: 'written to the intact log' }] })
      .expect(201);
    expect((await http().get('/health')).body.status).toBe('unavailable');
  });

  it('read models another build rewrote under it (an old build on the same DATA_DIR) answer 503 read_models_damaged saying so, and /health says unavailable', async () => {
    // Before: 500 internal on every read of the rewritten tables while /health said ok (newcomer ncupgrade F1).
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-replaced-')) });
    const http = harness.http;
    await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'before the other build' }] })
      .expect(201);
    expect((await http().get('/v1/sessions/s1/window')).status).toBe(200);
    const lines = captureLogLines(['error']);
    // what an older build does at its start: drops the read models of another version, writes its own
    const other = new Database(path.join(harness.dataDir, 'read-models.sqlite'));
    other.exec('DROP TABLE window_entries');
    other.pragma('user_version = 20');
    other.close();

    for (let i = 0; i < 2; i++) {
      const read = await http().get('/v1/sessions/s1/window');
      expect({ status: read.status, code: read.body.code }).toEqual({ status: 503, code: 'read_models_damaged' });
      expect(read.body.message).toBe(
        `the read models file (read-models.sqlite) was rewritten by another build of the service (version 20, this build's is ${READ_MODEL_SCHEMA_VERSION}): another service process uses its DATA_DIR; stop it, then restart this service, which rebuilds the read models from the log; nothing was lost`,
      );
    }
    const health = await healthOnceDamaged(http);
    expect(health.body).toMatchObject({ status: 'unavailable', readModels: { damaged: { problem: expect.any(String) } } });
    const problem = health.body.readModels.damaged.problem as string;
    expect(
      problem.startsWith(
        `the read models file ${path.join(harness.dataDir, 'read-models.sqlite')} was rewritten by another build of the service while this one ran (`,
      ),
    ).toBe(true);
    expect(problem).toMatch(
      new RegExp(
        `\\(it holds read models version 20, this build's are version ${READ_MODEL_SCHEMA_VERSION}; SQLite: no such table: window_entries, met by a read\\): .*stop the other process, then restart this service, which rebuilds the read models from the log \\(nothing is lost\\)$`,
      ),
    );
    const ready = await http().get('/health/ready');
    expect({ status: ready.status, code: ready.body.code }).toEqual({ status: 503, code: 'read_models_damaged' });
    expect(lines.filter((line) => line.startsWith('the read models file '))).toEqual([problem]);
  });

  it('a table of this version dropped under it (another program changed the file) answers 503 read_models_damaged, and the restart rebuilds it from the log', async () => {
    // Before: 500 internal, and a restart made the table again empty: its rows were lost (newcomer ncverify48 F3).
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rm-altered-'));
    harness = await startService({ dataDir });
    const http = harness.http;
    await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'before the table was dropped' }] })
      .expect(201);
    expect((await http().get('/v1/sessions/s1/window')).status).toBe(200);
    const lines = captureLogLines(['error']);
    const other = new Database(path.join(dataDir, 'read-models.sqlite'));
    other.exec('DROP TABLE window_entries');
    other.close();

    const read = await http().get('/v1/sessions/s1/window');
    expect(read.body).toEqual({
      code: 'read_models_damaged',
      message:
        "the read models file (read-models.sqlite) lacks a table or column of this build's read models: another program changed it; restart the service, which rebuilds the read models from the log; nothing was lost",
    });
    expect(read.status).toBe(503);
    const health = await healthOnceDamaged(http);
    const problem = health.body.readModels.damaged.problem as string;
    expect(problem).toMatch(
      new RegExp(
        `^the read models file .*read-models\\.sqlite lacks a table or column of this build's read models \\(version ${READ_MODEL_SCHEMA_VERSION}; SQLite: no such table: window_entries, met by a read\\): another program changed it; .*restart the service, which rebuilds the read models from the log \\(nothing is lost\\)$`,
      ),
    );
    expect(lines.filter((line) => line.startsWith('the read models file '))).toEqual([problem]);

    await harness.stop();
    harness = await startService({ dataDir });
    const after = await harness.http().get('/v1/sessions/s1/window').expect(200);
    expect(after.body.events.map((e: { id: string }) => e.id)).toEqual(['e1']);
    expect((await harness.http().get('/health')).body.status).not.toBe('unavailable');
  });

  it('shows it too when the projector meets it applying the log; reads needing a later position then answer 503 read_models_damaged at once', async () => {
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
    const { body } = await expectDamageShown(http, harness.dataDir, 'the projector');
    expect(body).toMatchObject({ projector: { lastError: expect.stringContaining(damage.message) } });
    // before: each such read waited MAX_WAIT_MS (5 s) for a position the projector cannot reach, then 503 projection_behind "retry shortly"
    const started = performance.now();
    const read = await http().get('/v1/sessions/s1/window');
    expect({ status: read.status, code: read.body.code }).toEqual({ status: 503, code: 'read_models_damaged' });
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('shows it too when the projector meets it in its worker thread (PROJECTOR_WORKER=true): the worker posts it with the batch', async () => {
    // Before, the worker's error crossed to the main thread without SQLite's code: /health said nothing of the damage.
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-damaged-worker-')), env: { PROJECTOR_WORKER: 'true' } });
    const http = harness.http;
    const lines = captureLogLines(['warn', 'error']);
    // A first event, projected by the worker thread: its own connection has the file open (the
    // thread may take longer to start than a read's MAX_WAIT_MS: see `projected`).
    const first = await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'projected before the damage' }] })
      .expect(201);
    await harness.projected(first.body.position);
    expect((await http().get('/v1/recall?q=projected')).status).toBe(200);
    // Then the file damaged on disk, its WAL emptied first: every page but the schema's and the
    // checkpoints' (which this thread reads when the projector retries), so the damage is met in the
    // worker thread only, by its next transaction, where no spy of this thread reaches.
    damagePagesButCheckpoints(harness.service.readModels.db, path.join(harness.dataDir, 'read-models.sqlite'));
    await http()
      .post('/v1/sessions/s1/events')
      .send({ events: [{ id: 'e2', type: 'user', text: 'never projected' }] })
      .expect(201);
    const { body, problem } = await expectDamageShown(http, harness.dataDir, 'the projector');
    // SQLite's SQLITE_CORRUPT (a damaged page) or SQLITE_NOTADB (the header), as the page it reads first.
    const sqliteSays = /^SqliteError: (database disk image is malformed|file is not a database)$/;
    expect(body).toMatchObject({ projector: { lastError: expect.stringMatching(sqliteSays) } });
    expect(problem).toContain(`(SQLite: ${(body as { projector: { lastError: string } }).projector.lastError.slice('SqliteError: '.length)}, met by`);
    expect(harness.service.app.get(SessionProjector).state().readModelsDamaged).toBe(true);
    // One error line for the damage, however often the projector retries.
    expect(lines.filter((line) => line.startsWith('the read models file '))).toHaveLength(1);
  });
});
