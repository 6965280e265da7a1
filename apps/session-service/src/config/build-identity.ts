/**
 * Which build of the service runs: its release (`version` of the service's `package.json`), the
 * commit it was built from, and the Node.js version running it. Shown by `/health` (`version`,
 * `commit`), `/metrics` (`session_service_build_info`) and the start-up's `listening on` line.
 *
 * The commit is, in this order: `BUILD_COMMIT` (set at build or deploy time, e.g. the Docker image's
 * `--build-arg BUILD_COMMIT=$(git rev-parse HEAD)`); else the commit checked out where the service's
 * `package.json` is, read from its `.git` at start without running git (`HEAD`, the ref file it names
 * or `packed-refs`; a `.git` file of a `git worktree` followed to its git directory); else `unknown`
 * (an image built without the argument, a copy without `.git`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The `name` of the service's own `package.json` (the repository root's; `libs/client` has its own). */
export const SERVICE_PACKAGE_NAME = 'session-memory-compaction';

/** What stands for a version or commit that cannot be learnt. */
export const UNKNOWN = 'unknown';

/** Where the running build's commit was learnt. */
export type CommitSource = 'BUILD_COMMIT' | 'git checkout' | 'unknown';

/** The running build. */
export interface BuildIdentity {
  /** The service's release: `version` of its `package.json` (e.g. `0.1.0`); `unknown` when that file cannot be read. */
  readonly version: string;
  /** The commit it was built from: `BUILD_COMMIT`, else the checkout's `HEAD` (a full hexadecimal object id), else `unknown`. */
  readonly commit: string;
  /** Where {@link commit} came from. */
  readonly commitSource: CommitSource;
  /** Node.js running it (`process.version`, e.g. `v20.19.4`). */
  readonly nodeVersion: string;
}

/** A full object id: SHA-1 (40 hexadecimal digits) or SHA-256 (64). */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** The file's text, trimmed; undefined when it cannot be read (missing, a directory, no permission). */
function readTrimmed(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * The directory holding the service's `package.json` (named {@link SERVICE_PACKAGE_NAME}), looked for
 * from `from` upwards: the repository root from the sources (`apps/session-service/src/config`) and
 * from `dist/` alike, `/app` in the Docker image. Undefined when none is found.
 */
export function serviceRoot(from: string = __dirname): string | undefined {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const text = readTrimmed(path.join(dir, 'package.json'));
    if (text !== undefined) {
      try {
        if ((JSON.parse(text) as { name?: unknown }).name === SERVICE_PACKAGE_NAME) return dir;
      } catch {
        // not JSON: not ours, look further up
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** `version` of `root/package.json`; {@link UNKNOWN} when it cannot be read or holds none. */
export function packageVersion(root: string | undefined): string {
  if (root === undefined) return UNKNOWN;
  try {
    const version = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' && version.trim() !== '' ? version.trim() : UNKNOWN;
  } catch {
    return UNKNOWN;
  }
}

/**
 * The commit checked out in `root` (a full object id, lower case), read from `root/.git` without
 * running git: a `.git` directory, or a `.git` file (`gitdir: <path>`, as `git worktree add` and
 * submodules write) followed to its git directory; its `HEAD`, either detached (an object id) or
 * `ref: refs/…`, that ref looked up as a loose ref file (the worktree's git directory first, then
 * the common one its `commondir` names) and then in `packed-refs`. Undefined when there is no
 * `.git`, or it cannot be read (e.g. a branch with no commit yet, a ref that is not an object id).
 */
export function checkoutCommit(root: string): string | undefined {
  const dotGit = path.join(root, '.git');
  let gitDir = dotGit;
  try {
    if (fs.statSync(dotGit).isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'))?.[1]?.trim();
      if (!pointer) return undefined;
      gitDir = path.resolve(root, pointer);
    }
  } catch {
    return undefined;
  }
  const head = readTrimmed(path.join(gitDir, 'HEAD'));
  if (head === undefined) return undefined;
  if (OBJECT_ID.test(head.toLowerCase())) return head.toLowerCase();
  const ref = /^ref:\s*(refs\/\S+)$/.exec(head)?.[1];
  // A ref names a file below the git directory: never a path leaving it.
  if (ref === undefined || ref.split('/').includes('..')) return undefined;
  const common = readTrimmed(path.join(gitDir, 'commondir'));
  const commonDir = common ? path.resolve(gitDir, common) : gitDir;
  for (const dir of commonDir === gitDir ? [gitDir] : [gitDir, commonDir]) {
    const loose = readTrimmed(path.join(dir, ref))?.toLowerCase();
    if (loose !== undefined && OBJECT_ID.test(loose)) return loose;
  }
  // packed-refs: `<id> <ref>` lines, `#` a comment, `^<id>` the peeled tag before it.
  for (const line of (readTrimmed(path.join(commonDir, 'packed-refs')) ?? '').split('\n')) {
    const [id, name] = line.trim().split(/\s+/);
    if (name === ref && OBJECT_ID.test(id?.toLowerCase() ?? '')) return id.toLowerCase();
  }
  return undefined;
}

/**
 * The running build's identity: `version` from the `package.json` of `root` (default: {@link serviceRoot});
 * the commit `buildCommit` (`BUILD_COMMIT`, already checked) when given, else {@link checkoutCommit} of `root`,
 * else {@link UNKNOWN}; `nodeVersion` `process.version`. Never throws: what cannot be read is `unknown`.
 */
export function resolveBuildIdentity(options: { buildCommit?: string; root?: string | null; nodeVersion?: string } = {}): BuildIdentity {
  const root = options.root === undefined ? serviceRoot() : (options.root ?? undefined);
  const nodeVersion = options.nodeVersion ?? process.version;
  const version = packageVersion(root);
  if (options.buildCommit !== undefined) return { version, commit: options.buildCommit, commitSource: 'BUILD_COMMIT', nodeVersion };
  const fromCheckout = root === undefined ? undefined : checkoutCommit(root);
  if (fromCheckout !== undefined) return { version, commit: fromCheckout, commitSource: 'git checkout', nodeVersion };
  return { version, commit: UNKNOWN, commitSource: 'unknown', nodeVersion };
}
