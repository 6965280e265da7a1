/**
 * `npm run conformance -- <dir>`: runs every vector of `<dir>` (default: the shared
 * conformance/vectors) through the HTTP API of a fresh service, prints one line per vector and a
 * final `N passed, M failed`; exits 1 on any failure, 2 when the folder cannot be read. Ctrl-C
 * (SIGINT) or SIGTERM stops it: the service is closed, its temporary store removed, one line says
 * how far it got, exit code 130 (143 on SIGTERM); a second one ends it at once.
 */
import * as fs from 'node:fs';
import { Command } from 'commander';
import { SHARED_DIR, VECTORS_DIR } from '../support/shared-dir';
import { interruptedExitCode, RunInterrupted, stopOnSignals } from '../../apps/replay/src/stop-on-signals';
import { runConformance } from './conformance-runner';

/**
 * What to say when `dir` is not a folder: the fix, whether it was the default (`isDefault`: the
 * team's shared folder beside the clone, or `SHARED_DIR`) or a folder given on the command line.
 */
function missingVectorsMessage(dir: string, isDefault: boolean): string {
  const give = 'or pass a folder of vector files: npm run conformance -- <dir>';
  if (!isDefault) return `conformance: ${dir} is not a readable folder of vector files: check the path, ${give}`;
  return (
    `conformance: ${dir} is not a readable folder of vector files: the vectors are in the team's shared folder, expected at ${SHARED_DIR}; ` +
    `link or copy it there (e.g. ln -s /path/to/shared ${SHARED_DIR}), set SHARED_DIR to where it is, ${give}`
  );
}

async function main(): Promise<void> {
  const program = new Command()
    .name('conformance')
    .description('Run compaction conformance vectors through the HTTP API of a fresh service instance')
    .argument('[dir]', 'folder of vector JSON files', VECTORS_DIR)
    .parse();
  const dir = program.args[0] ?? VECTORS_DIR;
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    process.stderr.write(`${missingVectorsMessage(dir, program.args[0] === undefined)}\n`);
    process.exit(2);
  }
  let passed = 0;
  let failed = 0;
  const stop = stopOnSignals();
  const results = await runConformance(dir, {
    signal: stop.signal,
    onResult: (r) => {
      if (r.problems.length === 0) {
        passed++;
        process.stdout.write(`PASS ${r.id}\n`);
      } else {
        failed++;
        process.stdout.write(`FAIL ${r.id}: ${r.problems.join('; ')}\n`);
      }
    },
  });
  if (results.length === 0) process.stdout.write(`no vector files in ${dir}\n`);
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  process.exit(failed > 0 || results.length === 0 ? 1 : 0);
}

main().catch((err: Error) => {
  process.stderr.write(`conformance: ${err.message}\n`);
  process.exit(err instanceof RunInterrupted ? interruptedExitCode(err.signal) : 2);
});
