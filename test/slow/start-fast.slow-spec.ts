/**
 * `npm start` builds once and starts fast when the build is current, and its output is readable
 * (issue 17 item 10), on a copy of the sources in a temporary directory (its own `dist/`):
 *
 * - the first start (clean build) compiles; the second compiles nothing (the build's outputs are
 *   untouched) and answers `/health` sooner; both times are printed;
 * - stdout that is not a terminal holds JSON log lines only (npm's own `> …` header aside);
 *   request lines are not logged at LOG_LEVEL=info (they are at debug: see startup-and-logs);
 * - LOG_FORMAT=pretty prints the start-up lines as plain text and the logs as readable lines.
 *
 * Runtime: about 30 s on a quiet 2-core machine (one clean build of the service), up to 90 s
 * under load.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT, call, spawnService, type ServiceProcess } from '../support/service-process';

jest.setTimeout(300_000);

const COPIED = ['apps', 'libs', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
/** The service's release, as the `listening on` line names it (read from package.json by the built service too). */
const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version.replaceAll('.', '\\.');
const MAIN_JS = path.join('dist', 'apps', 'session-service', 'src', 'main.js');

/** Starts `npm start` in `cwd` and resolves with the process and the time to its first 200 from /health (ms). */
async function startTimed(cwd: string, dataDir: string, env: Record<string, string>): Promise<{ svc: ServiceProcess; ms: number }> {
  const t0 = performance.now();
  const svc = await spawnService({ dataDir, cwd, command: ['npm', 'start'], env: { TS_NODE_TRANSPILE_ONLY: '', ...env }, readyTimeoutMs: 240_000 });
  for (let attempt = 0; attempt < 500; attempt++) {
    const health = await call(svc.url, 'GET', '/health').catch(() => null);
    if (health?.status === 200) return { svc, ms: performance.now() - t0 };
    await new Promise((r) => setTimeout(r, 20));
  }
  await svc.kill();
  throw new Error(`no answer from ${svc.url}/health\n${svc.stdout()}`);
}

/** stdout lines that are not npm's script header. */
function serviceLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('> '));
}

describe('npm start: build once, start fast, readable logs', () => {
  let root: string;
  const procs: ServiceProcess[] = [];

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'start-fast-'));
    for (const entry of COPIED) fs.cpSync(path.join(REPO_ROOT, entry), path.join(root, entry), { recursive: true });
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    for (const p of procs) await p.kill();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('compiles on a clean copy, then starts without compiling; JSON lines only, no request lines at info', async () => {
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
    const first = await startTimed(root, path.join(root, 'data1'), { LOG_LEVEL: 'info' });
    procs.push(first.svc);
    for (let i = 0; i < 3; i++)
      expect((await call(first.svc.url, 'POST', '/v1/sessions/s1/events', { events: [{ type: 'user', text: 'hello' }] })).status).toBe(201);
    expect((await call(first.svc.url, 'GET', '/v1/sessions/s1/window')).status).toBe(200);
    await first.svc.stop();
    const built = fs.statSync(path.join(root, MAIN_JS)).mtimeMs;
    expect(fs.existsSync(path.join(root, 'dist', '.tsbuildinfo'))).toBe(true);

    const lines = serviceLines(first.svc.stdout());
    expect(lines.length).toBeGreaterThan(3);
    const records = lines.map((line) => {
      try {
        return JSON.parse(line) as { msg?: string; level?: number };
      } catch {
        throw new Error(`stdout line is not JSON: ${line.slice(0, 200)}`);
      }
    });
    expect(records.map((r) => r.msg)).toEqual(
      expect.arrayContaining([
        // The copy has no .git and no BUILD_COMMIT is set: the commit is unknown; the version is package.json's, found from dist/.
        expect.stringMatching(new RegExp(`^session memory compaction service ${VERSION} \\(commit unknown, Node v[\\d.]+\\) listening on http:`)),
        expect.stringMatching(/^open development mode/),
      ]),
    );
    expect(first.svc.stdout()).not.toContain('request completed');
    expect(first.svc.stdout()).not.toContain('/v1/sessions/s1');

    const second = await startTimed(root, path.join(root, 'data2'), { LOG_LEVEL: 'info' });
    procs.push(second.svc);
    await second.svc.stop();
    expect(fs.statSync(path.join(root, MAIN_JS)).mtimeMs).toBe(built);
    process.stdout.write(`time to first /health: clean build ${(first.ms / 1000).toFixed(1)} s, second start ${(second.ms / 1000).toFixed(1)} s\n`);
    expect(second.ms).toBeLessThan(first.ms);
  });

  it('LOG_FORMAT=pretty: plain start-up lines and readable log lines, requests at debug', async () => {
    const { svc } = await startTimed(root, path.join(root, 'data3'), { LOG_FORMAT: 'pretty', LOG_LEVEL: 'debug', BUILD_COMMIT: 'c0ffee1' });
    procs.push(svc);
    expect((await call(svc.url, 'POST', '/v1/sessions/s2/events', { events: [{ type: 'user', text: 'hello' }] })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 500)); // pino-pretty writes from a worker thread
    await svc.stop();
    const lines = serviceLines(svc.stdout());
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^session memory compaction service ${VERSION} \\(commit c0ffee1, Node v[\\d.]+\\) listening on ${svc.url}$`)),
      ]),
    );
    const request = lines.find((line) => line.includes('/v1/sessions/s2/events'));
    expect(request).toMatch(/DEBUG.*request completed/);
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
  });
});
