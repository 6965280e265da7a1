/**
 * A read-only DATA_DIR (newcomer ncstorage, t2: a start on a read-only mount exited 1 with
 * `EROFS … service.lock.json`, or said `cannot be created (ENOENT)`): a configuration error
 * naming DATA_DIR and the read-only file system. A read-only mount cannot be made in CI: the
 * mapping functions are tested with a stand-in for `access`.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ConfigurationError } from './configuration-error';
import { ensureDataDir, fileSystemCause, readOnlyDataDir } from './data-dir';
import { isReadOnly } from './data-dir-lock';

const fsError = (code: string) => Object.assign(new Error(code), { code });

describe('a read-only DATA_DIR', () => {
  it('is refused as a configuration error naming DATA_DIR and the read-only file system', () => {
    const refusal = readOnlyDataDir('/mnt/ro/data');
    expect(refusal).toBeInstanceOf(ConfigurationError);
    expect(refusal.message).toMatch(
      /^DATA_DIR=\/mnt\/ro\/data: is on a read-only file system \(EROFS\).*: mount it read-write, or point DATA_DIR at a writable directory$/,
    );
  });

  it('finds EROFS behind an ENOENT of a recursive mkdir: the nearest existing directory above is on a read-only file system', () => {
    const access = (p: string) => {
      if (p === '/mnt/ro') throw fsError('EROFS');
      throw fsError('ENOENT');
    };
    expect(fileSystemCause('/mnt/ro/a/b', 'ENOENT', access)).toBe('EROFS');
    expect(
      fileSystemCause('/mnt/rw/a', 'ENOENT', (p) =>
        p === '/mnt/rw'
          ? undefined
          : (() => {
              throw fsError('ENOENT');
            })(),
      ),
    ).toBe('ENOENT');
    expect(
      fileSystemCause('/x', 'EACCES', () => {
        throw fsError('EACCES');
      }),
    ).toBe('EACCES');
  });

  it("takes EROFS for read-only, and SQLite's read-only codes only where the file system is read-only", () => {
    expect(isReadOnly(fsError('EROFS'), '/d')).toBe(true);
    expect(isReadOnly(fsError('EACCES'), '/d')).toBe(false);
    expect(isReadOnly(fsError('SQLITE_BUSY'), '/d')).toBe(false);
    // A writable temp directory: SQLITE_READONLY there is something else (e.g. permissions).
    expect(isReadOnly(fsError('SQLITE_READONLY'), tmpdir())).toBe(false);
  });
});

describe('an existing DATA_DIR this process may not write (nck8s A1, ncsqliteops F2: a non-root pod on a volume owned by root)', () => {
  const dir = fs.mkdtempSync(path.join(tmpdir(), 'unwritable-data-dir-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is refused as a configuration error naming DATA_DIR, the path, the user and the fix (not SQLite’s "unable to open database file")', () => {
    const access = (p: string) => {
      if (p === dir) throw fsError('EACCES');
    };
    expect(() => ensureDataDir(dir, access)).toThrow(ConfigurationError);
    expect(() => ensureDataDir(dir, access)).toThrow(
      new RegExp(
        `^DATA_DIR=${dir}: is not writable by this process \\(EACCES, uid \\d+ gid \\d+\\): make it writable by the service's user \\(chown or chmod; on Kubernetes a securityContext fsGroup`,
      ),
    );
  });

  it('names a store file in it that is not writable', () => {
    fs.writeFileSync(path.join(dir, 'events.sqlite'), '');
    const access = (p: string) => {
      if (p.endsWith('events.sqlite')) throw fsError('EACCES');
    };
    expect(() => ensureDataDir(dir, access)).toThrow(new RegExp(`^DATA_DIR=${dir}: ${dir}/events\\.sqlite is not writable by this process \\(EACCES`));
  });

  it('takes a writable one', () => {
    expect(() => ensureDataDir(dir)).not.toThrow();
  });
});

describe('a DATA_DIR under a file system that takes no new directory (ncsqliteops A1: /proc; Node’s recursive mkdir spun for ever)', () => {
  it('is refused at once, naming DATA_DIR and the error', () => {
    expect(() => ensureDataDir('/proc/k8sfix-no-such/data')).toThrow(/^DATA_DIR=\/proc\/k8sfix-no-such\/data: cannot be created \(ENOENT\)/);
  });
});
