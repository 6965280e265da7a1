/**
 * `resolvedPath`: where a path really leads, symbolic links resolved, also for a file not created yet
 * (newcomer ncops73 F1: the events file and the read models compared as written, not as reached).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolvedPath } from './resolved-path';

describe('resolvedPath', () => {
  let root: string;
  beforeAll(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'resolved-path-')));
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'link'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('resolves an existing path, and a missing one under a linked directory (its nearest existing parent resolved)', () => {
    fs.writeFileSync(path.join(root, 'real', 'f'), '');
    expect(resolvedPath(path.join(root, 'link', 'f'))).toBe(path.join(root, 'real', 'f'));
    expect(resolvedPath(path.join(root, 'link', 'missing', 'deeper.sqlite'))).toBe(path.join(root, 'real', 'missing', 'deeper.sqlite'));
    expect(resolvedPath(path.join(root, 'link', '..', 'real'))).toBe(path.join(root, 'real'));
  });

  it('follows a dangling link (absolute, relative, through another link) to the file it names', () => {
    fs.symlinkSync(path.join(root, 'link', 'later.sqlite'), path.join(root, 'abs.sqlite'));
    fs.symlinkSync('later.sqlite', path.join(root, 'real', 'rel.sqlite'));
    fs.symlinkSync(path.join(root, 'abs.sqlite'), path.join(root, 'link', 'chain.sqlite'));
    for (const name of ['abs.sqlite', 'link/rel.sqlite', 'real/chain.sqlite'])
      expect(resolvedPath(path.join(root, name))).toBe(path.join(root, 'real', 'later.sqlite'));
  });

  it('never throws on a loop of links: it ends at the bound', () => {
    fs.symlinkSync(path.join(root, 'loop-b'), path.join(root, 'loop-a'));
    fs.symlinkSync(path.join(root, 'loop-a'), path.join(root, 'loop-b'));
    expect(() => resolvedPath(path.join(root, 'loop-a', 'x'))).not.toThrow();
    expect(resolvedPath(path.join(root, 'loop-a'))).toMatch(/loop-[ab]$/);
  });

  it('makes a relative path absolute', () => {
    expect(path.isAbsolute(resolvedPath('some/where.sqlite'))).toBe(true);
  });
});
