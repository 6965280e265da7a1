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
   * ones first seen; else what changed: `message` (`another file is at its path now (…)`, `it is no
   * longer at its path: …`, `its -wal file was deleted or replaced …`) and whether it was the file
   * itself (`mainFile`) or only a `-wal` or `-shm` file beside it. An error other than a missing
   * file (e.g. a permission) tells nothing. Three `stat(2)`s, a few microseconds each.
   */
  change(): FileChange | undefined {
    const main = identityAt(this.path);
    if (main === 'missing') return { message: 'it is no longer at its path: deleted or moved away', mainFile: true };
    if (main !== null && !same(main, this.main))
      return { message: `another file is at its path now (inode ${main.ino}, it had ${this.main.ino})`, mainFile: true };
    for (const suffix of SIDECARS) {
      const now = identityAt(this.path + suffix);
      const first = this.sidecars.get(suffix);
      if (first === undefined) {
        if (now !== null && now !== 'missing') this.sidecars.set(suffix, now);
        continue;
      }
      if (now === 'missing' || (now !== null && !same(now, first)))
        return { message: `its ${suffix} file was deleted or replaced while the store had it open (writes would go to the unlinked one)`, mainFile: false };
    }
    return undefined;
  }

  /**
   * Renames the `-wal` and `-shm` files still at their paths that are the ones first seen (the
   * replaced file's: another file was moved onto the path, `mv` leaving them) to
   * `<name>-wal.replaced-<UTC time>`, so the next connection to open the path opens the file now
   * there as it is: SQLite would apply the old file's WAL to it, which damaged another store's
   * file or brought the replaced log back (ncrecheck70 F1). Kept, not deleted: the WAL holds the
   * replaced log's latest commits. Answers the new names; a file it cannot rename is left (and not
   * named).
   */
  setAsideSidecars(at = new Date()): string[] {
    const stamp = at.toISOString().replace(/[:.]/g, '-');
    const moved: string[] = [];
    for (const suffix of SIDECARS) {
      const first = this.sidecars.get(suffix);
      const now = identityAt(this.path + suffix);
      if (first === undefined || now === null || now === 'missing' || !same(now, first)) continue;
      const aside = `${this.path}${suffix}.replaced-${stamp}`;
      try {
        fs.renameSync(this.path + suffix, aside);
        moved.push(aside);
      } catch {
        // Left in place: the refusal's message still says to set them aside before the restart.
      }
    }
    return moved;
  }
}

/** The files SQLite keeps beside a database in WAL mode. */
const SIDECARS = ['-wal', '-shm'] as const;

/** Whether two identities are one file. */
function same(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** What {@link SqliteFileIdentity.change} found changed. */
export interface FileChange {
  /** What changed, in words (see {@link SqliteFileIdentity.change}). */
  message: string;
  /** True when the file itself is no longer at its path (another one moved there, or none); false when only its `-wal` or `-shm` file changed. */
  mainFile: boolean;
}
