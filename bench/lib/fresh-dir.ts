/** Temporary data directories of the benchmarks. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A fresh temporary directory under `root` (default: the OS temp dir; use a disk-backed
 * directory so that fsync costs what it costs in production). Removed by the caller.
 */
export function freshDir(root: string | undefined, label: string): string {
  const base = root ?? os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, `bench-${label}-`));
}
