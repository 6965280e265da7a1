/**
 * One service process per DATA_DIR, with real processes: a second process started on a DATA_DIR
 * another one holds exits with code 2 and a configuration error naming DATA_DIR, the holder's pid
 * and what to do; a holder killed with SIGKILL does not block the next start; replicas with their
 * own DATA_DIR sharing SQLITE_EVENTS_FILE both start; the read-model rebuild refuses a held DATA_DIR too. Also the start-up summary's store mode line
 * and the two lines a SIGTERM shutdown logs (the last one counting the requests refused meanwhile).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { call, REPO_ROOT, spawnService, startServiceProcess, type ServiceProcess } from '../support/service-process';

jest.setTimeout(240_000);

describe('one service process per DATA_DIR', () => {
  const dirs: string[] = [];
  const procs: ServiceProcess[] = [];

  afterAll(async () => {
    for (const p of procs) await p.kill();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  function tempDir(): string {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-lock-'));
    dirs.push(d);
    return d;
  }

  /** Starts a process on `dataDir` expected to refuse to start; resolves with its exit code and stderr. */
  async function refusedStart(dataDir: string): Promise<{ code: number | null; stderr: string }> {
    const starting = startServiceProcess({ dataDir, readyTimeoutMs: 90_000 });
    starting.ready.then(
      (svc) => procs.push(svc),
      () => undefined,
    );
    const { code } = await starting.exited;
    return { code, stderr: starting.stderr() };
  }

  it('refuses a second process on a held DATA_DIR (exit code 2, names DATA_DIR, the pid, what to do); a SIGKILLed holder does not block', async () => {
    const dir = tempDir();
    const first = await spawnService({ dataDir: dir });
    procs.push(first);
    expect((await call(first.url, 'POST', '/v1/sessions/s/events', { events: [{ id: 'u1', type: 'user', text: 'hi' }] })).status).toBe(201);

    const refused = await refusedStart(dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/configuration error: DATA_DIR=\S+: in use by another service process/);
    expect(refused.stderr).toContain(`pid ${first.pid}`);
    expect(refused.stderr).toMatch(/its own DATA_DIR.*SQLITE_EVENTS_FILE/);
    // the first is untouched
    expect((await call(first.url, 'GET', '/v1/sessions/s/events')).body.events).toHaveLength(1);

    // The read-model rebuild takes the same lock: it refuses while the service runs there.
    const rebuild = spawnSync(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/session-service/src/rebuild-read-models.ts'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DATA_DIR: dir },
        encoding: 'utf8',
        timeout: 120_000, // a synchronous child that hangs would hold the jest worker past every test timeout
      },
    );
    expect(rebuild.status).toBe(2);
    expect(rebuild.stderr).toMatch(/rebuild failed: DATA_DIR=\S+: in use by another service process \(pid \d+/);

    await first.kill(); // SIGKILL: no cleanup ran
    const next = await spawnService({ dataDir: dir });
    procs.push(next);
    expect((await call(next.url, 'GET', '/v1/sessions/s/events?minPosition=1')).body.events).toHaveLength(1);
    await next.stop();
  });

  it('starts replicas with their own DATA_DIR sharing SQLITE_EVENTS_FILE; prints the store mode; logs the SIGTERM shutdown', async () => {
    const shared = path.join(tempDir(), 'events.sqlite');
    const a = await spawnService({ dataDir: tempDir(), env: { SQLITE_EVENTS_FILE: shared, LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' } });
    procs.push(a);
    const b = await spawnService({
      dataDir: tempDir(),
      env: { SQLITE_EVENTS_FILE: shared, LOG_FORMAT: 'pretty', PROJECTOR_WORKER: 'TRUE', SQLITE_WRITER_THREAD: '0' },
    });
    procs.push(b);
    expect(a.stdout()).toMatch(/store mode: SQLITE_WRITER_THREAD on, PROJECTOR_WORKER off/);
    expect(b.stdout()).toMatch(/store mode: SQLITE_WRITER_THREAD off, PROJECTOR_WORKER on/);
    expect((await call(a.url, 'POST', '/v1/sessions/r/events', { events: [{ id: 'u1', type: 'user', text: 'hi' }] })).status).toBe(201);
    const seen = await call(b.url, 'GET', '/v1/sessions/r/events?minPosition=1');
    expect(seen.body.events).toHaveLength(1);
    // Requests sent on an open keep-alive connection while it drains get 503 shutting_down (new connections are refused, README);
    // the last line counts them (their own lines are at debug). One socket, opened before the signal.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const statusOn = () =>
      new Promise<number | null>((resolve) => {
        const req = http.get(`${a.url}/v1/sessions`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? null));
        });
        req.on('error', () => resolve(null));
      });
    expect(await statusOn()).toBe(200);
    process.kill(a.pid, 'SIGTERM');
    let refused = 0;
    for (const started = Date.now(); Date.now() - started < 3000;) {
      const status = await statusOn();
      if (status === null) break;
      if (status === 503) refused++;
    }
    agent.destroy();
    await a.exited;
    expect(refused).toBeGreaterThan(0);
    expect(a.stdout()).toMatch(/SIGTERM received: shutting down/);
    expect(a.stdout()).toMatch(new RegExp(`shut down after SIGTERM in \\d+ ms \\(${refused} new requests? answered 503 shutting_down\\)`));
    expect(a.stdout()).not.toMatch(/request completed/);
    await b.stop();
  });
});
