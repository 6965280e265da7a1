/**
 * Whether the path of an open SQLite file still names that file: a file moved onto the path
 * (`mv backup.sqlite events.sqlite` while the service runs) or the file deleted leaves the open
 * connection on the old, unlinked file (ncdata69 F2: writes acknowledged into it were lost at stop,
 * and a replica opening the path wrote a second log at the same positions). Compared by device and
 * inode, as `stat(2)` gives them; a copy written over the file in place (`cp`) keeps its inode and
 * is met as damage instead (`EventStoreCorruptError`).
 */
import * as fs from 'node:fs';

/** The identity of the file at a path when it was opened, checked again by {@link SqliteFileIdentity.change}. */
export class SqliteFileIdentity {
  private constructor(
    private readonly path: string,
    private readonly dev: number,
    private readonly ino: number,
  ) {}

  /** The identity of the file at `path` now, or null for `':memory:'`, an empty path (a temporary database) or a path that cannot be read. */
  static of(path: string): SqliteFileIdentity | null {
    if (path === '' || path === ':memory:') return null;
    try {
      const stat = fs.statSync(path);
      return new SqliteFileIdentity(path, stat.dev, stat.ino);
    } catch {
      return null;
    }
  }

  /**
   * Undefined while the path names the file it named at open; else what changed (`another file is
   * at its path now (…)`, `it is no longer at its path (…)`). An error other than a missing file
   * (e.g. a permission) tells nothing: undefined. One `stat(2)`, a few microseconds.
   */
  change(): string | undefined {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'it is no longer at its path: deleted or moved away' : undefined;
    }
    if (stat.dev === this.dev && stat.ino === this.ino) return undefined;
    return `another file is at its path now (inode ${stat.ino}, it had ${this.ino})`;
  }
}
