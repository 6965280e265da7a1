/**
 * Read models are rebuildable from the log: a damaged read-models file (SQLite says it is corrupt
 * or not a database when it is opened, or `PRAGMA quick_check` finds problems) is moved aside and
 * a new one built from the log, at service start and by `npm run rebuild-read-models`, instead of
 * failing with SQLite's `database disk image is malformed`. Unless the event store's log is empty:
 * then the damaged file may hold the only copy of the events' text, and the start is refused.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isSqliteCorrupt, sqliteQuickCheck, type EventStore } from '@lib/event-store';
import { ReadModelStore } from '@lib/session';
import { ConfigurationError } from './configuration-error';
import { quickCheckLine } from './event-store-config';

/**
 * What is wrong with the read-models file `file`, or null when it opens and (with `quickCheck`)
 * passes `PRAGMA quick_check` (a slow check told to `say`, {@link quickCheckLine}); `store` is the opened file when sound.
 * @throws what opening it throws for any other reason than damage (e.g. a read-only file system).
 */
function openUnlessDamaged(file: string, quickCheck: boolean, say: (line: string) => void): { store: ReadModelStore } | { damage: string } {
  let store: ReadModelStore | undefined;
  try {
    store = ReadModelStore.open(file);
    const problems = quickCheck
      ? sqliteQuickCheck(store.db, (progress) => {
          const line = quickCheckLine({ file, what: 'the read models file', ...progress });
          if (line) say(line);
        })
      : [];
    if (problems.length === 0) return { store };
    store.close();
    return { damage: `PRAGMA quick_check: ${problems.join('; ')}` };
  } catch (error) {
    store?.close();
    if (!isSqliteCorrupt(error)) throw error;
    return { damage: (error as Error).message };
  }
}

/**
 * Moves `file` and its `-wal` and `-shm` files (those that exist) aside as
 * `<file>.damaged-<timestamp>` (and `-wal`, `-shm`: SQLite opens them together), the timestamp an
 * ISO-8601 UTC time with `-` for `:` and `.`. Returns the new name of `file`.
 */
export function setAsideDamaged(file: string, now = new Date()): string {
  const aside = `${file}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (fs.existsSync(file + suffix)) fs.renameSync(file + suffix, aside + suffix);
  }
  return aside;
}

/**
 * Opens the read models at `file` (under `dataDir`) for the service or the rebuild: a damaged
 * file (see the module comment; `quickCheck`: also run `PRAGMA quick_check`, `SQLITE_QUICK_CHECK`)
 * is moved aside ({@link setAsideDamaged}), `say` is told in one line, and a new, empty file is
 * opened (the projector then builds it from the log).
 * @throws ConfigurationError naming DATA_DIR when the file is damaged and the store's log is empty
 *   (head 0): restore the store; the damaged file is kept where it is.
 */
export async function openReadModelsSettingDamageAside(
  dataDir: string,
  file: string,
  store: EventStore,
  options: { quickCheck: boolean; say: (line: string) => void },
): Promise<ReadModelStore> {
  if (file === ':memory:') return ReadModelStore.open(file);
  const opened = openUnlessDamaged(file, options.quickCheck, options.say);
  if ('store' in opened) return opened.store;
  const head = await store.headPosition().catch(() => null);
  const name = path.basename(file);
  if (head === 0n)
    throw new ConfigurationError({
      variable: 'DATA_DIR',
      value: dataDir,
      problem: `its read models (${name}) are damaged (${opened.damage}) and the event store's log is empty (head position 0): the event store is missing or empty`,
      fix: `restore the event store from a backup, the service stopped; do NOT delete ${name}: what is readable of it (sqlite3 ${name} ".recover") may be the last copy of the events' text`,
    });
  const aside = setAsideDamaged(file);
  options.say(
    `the read models file ${file} is damaged (${opened.damage}): moved aside as ${path.basename(aside)} (with its -wal and -shm files); building a new one from the log. The moved-aside file holds the conversation text of its sessions, which later erasures do not reach: delete it (with its -wal and -shm files) once inspected`,
  );
  return ReadModelStore.open(file);
}
