/**
 * File modes of what the service writes: the event store, the read models (conversation text), the
 * lock and the compaction claims are not readable by other local users (newcomer ncsec62 F3: under
 * the common umask 022 they were 0644, the data directory 0755). The owner reads and writes, the
 * group may read (a backup job given the volume's group, e.g. Kubernetes `fsGroup`), others nothing:
 * files 0640, directories 0750, as PostgreSQL's data directory with group access.
 */
import * as fs from 'node:fs';

/** The permission bits the service never gives: group write, and everything for others (a umask). */
export const WITHHELD_MODE_BITS = 0o027;

/**
 * Makes every file and directory this process creates from now on withhold {@link WITHHELD_MODE_BITS}
 * (SQLite's files, its `-wal` and `-shm` files, the lock, the claims): the process umask gets those
 * bits added to the ones it has (a stricter umask, e.g. 077, stays). Process-wide: called first by the
 * programs that write `DATA_DIR` (the service, the read-model rebuild, the store copy), not by the
 * library code a test process runs in-process.
 */
export function withholdModeBitsFromNewFiles(): void {
  const inherited = process.umask(WITHHELD_MODE_BITS);
  process.umask(inherited | WITHHELD_MODE_BITS);
}

/**
 * Takes the withheld bits ({@link WITHHELD_MODE_BITS}) away from those of `paths` that exist (a
 * symbolic link is followed: the file or directory it names), are owned by this process's user and
 * have them: a directory or store written by an earlier version (0755, 0644) is no longer readable by
 * other users. A file of another owner (a volume prepared by root) or one that cannot be changed (a
 * read-only or permissionless file system) is left as it is: this never stops a start. Returns the
 * paths it changed, in order.
 */
export function withholdModeBits(paths: readonly string[]): string[] {
  const uid = process.getuid?.();
  if (uid === undefined) return [];
  const changed: string[] = [];
  for (const target of paths) {
    try {
      const stat = fs.statSync(target, { throwIfNoEntry: false });
      if (!stat || stat.uid !== uid || (stat.mode & WITHHELD_MODE_BITS) === 0) continue;
      fs.chmodSync(target, stat.mode & 0o7777 & ~WITHHELD_MODE_BITS);
      changed.push(target);
    } catch {
      // Left as it is (see above).
    }
  }
  return changed;
}

/**
 * The start-up line naming the files and directories {@link withholdModeBits} changed (at most 4
 * named, then a count), e.g. `file modes: group write and other users' access taken away from 2 paths:
 * /data, /data/events.sqlite`.
 */
export function modesWithheldLine(paths: readonly string[]): string {
  const named = paths.slice(0, 4).join(', ') + (paths.length > 4 ? ` and ${paths.length - 4} more` : '');
  return `file modes: group write and other users' access taken away from ${paths.length} ${paths.length === 1 ? 'path' : 'paths'}: ${named}`;
}
