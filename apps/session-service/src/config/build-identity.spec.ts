/**
 * The running build's identity (operator finding: neither `/health` nor `/metrics` said which build ran):
 * the version of the service's package.json, the commit from BUILD_COMMIT or else read from the checkout's
 * `.git` without running git (a branch's loose ref, packed-refs, a detached HEAD, a `git worktree`'s `.git`
 * file), `unknown` when neither says.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkoutCommit, resolveBuildIdentity, serviceRoot, SERVICE_PACKAGE_NAME } from './build-identity';
import { loadServiceConfig } from './service-config';

const A = 'a'.repeat(40);
const B = '0123456789abcdef0123456789abcdef01234567';
const C = 'c'.repeat(64);

describe('build identity', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  /** A directory with the service's package.json (version `version`) and the files `files` (path → text). */
  function checkout(files: Record<string, string>, version = '1.2.3'): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-identity-'));
    dirs.push(root);
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: SERVICE_PACKAGE_NAME, version }));
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
    }
    return root;
  }

  it('given a branch checked out, then its commit is read from the loose ref file', () => {
    const root = checkout({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': `${A}\n` });
    expect(checkoutCommit(root)).toBe(A);
  });

  it('given a branch whose ref is packed, then it is read from packed-refs (comments and peeled tags skipped)', () => {
    const root = checkout({
      '.git/HEAD': 'ref: refs/heads/release/2026-12\n',
      '.git/packed-refs': `# pack-refs with: peeled fully-peeled sorted\n${A} refs/heads/main\n${B} refs/heads/release/2026-12\n${C.slice(0, 40)} refs/tags/v1\n^${A}\n`,
    });
    expect(checkoutCommit(root)).toBe(B);
  });

  it('given a detached HEAD (SHA-1 or SHA-256), then HEAD itself is the commit', () => {
    expect(checkoutCommit(checkout({ '.git/HEAD': `${B}\n` }))).toBe(B);
    expect(checkoutCommit(checkout({ '.git/HEAD': `${C.toUpperCase()}\n` }))).toBe(C);
  });

  it('given a git worktree (.git is a file), then its own HEAD is followed, its branch read from the common git directory', () => {
    const main = checkout({ '.git/refs/heads/main': `${A}\n`, '.git/packed-refs': `${B} refs/heads/feature\n` });
    const worktreeGit = path.join(main, '.git', 'worktrees', 'feature');
    fs.mkdirSync(worktreeGit, { recursive: true });
    fs.writeFileSync(path.join(worktreeGit, 'HEAD'), 'ref: refs/heads/feature\n');
    fs.writeFileSync(path.join(worktreeGit, 'commondir'), '../..\n');
    const worktree = checkout({ '.git': `gitdir: ${worktreeGit}\n` });
    expect(checkoutCommit(worktree)).toBe(B);
  });

  it('given no .git, a branch with no commit yet, or a HEAD that names no ref, then no commit', () => {
    expect(checkoutCommit(checkout({}))).toBeUndefined();
    expect(checkoutCommit(checkout({ '.git/HEAD': 'ref: refs/heads/main\n' }))).toBeUndefined();
    expect(checkoutCommit(checkout({ '.git/HEAD': 'ref: ../../../etc/passwd\n' }))).toBeUndefined();
    expect(checkoutCommit(checkout({ '.git': 'not a gitdir line\n' }))).toBeUndefined();
  });

  it('BUILD_COMMIT wins over the checkout; without either the commit is unknown; the version is the package.json one', () => {
    const root = checkout({ '.git/HEAD': `${A}\n` }, '2.0.0-rc.1');
    expect(resolveBuildIdentity({ root, buildCommit: 'v2.0.0-rc.1-3-gabc1234', nodeVersion: 'v20.19.4' })).toEqual({
      version: '2.0.0-rc.1',
      commit: 'v2.0.0-rc.1-3-gabc1234',
      commitSource: 'BUILD_COMMIT',
      nodeVersion: 'v20.19.4',
    });
    expect(resolveBuildIdentity({ root })).toEqual({ version: '2.0.0-rc.1', commit: A, commitSource: 'git checkout', nodeVersion: process.version });
    expect(resolveBuildIdentity({ root: checkout({}) })).toMatchObject({ commit: 'unknown', commitSource: 'unknown' });
    expect(resolveBuildIdentity({ root: null })).toMatchObject({ version: 'unknown', commit: 'unknown' });
  });

  it("finds the service's package.json above this directory (the repository root, not libs/client's) for its version", () => {
    const root = serviceRoot(__dirname)!;
    const own = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string };
    expect(own.name).toBe(SERVICE_PACKAGE_NAME);
    expect(loadServiceConfig({}, false).build.version).toBe(own.version);
    expect(serviceRoot(os.tmpdir())).toBeUndefined();
  });

  it('BUILD_COMMIT: taken as given (trimmed); empty counts as unset; a space, a control character or over 128 characters is refused naming it', () => {
    expect(loadServiceConfig({ BUILD_COMMIT: ` ${B} ` }, false).build).toMatchObject({ commit: B, commitSource: 'BUILD_COMMIT' });
    expect(loadServiceConfig({ BUILD_COMMIT: '' }, false).build.commitSource).not.toBe('BUILD_COMMIT');
    for (const bad of ['abc def', 'abc\u0007', 'x'.repeat(129), 'café'])
      expect(() => loadServiceConfig({ BUILD_COMMIT: bad }, false)).toThrow(
        /^BUILD_COMMIT=.*: not a commit id: .*: set it to the commit the build was made from/,
      );
  });
});
