/**
 * `npm run rebuild-read-models` on a full disk is refused up front by the start's rule (`refuseFullDisk`: less than
 * 1 MiB free where DATA_DIR or the embedded store's file is): one line on stderr saying the disk is full, naming the
 * directory and its free bytes and what to do, exit code 1 as the start's refusal, nothing created or changed in
 * DATA_DIR. Before (main at 8ed6239) the rebuild did not look: it started writing the read models. Run as `npm run`
 * runs it (ts-node, transpile only), with `fs.statfsSync` answering 1020 KiB free for the full directory
 * (test/support/full-disk-preload.js), as full-disk-at-start.spec.ts simulates the start's full disk.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { REPO_ROOT } from '../support/service-process';
import { runNode } from '../support/run-node';

jest.setTimeout(180_000);

const REBUILD = 'apps/session-service/src/rebuild-read-models.ts';
const PRELOAD = path.join(REPO_ROOT, 'test', 'support', 'full-disk-preload.js');

/** `npm run rebuild-read-models` with the full-disk preload and only PATH, HOME and `env`. */
const rebuild = (env: Record<string, string>) =>
  runNode(['-r', PRELOAD, '-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', REBUILD], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });

/** Every file under `dir` (name → size and modification time), to see that nothing was created or changed. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of fs.readdirSync(dir)) {
    const stat = fs.statSync(path.join(dir, name));
    files[name] = `${stat.size} ${stat.mtimeMs}`;
  }
  return files;
}

describe('npm run rebuild-read-models on a full disk', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rebuild-full-disk-'));
    dirs.push(d);
    return d;
  };
  /** A stopped service's DATA_DIR (or the events file's directory): the embedded store with one event. */
  const storeWithOneEvent = async (dir: string) => {
    const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    await store.appendToStream('session-default.s1', [{ id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} }]);
    await store.close();
  };

  it('is refused up front (exit code 1, one line naming the directory and its free bytes), and runs once space is free', async () => {
    const dataDir = tempDir();
    await storeWithOneEvent(dataDir);
    const before = snapshot(dataDir);
    const refused = await rebuild({ DATA_DIR: dataDir, FULL_DISK_DIR: dataDir });
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 1,
      stderr: `rebuild failed: the disk is full: the file system holding ${dataDir} has 1044480 bytes free, fewer than the 1048576 the rebuild needs to write the read models: free space on its file system, then run npm run rebuild-read-models again (nothing acknowledged is lost)\n`,
    });
    expect(refused.stdout).toBe('');
    expect(snapshot(dataDir)).toEqual(before);

    const ran = await rebuild({ DATA_DIR: dataDir });
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toMatch(/^rebuilt up to position 1 in /m);
  });

  it("looks at the events file's file system too (SQLITE_EVENTS_FILE elsewhere)", async () => {
    const dataDir = tempDir();
    const eventsDir = tempDir();
    await storeWithOneEvent(eventsDir);
    const refused = await rebuild({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: path.join(eventsDir, 'events.sqlite'), FULL_DISK_DIR: eventsDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`^rebuild failed: the disk is full: the file system holding ${eventsDir} has 1044480 bytes free`));
    expect(fs.existsSync(path.join(dataDir, 'read-models.sqlite'))).toBe(false);
  });
});
