/**
 * A start on a full disk (e.g. after a kill -9 that left the disk full) is refused with `the disk is
 * full … free space on its file system` (main: `failed to start: …`, exit code 1), as docs/reliability.md's
 * "Storage failures" says. Before, the service started, listened and said `/health` ok while its
 * projector could not write the read models: every read answered 503 "still catching up" and every
 * write 503, forever (ncsqliteops finding F4). The full disk is simulated as the write probe's spec
 * does: the file system's free space as `statfsSync` reports it (tmpfs runs gave the same refusal).
 */
import * as fs from 'node:fs';
import type { StatsFs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createSessionService } from '../create-session-service';
import { asConfigurationError } from './configuration-error';
import { loadServiceConfig } from './service-config';

describe('a start on a full disk', () => {
  const dirs: string[] = [];
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'full-disk-'));
    dirs.push(d);
    return d;
  };
  /** `statfsSync` answering 1020 KiB free (less than the 1 MiB the service needs) for `fullDir`, the real answer elsewhere. */
  const fillDisk = (fullDir: string) => {
    // The module object itself (a namespace import's properties cannot be redefined): the check reads statfsSync from it at each call.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const nodeFs = require('node:fs') as typeof import('node:fs');
    const real = nodeFs.statfsSync.bind(nodeFs) as (dir: fs.PathLike) => StatsFs;
    return jest
      .spyOn(nodeFs, 'statfsSync')
      .mockImplementation((dir: fs.PathLike) => (dir === fullDir ? { ...real(dir), bavail: 255, bsize: 4096 } : real(dir)));
  };

  it('is refused (exit code 1, not a configuration error) saying the disk is full and to free space, and starts once space is free', async () => {
    const dataDir = tempDir();
    // A store written before (the start after a kill): refused all the same.
    const first = await createSessionService(loadServiceConfig({ DATA_DIR: dataDir }, false), { quiet: true, env: {} });
    await first.close();
    const statfs = fillDisk(dataDir);
    const start = createSessionService(loadServiceConfig({ DATA_DIR: dataDir }, false), { quiet: true, env: {} });
    await expect(start).rejects.toThrow(
      `the disk is full: the file system holding ${dataDir} has 1044480 bytes free, fewer than the 1048576 the service needs to write its log and read models: free space on its file system, then start again (nothing acknowledged is lost)`,
    );
    // main.ts: exit code 1 for what is not a configuration error (freeing space fixes it, not a setting).
    expect(asConfigurationError(await start.catch((err: unknown) => err))).toBeUndefined();
    expect(statfs).toHaveBeenCalledWith(dataDir);
    statfs.mockRestore();
    // The refusal let the directory go: the next start (space freed) takes it.
    const again = await createSessionService(loadServiceConfig({ DATA_DIR: dataDir }, false), { quiet: true, env: {} });
    await again.close();
  });

  it("looks at the events file's file system too (SQLITE_EVENTS_FILE elsewhere)", async () => {
    const dataDir = tempDir();
    const eventsDir = tempDir();
    fillDisk(eventsDir);
    await expect(
      createSessionService(loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: path.join(eventsDir, 'events.sqlite') }, false), {
        quiet: true,
        env: {},
      }),
    ).rejects.toThrow(new RegExp(`^the disk is full: the file system holding ${eventsDir} has 1044480 bytes free`));
  });
});
