/**
 * The service's files are not readable by other local users (newcomer ncsec62 F3): given a data directory an
 * earlier version wrote (0755, files 0644), when it is checked at start, then other users lose their access and
 * the owner and group keep theirs, also for a store kept outside DATA_DIR (SQLITE_EVENTS_FILE) and files reached
 * through a symbolic link (newcomer ncfiles63 F1, F6); what this process's user does not own is left alone; and a
 * process that withholds the bits creates files 0640 and directories 0750 under the common umask 022.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { withholdModeBitsFromServiceFiles } from './data-dir';
import { WITHHELD_MODE_BITS, modesWithheldLine, withholdModeBits } from './data-dir-modes';
import { loadServiceConfig } from './service-config';

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;
const asRoot = process.getuid?.() === 0;

describe('DATA_DIR file modes', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-modes-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given a directory an earlier version wrote (0755, files 0644), when checked at start, then other users lose access and nothing else changes', () => {
    fs.chmodSync(dir, 0o755);
    for (const name of ['events.sqlite', 'events.sqlite-wal', 'read-models.sqlite', 'service.lock', 'service.lock.json']) {
      fs.writeFileSync(path.join(dir, name), 'x');
      fs.chmodSync(path.join(dir, name), 0o644);
    }
    fs.mkdirSync(path.join(dir, 'events-claims'), { mode: 0o755 });
    fs.chmodSync(path.join(dir, 'events-claims'), 0o755);
    // Not the service's: left as it is.
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
    fs.chmodSync(path.join(dir, 'notes.txt'), 0o666);

    const changed = withholdModeBitsFromServiceFiles(loadServiceConfig({ DATA_DIR: dir }, false));

    expect(changed).toHaveLength(7);
    expect(modeOf(dir)).toBe(0o750);
    expect(modeOf(path.join(dir, 'events-claims'))).toBe(0o750);
    for (const name of ['events.sqlite', 'events.sqlite-wal', 'read-models.sqlite', 'service.lock', 'service.lock.json'])
      expect({ name, mode: modeOf(path.join(dir, name)) }).toEqual({ name, mode: 0o640 });
    expect(modeOf(path.join(dir, 'notes.txt'))).toBe(0o666);
  });

  it("given the store kept outside DATA_DIR (SQLITE_EVENTS_FILE) and DATA_DIR reached through a symbolic link, when checked at start, then its files and claims lose others' access too", () => {
    const store = path.join(dir, 'store');
    fs.mkdirSync(store, { mode: 0o755 });
    for (const name of ['ev.sqlite', 'ev.sqlite-wal', 'ev.sqlite-shm']) {
      fs.writeFileSync(path.join(store, name), 'x');
      fs.chmodSync(path.join(store, name), 0o644);
    }
    fs.mkdirSync(path.join(store, 'ev-claims'));
    fs.chmodSync(path.join(store, 'ev-claims'), 0o755);
    const real = path.join(dir, 'real-data');
    fs.mkdirSync(real);
    fs.chmodSync(real, 0o755);
    fs.writeFileSync(path.join(real, 'read-models.sqlite'), 'x');
    fs.chmodSync(path.join(real, 'read-models.sqlite'), 0o644);
    fs.symlinkSync(real, path.join(dir, 'data'));

    const changed = withholdModeBitsFromServiceFiles(
      loadServiceConfig({ DATA_DIR: path.join(dir, 'data'), SQLITE_EVENTS_FILE: path.join(store, 'ev.sqlite') }, false),
    );

    expect(changed).toHaveLength(6);
    expect([modeOf(real), modeOf(path.join(real, 'read-models.sqlite'))]).toEqual([0o750, 0o640]);
    expect(['ev.sqlite', 'ev.sqlite-wal', 'ev.sqlite-shm', 'ev-claims'].map((name) => modeOf(path.join(store, name)))).toEqual([0o640, 0o640, 0o640, 0o750]);
    // the store's directory is not the service's own: left as it is
    expect(modeOf(store)).toBe(0o755);
    expect(modesWithheldLine(changed)).toBe(
      `file modes: group write and other users' access taken away from 6 paths: ${changed.slice(0, 4).join(', ')} and 2 more`,
    );
  });

  it("given SQLITE_EVENTS_FILE a symbolic link to the store, when checked at start, then the real file's -wal, -shm and claims lose others' access (newcomer ncrecheck63 F1: they stayed 0644 and the WAL was readable)", () => {
    const real = path.join(dir, 'real');
    fs.mkdirSync(real);
    for (const name of ['ev.sqlite', 'ev.sqlite-wal', 'ev.sqlite-shm']) {
      fs.writeFileSync(path.join(real, name), 'x');
      fs.chmodSync(path.join(real, name), 0o644);
    }
    fs.mkdirSync(path.join(real, 'ev-claims'));
    fs.chmodSync(path.join(real, 'ev-claims'), 0o755);
    fs.writeFileSync(path.join(real, 'ev-claims', 'abc.lock'), '');
    fs.chmodSync(path.join(real, 'ev-claims', 'abc.lock'), 0o644);
    fs.mkdirSync(path.join(dir, 'links'));
    fs.symlinkSync(path.join(real, 'ev.sqlite'), path.join(dir, 'links', 'link.sqlite'));

    withholdModeBitsFromServiceFiles(
      loadServiceConfig({ DATA_DIR: path.join(dir, 'data'), SQLITE_EVENTS_FILE: path.join(dir, 'links', 'link.sqlite') }, false),
    );

    expect(['ev.sqlite', 'ev.sqlite-wal', 'ev.sqlite-shm', 'ev-claims', 'ev-claims/abc.lock'].map((name) => modeOf(path.join(real, name)))).toEqual([
      0o640, 0o640, 0o640, 0o750, 0o640,
    ]);
  });

  it('keeps stricter modes as they are and names only what it changed', () => {
    fs.chmodSync(dir, 0o700);
    fs.writeFileSync(path.join(dir, 'events.sqlite'), 'x');
    fs.chmodSync(path.join(dir, 'events.sqlite'), 0o600);
    fs.writeFileSync(path.join(dir, 'read-models.sqlite'), 'x');
    fs.chmodSync(path.join(dir, 'read-models.sqlite'), 0o664);
    expect(withholdModeBits(['events.sqlite', 'read-models.sqlite', 'missing.sqlite'].map((name) => path.join(dir, name)))).toEqual([
      path.join(dir, 'read-models.sqlite'),
    ]);
    expect([modeOf(dir), modeOf(path.join(dir, 'events.sqlite')), modeOf(path.join(dir, 'read-models.sqlite'))]).toEqual([0o700, 0o600, 0o640]);
  });

  (asRoot ? it : it.skip)("leaves a file another user owns as it is (a volume prepared by root for the service's user)", () => {
    const file = path.join(dir, 'events.sqlite');
    fs.writeFileSync(file, 'x');
    fs.chmodSync(file, 0o644);
    fs.chownSync(file, 65534, 65534);
    expect(withholdModeBits([file])).not.toContain(file);
    expect(modeOf(file)).toBe(0o644);
  });

  it('a process that withholds the bits creates files 0640 and directories 0750 under umask 022, and keeps a stricter umask', () => {
    const script = (umask: string) => `
      process.umask(${umask});
      require(${JSON.stringify(require.resolve('ts-node/register/transpile-only'))});
      require(${JSON.stringify(path.join(__dirname, 'data-dir-modes.ts'))}).withholdModeBitsFromNewFiles();
      const fs = require('node:fs');
      fs.writeFileSync(process.argv[1] + '/file', 'x');
      fs.mkdirSync(process.argv[1] + '/dir');
      console.log(JSON.stringify([fs.statSync(process.argv[1] + '/file').mode & 0o777, fs.statSync(process.argv[1] + '/dir').mode & 0o777]));`;
    const run = (umask: string, sub: string) => {
      fs.mkdirSync(path.join(dir, sub));
      const child = spawnSync(process.execPath, ['-e', script(umask), path.join(dir, sub)], { encoding: 'utf8' });
      expect(child.stderr).toBe('');
      return JSON.parse(child.stdout) as number[];
    };
    expect(run('0o022', 'a')).toEqual([0o640, 0o750]);
    expect(run('0o077', 'b')).toEqual([0o600, 0o700]);
    expect(WITHHELD_MODE_BITS).toBe(0o027);
  });
});
