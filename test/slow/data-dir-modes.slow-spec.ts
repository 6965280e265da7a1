/**
 * The real service process, started under the common umask 022 on a new DATA_DIR, writes nothing other local users
 * may read (newcomer ncsec62 F3: the store and read models, conversation text, were 0644 in a 0755 directory): after
 * a write and a compaction, every entry under DATA_DIR withholds group write and all access for others.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { call, spawnService } from '../support/service-process';

jest.setTimeout(120_000);

/** Every path under `dir` (itself included) with its permission bits. */
function modesUnder(dir: string): Array<{ path: string; mode: string }> {
  const entries = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => path.join(dir, name));
  return [dir, ...entries].map((p) => ({ path: path.relative(dir, p) || '.', mode: (fs.statSync(p).mode & 0o777).toString(8) }));
}

describe('DATA_DIR file modes of the running service', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-modes-slow-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('a new DATA_DIR, its store, read models, lock and claims: no access for others, no group write', async () => {
    const dataDir = path.join(root, 'data');
    const inherited = process.umask(0o022);
    let svc;
    try {
      svc = await spawnService({ dataDir });
    } finally {
      process.umask(inherited);
    }
    try {
      const appended = await call(svc.url, 'POST', '/v1/sessions/modes/events', {
        events: [1, 2, 3, 4].map((i) => ({ id: `e${i}`, type: i % 2 ? 'user' : 'assistant', text: `message ${i}` })),
      });
      expect(appended.status).toBe(201);
      const compacted = await call(svc.url, 'POST', '/v1/sessions/modes/compactions', { strategy: { type: 'sliding-window', maxEvents: 2 } });
      expect(compacted.status).toBe(200);
    } finally {
      await svc.stop();
    }
    const modes = modesUnder(dataDir);
    // The files the service writes were there to check (not an empty directory passing by default).
    expect(modes.map((m) => m.path)).toEqual(expect.arrayContaining(['.', 'events.sqlite', 'read-models.sqlite', 'service.lock']));
    expect(modes.filter((m) => (parseInt(m.mode, 8) & 0o027) !== 0)).toEqual([]);
    expect(svc.stdout()).not.toContain('file modes:');

    // As an earlier release left them (umask 022): the next start takes others' access away, and says so once.
    for (const m of modes) fs.chmodSync(path.join(dataDir, m.path), fs.statSync(path.join(dataDir, m.path)).isDirectory() ? 0o755 : 0o644);
    const again = await spawnService({ dataDir });
    try {
      expect(again.stdout()).toContain(`file modes: group write and other users' access taken away from ${modes.length} paths: ${dataDir}`);
    } finally {
      await again.stop();
    }
    expect(modesUnder(dataDir).filter((m) => (parseInt(m.mode, 8) & 0o027) !== 0)).toEqual([]);
  });
});
