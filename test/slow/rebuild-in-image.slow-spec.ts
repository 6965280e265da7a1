/**
 * `npm run rebuild-read-models`, the restore and recovery step the README and the refusals name, in the
 * container image's layout (the Dockerfile's runtime stage: package.json, tsconfig.json, dist and the
 * production dependencies; no tsconfig.build.json, no apps/ or libs/ sources, no TypeScript). The script
 * builds only in a source checkout (where tsconfig.build.json is) and runs the compiled build in both.
 * Before (main at 17c2dc2) it ran `tsc -b tsconfig.build.json` first, which fails in the image
 * (`error TS5083: Cannot read file '…/tsconfig.build.json'`, or `tsc: not found` once TypeScript is pruned).
 *
 * Runtime: one build of the service in a copy of the sources (about 30 s on a quiet 2-core machine,
 * up to 2 min under load), then two rebuilds of a one-event store.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { REPO_ROOT } from '../support/service-process';

jest.setTimeout(360_000);

/** What the Dockerfile's build stage copies to build; the runtime stage keeps only RUNTIME of it (and node_modules, pruned). */
const SOURCES = ['apps', 'libs', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
const RUNTIME = ['package.json', 'tsconfig.json', 'dist'];
/** The development dependencies that compile TypeScript: absent from the image (`npm prune --omit=dev`). */
const BUILD_TOOLS = new Set(['.bin', 'typescript', 'ts-node', 'ts-jest']);

/** Runs `npm run -s <script>` in `cwd` with only PATH (no tsc on it), HOME and `env`; resolves with its exit code and output. */
function npmRun(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '-s', script],
      { cwd, env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: os.homedir(), ...env }, timeout: 300_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

/** A stopped service's DATA_DIR: the embedded store with one event, no read models yet. */
async function dataDirWithOneEvent(root: string, name: string): Promise<string> {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  await store.appendToStream('session-default.s1', [{ id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} }]);
  await store.close();
  return dir;
}

describe('npm run rebuild-read-models in the container image', () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'rebuild-in-image-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('builds and rebuilds in a source checkout, and rebuilds without TypeScript nor sources in the image layout', async () => {
    const checkout = path.join(root, 'checkout');
    for (const entry of SOURCES) fs.cpSync(path.join(REPO_ROOT, entry), path.join(checkout, entry), { recursive: true });
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(checkout, 'node_modules'), 'dir');
    const inCheckout = await npmRun('rebuild-read-models', checkout, { DATA_DIR: await dataDirWithOneEvent(root, 'data-checkout') });
    expect(inCheckout).toEqual({ code: 0, out: expect.stringMatching(/^rebuilt up to position 1 in /m) as unknown });
    expect(fs.existsSync(path.join(checkout, 'dist', 'apps', 'session-service', 'src', 'rebuild-read-models.js'))).toBe(true);

    const image = path.join(root, 'image');
    for (const entry of RUNTIME) fs.cpSync(path.join(checkout, entry), path.join(image, entry), { recursive: true });
    fs.mkdirSync(path.join(image, 'node_modules'));
    for (const entry of fs.readdirSync(path.join(REPO_ROOT, 'node_modules')).filter((name) => !BUILD_TOOLS.has(name)))
      fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', entry), path.join(image, 'node_modules', entry));
    const dataDir = await dataDirWithOneEvent(root, 'data-image');
    const inImage = await npmRun('rebuild-read-models', image, { DATA_DIR: dataDir, NODE_ENV: 'production' });
    expect(inImage).toEqual({ code: 0, out: expect.stringMatching(/^rebuilt up to position 1 in /m) as unknown });
    expect(inImage.out).not.toMatch(/tsc|TS5083/);
    expect(fs.existsSync(path.join(dataDir, 'read-models.sqlite'))).toBe(true);
  });
});
