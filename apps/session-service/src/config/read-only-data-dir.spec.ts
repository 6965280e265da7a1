/**
 * A read-only DATA_DIR (newcomer ncstorage, t2: a start on a read-only mount exited 1 with
 * `EROFS … service.lock.json`, or said `cannot be created (ENOENT)`): a configuration error
 * naming DATA_DIR and the read-only file system. A read-only mount cannot be made in CI: the
 * mapping functions are tested with a stand-in for `access`.
 */
import { tmpdir } from 'node:os';
import { ConfigurationError } from './configuration-error';
import { fileSystemCause, readOnlyDataDir } from './data-dir';
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
