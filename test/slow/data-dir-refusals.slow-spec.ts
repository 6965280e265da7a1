/**
 * DATA_DIR refusals with real processes (nck8s A1, ncsqliteops F2 and A1): an existing DATA_DIR the service's user
 * may not write (a non-root pod on a volume owned by root) and a DATA_DIR under /proc each stop the start with exit
 * code 2 and one configuration error naming DATA_DIR, the path and the fix: before, the first said only
 * `failed to start: unable to open database file` (exit 1), the second spun for ever without a word.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServiceProcess } from '../support/service-process';

jest.setTimeout(120_000);

const asRoot = process.getuid?.() === 0;
if (!asRoot) {
  console.log('skipping the unwritable DATA_DIR case: it runs the service as `nobody`, which needs root');
}

describe('DATA_DIR refusals', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  (asRoot ? it : it.skip)('an existing DATA_DIR the user may not write: exit code 2, DATA_DIR, the path, the uid and the fix', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'root-owned-data-'));
    dirs.push(dir);
    fs.chmodSync(dir, 0o755);
    const starting = startServiceProcess({
      dataDir: dir,
      readyTimeoutMs: 90_000,
      command: [
        'runuser',
        '-u',
        'nobody',
        '--',
        process.execPath,
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'apps/session-service/src/main.ts',
      ],
    });
    starting.ready.catch(() => undefined);
    const { code } = await starting.exited;
    expect(starting.stderr()).toMatch(
      new RegExp(
        `^configuration error: DATA_DIR=${dir}: is not writable by this process \\(EACCES, uid 65534 gid \\d+\\): make it writable by the service's user`,
        'm',
      ),
    );
    expect(code).toBe(2);
  });

  it('a DATA_DIR under /proc: exit code 2 at once, naming DATA_DIR (it spun for ever)', async () => {
    const starting = startServiceProcess({ dataDir: '/proc/k8sfix-no-such/data', readyTimeoutMs: 60_000 });
    starting.ready.catch(() => undefined);
    const { code } = await starting.exited;
    expect(starting.stderr()).toMatch(/^configuration error: DATA_DIR=\/proc\/k8sfix-no-such\/data: cannot be created \(ENOENT\)/m);
    expect(code).toBe(2);
  });
});
