import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LOCK_HOLDER_FILE_NAME, lockDataDir, type DataDirCommand } from './data-dir-lock';

describe('the DATA_DIR lock names what holds it', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-lock-'));
    dirs.push(dir);
    return dir;
  };
  const refusal = (dir: string): string => {
    try {
      lockDataDir(dir).release();
      return 'not refused';
    } catch (err) {
      return String(err);
    }
  };

  it.each<[DataDirCommand | undefined, RegExp]>([
    [undefined, /in use by another service process \(pid \d+ on /],
    ['service', /in use by another service process \(pid \d+ on /],
    ['copy-store', /in use by another copy-store process \(pid \d+ on /],
    ['rebuild-read-models', /in use by another rebuild-read-models process \(pid \d+ on /],
  ])('given DATA_DIR held by %s, when another process takes it, then the refusal says which command holds it', (command, expected) => {
    const dir = tempDir();
    const held = lockDataDir(dir, command);
    try {
      expect(refusal(dir)).toMatch(expected);
      expect(refusal(dir)).toMatch(/stop the other process first/);
    } finally {
      held.release();
    }
    expect(refusal(dir)).toBe('not refused');
  });

  it('given a holder record written before the command was kept, then the holder is called a service process', () => {
    const dir = tempDir();
    const held = lockDataDir(dir, 'copy-store');
    try {
      const holderFile = path.join(dir, LOCK_HOLDER_FILE_NAME);
      const record = JSON.parse(fs.readFileSync(holderFile, 'utf8')) as Record<string, unknown>;
      expect(record.command).toBe('copy-store');
      delete record.command;
      fs.writeFileSync(holderFile, JSON.stringify(record));
      expect(refusal(dir)).toMatch(/in use by another service process \(pid /);
    } finally {
      held.release();
    }
  });
});
