/**
 * Whether the path of an open SQLite file, and its `-wal` and `-shm` files beside it, still name the
 * files the connection has open: a file moved onto the path (`mv backup.sqlite events.sqlite` while
 * the service runs) or deleted leaves the open connection on the old, unlinked file (ncdata69 F2:
 * writes acknowledged into it were lost at stop, and a replica opening the path wrote a second log at
 * the same positions); so does deleting only the `-wal` and `-shm` files, as a restore's steps do
 * (ncrecheck69 N1: the writes went into the unlinked WAL, lost at stop, and another replica reused
 * their positions). While a connection is open SQLite keeps both files (it deletes them when the last
 * one closes), so any change of them is someone else's. Compared by device and inode, as `stat(2)`
 * gives them; a copy written over the file in place (`cp`) keeps its inode and is met as damage
 * instead (`EventStoreCorruptError`).
 */
import * as fs from 'node:fs';

/** A file's identity: device and inode. */
interface Identity {
  dev: number;
  ino: number;
}

/** The file at `path` now, or null when there is none (or it cannot be read). */
function identityAt(path: string): Identity | null | 'missing' {
  try {
    const { dev, ino } = fs.statSync(path);
    return { dev, ino };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : null;
  }
}

/** The identities of the files at a database's path and its `-wal` and `-shm` paths, checked again by {@link SqliteFileIdentity.change}. */
export class SqliteFileIdentity {
  /** The `-wal` and `-shm` files as first seen (they appear with the first connection that reads the file). */
  private readonly sidecars = new Map<string, Identity>();

  private constructor(
    private readonly path: string,
    private readonly main: Identity,
  ) {
    this.change();
  }

  /** The identity of the file at `path` now, or null for `':memory:'`, an empty path (a temporary database) or a path that cannot be read. */
  static of(path: string): SqliteFileIdentity | null {
    if (path === '' || path === ':memory:') return null;
    const main = identityAt(path);
    return main === null || main === 'missing' ? null : new SqliteFileIdentity(path, main);
  }

  /**
   * Undefined while the path names the file it named at open, and its `-wal` and `-shm` files the
   * ones first seen; else what changed (`another file is at its path now (…)`, `it is no longer at
   * its path: …`, `its -wal file was deleted or replaced …`). An error other than a missing file
   * (e.g. a permission) tells nothing. Three `stat(2)`s, a few microseconds each.
   */
  change(): string | undefined {
    const main = identityAt(this.path);
    if (main === 'missing') return 'it is no longer at its path: deleted or moved away';
    if (main !== null && (main.dev !== this.main.dev || main.ino !== this.main.ino))
      return `another file is at its path now (inode ${main.ino}, it had ${this.main.ino})`;
    for (const suffix of ['-wal', '-shm']) {
      const now = identityAt(this.path + suffix);
      const first = this.sidecars.get(suffix);
      if (first === undefined) {
        if (now !== null && now !== 'missing') this.sidecars.set(suffix, now);
        continue;
      }
      if (now === 'missing' || (now !== null && (now.dev !== first.dev || now.ino !== first.ino)))
        return `its ${suffix} file was deleted or replaced while the store had it open (writes would go to the unlinked one)`;
    }
    return undefined;
  }
}
