/**
 * The service's data directory (`DATA_DIR`) and, for the read-model rebuild, the embedded store's
 * events file, checked before anything is opened so a mistake is refused by name.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROBE_MIN_FREE_BYTES, freeBytesShort, realStoreFile, sqliteClaimsDirectory } from '@lib/event-store';
import type { ServiceConfig } from './service-config';
import { ConfigurationError } from './configuration-error';
import { READ_MODEL_FILE_NAME } from '@lib/session';
import { LOCK_FILE_NAME, LOCK_HOLDER_FILE_NAME } from './data-dir-lock';
import { withholdModeBits } from './data-dir-modes';
import { eventStoreKind } from './event-store-config';
import { resolvedPath } from './resolved-path';

/**
 * Creates `dir`'s missing directories one at a time, from the nearest existing one down. Node's recursive
 * `mkdir` loops for ever (silently, burning CPU) on a path whose parent exists but refuses a new entry with
 * ENOENT, as `/proc` does: one level at a time, that refusal is thrown.
 * @throws the file system's error (ErrnoException) of the first directory that cannot be created.
 */
function createMissingDirectories(dir: string): void {
  const missing: string[] = [];
  for (let current = path.resolve(dir); !fs.lstatSync(current, { throwIfNoEntry: false }); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const each of missing) fs.mkdirSync(each);
}

/** The file names in `DATA_DIR` the service writes (when they exist they must be writable too). */
const DATA_DIR_FILES = [
  'events.sqlite',
  'events.sqlite-wal',
  'events.sqlite-shm',
  'read-models.sqlite',
  'read-models.sqlite-wal',
  'read-models.sqlite-shm',
  'service.lock',
];

/** This process's user for a refusal of a path it may not write: `, uid 1000 gid 1000`, or '' where the platform has none. */
function processUser(): string {
  const uid = process.getuid?.();
  return uid === undefined ? '' : `, uid ${uid}${process.getgid ? ` gid ${process.getgid()}` : ''}`;
}

/**
 * The refusal of a `dataDir` (or a file in it) this process may not write: names DATA_DIR, the path, the user and the fix.
 * @param what the path refused (`dataDir` itself or a file in it); `code` the access error (EACCES, EPERM).
 */
function unwritableDataDir(dataDir: string, what: string, code: string): ConfigurationError {
  return new ConfigurationError({
    variable: 'DATA_DIR',
    value: dataDir,
    problem: `${what === dataDir ? 'is' : `${what} is`} not writable by this process (${code}${processUser()})`,
    fix: "make it writable by the service's user (chown or chmod; on Kubernetes a securityContext fsGroup for the volume), or point DATA_DIR at a writable directory",
  });
}

/**
 * Creates `dataDir` (and its parents) when missing, and checks that this process may write it and the
 * store's files already in it (`access`: `fs.accessSync`, replaced in tests).
 * @throws ConfigurationError naming `DATA_DIR` when it is a file (or another non-directory), when
 *   it cannot be created (the file system's error code, e.g. a parent that is a file, no permission, a
 *   file system that takes no new directory such as `/proc`), or when it or one of its files is not writable (EACCES).
 */
export function ensureDataDir(dataDir: string, access: (p: string, mode: number) => void = fs.accessSync): void {
  try {
    const stat = fs.statSync(dataDir, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) {
      throw new ConfigurationError({
        variable: 'DATA_DIR',
        value: dataDir,
        problem: 'is a file, not a directory',
        fix: 'point DATA_DIR at a directory (it is created when missing)',
      });
    }
    createMissingDirectories(dataDir);
    fs.mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    const code = fileSystemCause(dataDir, (err as NodeJS.ErrnoException).code ?? 'error');
    if (code === 'EROFS') throw readOnlyDataDir(dataDir);
    throw new ConfigurationError({
      variable: 'DATA_DIR',
      value: dataDir,
      problem: `cannot be created (${code})`,
      fix: 'point DATA_DIR at a directory this process may create or write',
    });
  }
  // An existing directory (a volume owned by another user): refused here by name, not later by SQLite's "unable to open database file".
  for (const what of [dataDir, ...DATA_DIR_FILES.map((name) => path.join(dataDir, name))]) {
    if (what !== dataDir && !fs.existsSync(what)) continue;
    try {
      access(what, what === dataDir ? fs.constants.W_OK | fs.constants.X_OK : fs.constants.R_OK | fs.constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      if (code === 'EROFS') throw readOnlyDataDir(dataDir);
      if (code === 'EACCES' || code === 'EPERM') throw unwritableDataDir(dataDir, what, code);
    }
  }
}

/** `dir` and the paths of the entries in it (the claims' lock files); `dir` alone when it cannot be listed (missing, not a directory, not readable). */
function withEntries(dir: string): string[] {
  try {
    return [dir, ...fs.readdirSync(dir).map((name) => path.join(dir, name))];
  } catch {
    return [dir];
  }
}

/** What the service keeps in `DATA_DIR` beside {@link DATA_DIR_FILES}: the lock's holder record (the claims directory is the store's, beside its file). */
const DATA_DIR_OTHER_ENTRIES = [LOCK_HOLDER_FILE_NAME];

/**
 * Takes read access for other users (and group write) away from the service's files that this
 * process's user owns: `DATA_DIR` and the service's entries in it, and with the embedded store its
 * events file (wherever `SQLITE_EVENTS_FILE` puts it), its `-wal` and `-shm` files and its claims
 * directory with its lock files, beside the file's real path; symbolic links followed. For files an
 * earlier version wrote under umask 022 (0644 in a 0755 directory); what the service creates now
 * withholds those bits already (`data-dir-modes.ts`).
 * Called at the service's start and by the read-model rebuild, after their checks. Never throws;
 * returns the paths changed.
 */
export function withholdModeBitsFromServiceFiles(config: ServiceConfig): string[] {
  const { dataDir, sqliteEventsFile } = config;
  const inDataDir = [dataDir, ...[...DATA_DIR_FILES, ...DATA_DIR_OTHER_ENTRIES].map((name) => path.join(dataDir, name))];
  // SQLite keeps the -wal and -shm files beside the store file's real path, and the claims are beside it too (realStoreFile)
  const real = realStoreFile(sqliteEventsFile);
  const store =
    eventStoreKind(config) === 'sqlite' ? [...new Set([sqliteEventsFile, real])].flatMap((file) => EVENTS_FILE_SUFFIXES.map((suffix) => file + suffix)) : [];
  if (store.length > 0) store.push(...withEntries(sqliteClaimsDirectory(real)));
  return withholdModeBits([...new Set([...inDataDir, ...store])]);
}

/**
 * For tools that read an existing embedded store (the read-model rebuild): `dataDir` must be an
 * existing directory and `config.sqliteEventsFile` an existing file, so a mistyped `DATA_DIR` is refused
 * instead of creating an empty store.
 * @throws ConfigurationError naming `DATA_DIR` (missing, or a file) or the events file
 *   (`SQLITE_EVENTS_FILE` when it is not the default `<DATA_DIR>/events.sqlite`) when it does not exist or is not a file.
 */
export function requireExistingSqliteStore(config: Pick<ServiceConfig, 'dataDir' | 'sqliteEventsFile'>): void {
  const { dataDir, sqliteEventsFile: eventsFile } = config;
  const eventsFileFromEnv = eventsFile !== path.join(dataDir, 'events.sqlite');
  const dir = fs.statSync(dataDir, { throwIfNoEntry: false });
  const fix = "point DATA_DIR at the service's data directory";
  if (!dir) throw new ConfigurationError({ variable: 'DATA_DIR', value: dataDir, problem: 'does not exist', fix });
  if (!dir.isDirectory()) throw new ConfigurationError({ variable: 'DATA_DIR', value: dataDir, problem: 'is a file, not a directory', fix });
  const file = fs.statSync(eventsFile, { throwIfNoEntry: false });
  if (file?.isFile()) return;
  throw new ConfigurationError({
    ...(eventsFileFromEnv ? { variable: 'SQLITE_EVENTS_FILE', value: eventsFile } : { variable: 'DATA_DIR', value: dataDir }),
    problem: file ? `${eventsFile} is not a file` : `no event store (${eventsFile} does not exist)`,
    fix: `point ${eventsFileFromEnv ? 'SQLITE_EVENTS_FILE at the store' : 'DATA_DIR at the directory'} the service wrote its events to`,
  });
}

/** The store's files beside an events file `eventsFile` that SQLite writes (when they exist they must be writable too). */
const EVENTS_FILE_SUFFIXES = ['', '-wal', '-shm'];

/**
 * The file of the service's own in `dataDir` (the read models, the lock, the lock's holder record,
 * or one of their `-wal` and `-shm` files) that `eventsFile` is, compared once symbolic links are
 * resolved on both sides ({@link resolvedPath}: a `DATA_DIR` reached through a link, an events file
 * that is a link, dangling or not, to one of them): its name in `dataDir` (`read-models.sqlite`) and,
 * when the paths as written differ, the resolved path they share (`through`); undefined when it is none.
 * The two stores would share one file, each taking the other's `user_version` for a schema version
 * (newcomer ncverify49 F3; ncops73 F1: through a link every write answered 503 and the errors blamed a newer build).
 */
function sharedServiceFile(dataDir: string, eventsFile: string): { name: string; through?: string } | undefined {
  const names = [READ_MODEL_FILE_NAME, LOCK_FILE_NAME, LOCK_HOLDER_FILE_NAME].flatMap((name) => EVENTS_FILE_SUFFIXES.map((suffix) => name + suffix));
  const written = names.find((name) => path.join(dataDir, name) === eventsFile);
  if (written !== undefined) return { name: written };
  const real = resolvedPath(eventsFile);
  const realDataDir = resolvedPath(dataDir);
  const linked = names.find((name) => path.join(realDataDir, name) === real || resolvedPath(path.join(dataDir, name)) === real);
  return linked === undefined ? undefined : { name: linked, through: real };
}

/**
 * For the service: an events file set with `SQLITE_EVENTS_FILE` (another path than the default
 * `<DATA_DIR>/events.sqlite`, which {@link ensureDataDir} provides for) must be a file (or missing:
 * it is created, a new store) in an existing directory this process may write (SQLite creates the
 * `-wal` and `-shm` files and the claims directory beside it), so a mistyped path is refused instead
 * of becoming a new, empty store in a new directory, and a path SQLite cannot open is refused by
 * name instead of by SQLite's "unable to open database file" (exit code 1). `access` is
 * `fs.accessSync` (replaced in tests: a process running as root may write anything).
 * @throws ConfigurationError naming `DATA_DIR` when the default `<DATA_DIR>/events.sqlite` is a
 *   symbolic link to a file the service keeps there ({@link sharedServiceFile}). Naming
 *   `SQLITE_EVENTS_FILE` (the path as resolved) when it is a file the
 *   service keeps in `DATA_DIR` ({@link sharedServiceFile}, symbolic links resolved), when its directory
 *   does not exist or is not a directory, when the path is a directory, when its directory is not
 *   writable by this process (EACCES, EPERM; EROFS: on a read-only file system), or when the file or
 *   its `-wal` or `-shm` file exists and is not writable.
 */
export function requireEventsFileDirectory(
  config: Pick<ServiceConfig, 'dataDir' | 'sqliteEventsFile'>,
  access: (p: string, mode: number) => void = fs.accessSync,
): void {
  const { dataDir, sqliteEventsFile: eventsFile } = config;
  if (eventsFile === path.join(dataDir, 'events.sqlite')) {
    // The default file, a symbolic link someone made to one of the service's other files: the same sharing, named by DATA_DIR.
    const shared = sharedServiceFile(dataDir, eventsFile);
    if (shared)
      throw new ConfigurationError({
        variable: 'DATA_DIR',
        value: dataDir,
        problem: `its events.sqlite is a symbolic link to a file the service keeps in DATA_DIR (${shared.name}, reached through it: ${shared.through ?? eventsFile}): the event store and it would share one file`,
        fix: `remove the link ${eventsFile} (with no events file, the service starts a new store there), or point it at the event store's own file`,
      });
    return;
  }
  const dir = path.dirname(eventsFile);
  let isDirectory: boolean | null;
  try {
    isDirectory = fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? null;
  } catch {
    isDirectory = null; // ENOTDIR: a path through a file
  }
  const refuse = (problem: string, fix: string) => new ConfigurationError({ variable: 'SQLITE_EVENTS_FILE', value: eventsFile, problem, fix });
  const shared = sharedServiceFile(dataDir, eventsFile);
  if (shared)
    throw refuse(
      `is a file the service keeps in DATA_DIR (${shared.name}${shared.through ? `, reached through a symbolic link: ${shared.through}` : ''}): the event store and it would share one file`,
      'point SQLITE_EVENTS_FILE at a file of its own, e.g. <DATA_DIR>/events.sqlite (the default) or a file on another volume',
    );
  if (!isDirectory)
    throw refuse(
      isDirectory === false ? `${dir} is not a directory` : `its directory ${dir} does not exist`,
      'point SQLITE_EVENTS_FILE at a file in an existing directory (a missing file is created: a new store), or create the directory first',
    );
  if (fs.statSync(eventsFile, { throwIfNoEntry: false })?.isDirectory())
    throw refuse('is a directory, not a file', 'point SQLITE_EVENTS_FILE at a file in an existing directory (a missing file is created: a new store)');
  const writableFix =
    "make it writable by the service's user (chown or chmod; on Kubernetes a securityContext fsGroup for the volume), or point SQLITE_EVENTS_FILE at a file in a writable directory";
  // SQLite writes beside the store file's real path (a symbolic link resolved): that directory, the file and its -wal and -shm
  const real = realStoreFile(eventsFile);
  const writtenDir = path.dirname(real);
  for (const what of [writtenDir, ...EVENTS_FILE_SUFFIXES.map((suffix) => real + suffix)]) {
    if (what !== writtenDir && !fs.existsSync(what)) continue;
    try {
      access(what, what === writtenDir ? fs.constants.W_OK | fs.constants.X_OK : fs.constants.R_OK | fs.constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      const named = what === writtenDir ? `its directory ${writtenDir}` : what === eventsFile ? '' : what;
      if (code === 'EROFS')
        throw refuse(
          `${named || 'it'} is on a read-only file system (EROFS): the service cannot write its event store there`,
          'mount it read-write, or point SQLITE_EVENTS_FILE at a file in a writable directory',
        );
      if (code === 'EACCES' || code === 'EPERM')
        throw refuse(`${named ? `${named} is` : 'is'} not writable by this process (${code}${processUser()})`, writableFix);
    }
  }
}

/**
 * For the service on the embedded store: the compaction claims' directory beside the events file's
 * real path (`sqliteClaimsDirectory`: `events-claims` beside `events.sqlite`), when it exists, must be
 * a directory this process may write, with lock files it may read and write (`access`:
 * `fs.accessSync`, replaced in tests). One left by another user (a restore
 * run as root) would make every compaction through the model log a warn line and run without its
 * claim, silently letting two replicas call the model for one session (newcomer ncfiles63 F5). A
 * missing one is created when first needed.
 * @throws ConfigurationError naming `SQLITE_EVENTS_FILE` when it is set to another path than the
 *   default, else `DATA_DIR`: the directory (not a directory, or not writable) or the lock file, the
 *   access error (EACCES, EPERM, EROFS), the user, and the fix (chown it, or remove it while no
 *   replica runs: it holds no data).
 */
export function requireWritableClaimsDirectory(
  config: Pick<ServiceConfig, 'dataDir' | 'sqliteEventsFile'>,
  access: (p: string, mode: number) => void = fs.accessSync,
): void {
  const { dataDir, sqliteEventsFile: eventsFile } = config;
  // beside the store file's real path, as the claims are taken (realStoreFile)
  const claims = sqliteClaimsDirectory(realStoreFile(eventsFile));
  const fromEnv = eventsFile !== path.join(dataDir, 'events.sqlite');
  const refuse = (problem: string) =>
    new ConfigurationError({
      ...(fromEnv ? { variable: 'SQLITE_EVENTS_FILE', value: eventsFile } : { variable: 'DATA_DIR', value: dataDir }),
      problem: `${problem}: compactions through the model would run without their claim`,
      fix: "make it the service's user's (chown -R on the claims directory), or remove it while no replica runs (it holds no data and is created again)",
    });
  const stat = fs.statSync(claims, { throwIfNoEntry: false });
  if (!stat) return;
  if (!stat.isDirectory()) throw refuse(`the compaction claims' directory ${claims} is not a directory`);
  // the directory (read, written and searched), then each lock file in it (a claim opens its file for reading and writing)
  const refused = (what: string, err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return undefined;
    const named = what === claims ? `the compaction claims' directory ${claims}` : `the compaction claims' lock file ${what}`;
    return refuse(`${named} is not writable by this process (${code}${processUser()})`);
  };
  let names: string[];
  try {
    access(claims, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
    names = fs.readdirSync(claims);
  } catch (err) {
    throw refused(claims, err) ?? err;
  }
  for (const what of names.map((name) => path.join(claims, name))) {
    try {
      access(what, fs.constants.R_OK | fs.constants.W_OK);
    } catch (err) {
      const refusal = refused(what, err);
      if (refusal) throw refusal;
    }
  }
}

/**
 * The refusal of a `dataDir` on a read-only file system (EROFS): names DATA_DIR and says to mount
 * it read-write or point DATA_DIR elsewhere. One wording for creating it, locking it and writing
 * the lock's holder file.
 */
export function readOnlyDataDir(dataDir: string): ConfigurationError {
  return new ConfigurationError({
    variable: 'DATA_DIR',
    value: dataDir,
    problem: 'is on a read-only file system (EROFS): the service cannot write its lock, event store or read models there',
    fix: 'mount it read-write, or point DATA_DIR at a writable directory',
  });
}

/**
 * The cause of a failure `code` (e.g. `ENOENT`) to create or write under `target`: `EROFS` when the
 * nearest existing directory above it is on a read-only file system (a recursive mkdir on a
 * read-only mount may report ENOENT), else `code`. `access` is `fs.accessSync` (replaced in tests).
 */
export function fileSystemCause(target: string, code: string, access: (p: string, mode: number) => void = fs.accessSync): string {
  if (code === 'EROFS') return code;
  let dir = path.resolve(target);
  for (;;) {
    try {
      access(dir, fs.constants.W_OK);
      return code;
    } catch (err) {
      const found = (err as NodeJS.ErrnoException).code;
      if (found === 'EROFS') return 'EROFS';
      if (found !== 'ENOENT') return code;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return code;
    dir = parent;
  }
}

/** What {@link refuseFullDisk} refuses: the service's start, or `npm run rebuild-read-models`. */
export type FullDiskRefused = 'start' | 'rebuild';

/** Per refused action: who needs the space, and what to do once it is freed. */
const FULL_DISK_WORDING: Readonly<Record<FullDiskRefused, { needs: string; then: string }>> = {
  start: { needs: 'the service needs to write its log and read models', then: 'start again' },
  rebuild: { needs: 'the rebuild needs to write the read models', then: 'run npm run rebuild-read-models again' },
};

/**
 * Refuses to start on a full disk: each of `dirs` (DATA_DIR, where the read models are, and the
 * embedded store's directory) must have at least `PROBE_MIN_FREE_BYTES` (1 MiB) free on its file
 * system, the write probe's rule. Started with less, the service would listen while its projector
 * could not write the read models and every write was refused; a rebuild (`refused` `rebuild`)
 * would fail part-way with the read models half written. Not a configuration error (exit
 * code 1: freeing space fixes it, not a setting). A file system whose free space cannot be read is
 * left to the files' opening.
 * @throws Error `the disk is full: …: free space on its file system, then start again` (a rebuild:
 *   `then run npm run rebuild-read-models again`), naming the directory and its free bytes.
 */
export function refuseFullDisk(dirs: readonly string[], refused: FullDiskRefused = 'start'): void {
  const { needs, then } = FULL_DISK_WORDING[refused];
  for (const dir of new Set(dirs)) {
    let free: number | null;
    try {
      free = freeBytesShort(dir);
    } catch {
      continue;
    }
    if (free !== null)
      throw new Error(
        `the disk is full: the file system holding ${dir} has ${free} bytes free, fewer than the ${PROBE_MIN_FREE_BYTES} ${needs}: free space on its file system, then ${then} (nothing acknowledged is lost)`,
      );
  }
}
