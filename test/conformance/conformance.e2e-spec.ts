/**
 * Every shared conformance vector, through the HTTP API of a fresh service (the same runner as
 * `npm run conformance`). A failing vector fails this suite with its problems listed.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/service-process';
import { VECTORS_DIR, describeWithShared } from '../support/shared-dir';
import { runConformance, type VectorResult } from './conformance-runner';
import { loadVectors } from './conformance-vectors';

describeWithShared('conformance vectors over HTTP', VECTORS_DIR, () => {
  let results: VectorResult[] = [];

  beforeAll(async () => {
    results = await runConformance(VECTORS_DIR);
  }, 120_000);

  it('runs every vector file', () => {
    expect(results.map((r) => r.file)).toEqual(loadVectors(VECTORS_DIR).map((v) => v.file));
  });

  it.each(loadVectors(VECTORS_DIR).map((v) => v.file))('%s', (file) => {
    const result = results.find((r) => r.file === file);
    expect(result?.problems).toEqual([]);
  });
});

describe('the runner runs every vector shape (issue 10 item 7)', () => {
  const vectors = [
    { id: 'empty-session', estimator: 'chars', events: [], strategy: { type: 'sliding-window', maxEvents: 2 }, expect: { kept: [], archived: [] } },
    { id: 'empty-session-trigger', estimator: 'chars', events: [], trigger: { type: 'token-count', threshold: 1 }, expect: { triggerFired: false } },
    {
      id: 'notice-counted',
      estimator: 'chars',
      events: [
        { id: 's1', type: 'system', text: 'abc' },
        { id: 'n1', type: 'system', text: 'abcdefghij', notice: true },
      ],
      trigger: { type: 'token-count', threshold: 29 }, // "System: abc" 11 + "System: abcdefghij" 18
      expect: { triggerFired: true },
    },
    {
      id: 'notice-archived',
      estimator: 'chars',
      events: [
        { id: 's1', type: 'system', text: 'rules' },
        { id: 'u1', type: 'user', text: 'a' },
        { id: 'n1', type: 'system', text: 'file', notice: true },
        { id: 'u2', type: 'user', text: 'b' },
      ],
      strategy: { type: 'turn-window', maxTurns: 1 },
      expect: { kept: ['s1', 'u2'], archived: ['u1', 'n1'] },
    },
    { id: 'wrong-on-purpose', estimator: 'chars', events: [], strategy: { type: 'sliding-window', maxEvents: 2 }, expect: { kept: ['ghost'] } },
  ];
  let dir: string;
  let results: VectorResult[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vector-shapes-'));
    for (const v of vectors) fs.writeFileSync(path.join(dir, `${v.id}.json`), JSON.stringify(v));
    results = await runConformance(dir);
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('passes vectors with no events (a session created by its policy) and with notices', () => {
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(results.filter((r) => r.id !== 'wrong-on-purpose').sort(byId)).toEqual(
      vectors
        .filter((v) => v.id !== 'wrong-on-purpose')
        .map((v) => ({ id: v.id, file: `${v.id}.json`, problems: [] }))
        .sort(byId),
    );
  });

  it('still fails a vector whose expectation does not hold', () => {
    expect(results.find((r) => r.id === 'wrong-on-purpose')?.problems[0]).toMatch(/^kept: expected \["ghost"\], got \[\]/);
  });
});

// It said only "…/shared/conformance/vectors is not a readable folder of vector files".
describe('npm run conformance without the vectors', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'test/conformance/run-conformance.ts', ...args],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, ...env },
        },
      );
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });

  it('says how to provide the shared folder, or to pass a folder, and exits 2', async () => {
    const missing = path.join(os.tmpdir(), 'no-such-shared-folder');
    const answer = await run([], { SHARED_DIR: missing });
    expect(answer.code).toBe(2);
    expect(answer.stderr.trim()).toBe(
      `conformance: ${path.join(missing, 'conformance', 'vectors')} is not a readable folder of vector files: the vectors are in the team's shared folder, expected at ${missing}; ` +
        `link or copy it there (e.g. ln -s /path/to/shared ${missing}), set SHARED_DIR to where it is, or pass a folder of vector files: npm run conformance -- <dir>`,
    );
  });

  // npm run conformance loaded ts-node (seconds) before saying the folder was missing.
  it('npm run conformance says it before loading ts-node, the same line, exit 2', async () => {
    const script = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.conformance;
    expect(script).toBe('node test/conformance/conformance.js');
    const missing = path.join(os.tmpdir(), 'no-such-shared-folder');
    // A preload that fails any load of ts-node: the line must come before it.
    const guard = path.join(os.tmpdir(), `no-ts-node-${process.pid}.js`);
    fs.writeFileSync(
      guard,
      "const M = require('module'); const load = M._load; M._load = function (request, ...rest) { if (/^ts-node/.test(request)) throw new Error('ts-node loaded'); return load.call(this, request, ...rest); };",
    );
    try {
      const answer = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['-r', guard, 'test/conformance/conformance.js'], {
          cwd: REPO_ROOT,
          env: { ...process.env, SHARED_DIR: missing },
        });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(answer).toEqual({ code: 2, stderr: `${(await run([], { SHARED_DIR: missing })).stderr.trim()}\n` });
    } finally {
      fs.rmSync(guard, { force: true });
    }
  });

  it('says to check a folder given on the command line', async () => {
    const answer = await run(['/no/such/vectors'], {});
    expect(answer.code).toBe(2);
    expect(answer.stderr).toMatch(/^conformance: \/no\/such\/vectors is not a readable folder of vector files: check the path, or pass a folder/);
  });
});

describe('npm run conformance: Ctrl-C during the run', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-sigint-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'on %s closes the service, removes its temporary store, prints how far it got in one line, exit code %i',
    async (signal, exitCode) => {
      // 2,000 small vectors: still running when the first PASS line is out
      const vectors = path.join(dir, `vectors-${signal}`);
      fs.mkdirSync(vectors);
      const events = [
        { id: 'u1', type: 'user', text: 'a' },
        { id: 'u2', type: 'user', text: 'b' },
      ];
      for (let i = 0; i < 2000; i++) {
        const vector = {
          id: `v${i}`,
          estimator: 'chars',
          events,
          strategy: { type: 'sliding-window', maxEvents: 1 },
          expect: { kept: ['u2'], archived: ['u1'] },
        };
        fs.writeFileSync(path.join(vectors, `v${String(i).padStart(4, '0')}.json`), JSON.stringify(vector));
      }
      const tmp = fs.mkdtempSync(path.join(dir, `tmp-${signal}-`));
      const child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'test/conformance/run-conformance.ts', vectors],
        { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: tmp } },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('close', (code, sig) => resolve({ code, signal: sig })),
      );
      while (!/^PASS /m.test(stdout)) {
        if (child.exitCode !== null) throw new Error(`conformance ended early: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(fs.readdirSync(tmp).filter((n) => n.startsWith('conformance-'))).toHaveLength(1);
      child.kill(signal);
      expect(await exited).toEqual({ code: exitCode, signal: null });
      const lines = stderr.split('\n').filter((l) => l.trim() !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`^conformance: interrupted by ${signal} after \\d+ of 2000 vectors \\(\\d+ passed, 0 failed\\); temporary store removed$`),
      );
      const done = Number(/after (\d+) of/.exec(lines[0])![1]);
      expect(done).toBeGreaterThanOrEqual(1);
      expect(done).toBeLessThan(2000);
      expect(stdout.split('\n').filter((l) => l.startsWith('PASS '))).toHaveLength(done);
      expect(stdout).not.toMatch(/passed, \d+ failed/);
      expect(fs.readdirSync(tmp).filter((n) => n.startsWith('conformance-'))).toEqual([]);
    },
    60_000,
  );

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'on %s while it loads, before any vector ran, says so in one line, exit code %i (newcomer ncdata74 F2: it printed nothing)',
    async (signal, exitCode) => {
      const vectors = path.join(dir, `vectors-loading-${signal}`);
      fs.mkdirSync(vectors);
      fs.writeFileSync(
        path.join(vectors, 'v.json'),
        JSON.stringify({ id: 'v', estimator: 'chars', events: [], strategy: { type: 'sliding-window', maxEvents: 1 }, expect: { kept: [], archived: [] } }),
      );
      // fd 3 says when conformance.js requires ts-node: its signal handler is in place by then (test/support/report-module-load.js).
      const child = spawn(process.execPath, ['-r', './test/support/report-module-load.js', 'test/conformance/conformance.js', vectors], {
        cwd: REPO_ROOT,
        env: { ...process.env, REPORT_MODULE_LOAD: 'ts-node' },
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
      const loading = new Promise<void>((resolve) => (child.stdio[3] as NodeJS.ReadableStream).once('data', () => resolve()));
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', (d) => (stderr += d));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('close', (code, sig) => resolve({ code, signal: sig })),
      );
      // As ts-node starts loading (seconds before the first vector): a Ctrl-C of a user who changed their mind.
      await loading;
      child.kill(signal);
      expect(await exited).toEqual({ code: exitCode, signal: null });
      expect(stderr).toBe(`conformance: interrupted by ${signal} while loading, before any vector ran; nothing was made\n`);
      expect(stdout).toBe('');
    },
    60_000,
  );
});
