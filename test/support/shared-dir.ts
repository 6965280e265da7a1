/**
 * Locates the team's shared folder (`<repo>/../shared`: DESIGN.md, conformance vectors, real
 * conversations). A user's clone has no such folder: suites that need it call
 * {@link describeWithShared}, which skips them with one clear line instead of failing.
 *
 * `SHARED_DIR` in the environment overrides the location.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sharedDirLocation } from './shared-dir-location';

/** Absolute path of the shared folder (it may not exist). */
export const SHARED_DIR = sharedDirLocation();

/** `<shared>/conformance/vectors`. */
export const VECTORS_DIR = path.join(SHARED_DIR, 'conformance', 'vectors');

/** `<shared>/data/tau-bench-airline-gpt4o.json`: 150 real agent sessions in OpenAI chat format. */
export const TAU_BENCH_FILE = path.join(SHARED_DIR, 'data', 'tau-bench-airline-gpt4o.json');

/** True when `p` exists. */
export function sharedAvailable(p: string = SHARED_DIR): boolean {
  return fs.existsSync(p);
}

/**
 * `describe` when `needed` exists; otherwise `fn` is never called and one skipped test stands for
 * the suite, with a title that says why, printed once to stderr so the reason shows in CI logs.
 */
export function describeWithShared(title: string, needed: string, fn: () => void): void {
  if (sharedAvailable(needed)) {
    describe(title, fn);
    return;
  }
  process.stderr.write(`skipped "${title}": ${needed} not found (the shared folder is beside the repo in CI; set SHARED_DIR to point at it)\n`);
  // Not `describe.skip(title, fn)`: jest still runs a skipped describe's body to collect its tests,
  // and these bodies read the missing files. One pending test stands for the whole suite.
  describe(`${title} (skipped: ${needed} not found)`, () => {
    it.skip(`needs ${needed}`, () => undefined);
  });
}
