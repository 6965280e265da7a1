/**
 * `npm run conformance -- <dir>`: runs every vector of `<dir>` (default: the shared
 * conformance/vectors) through the HTTP API of a fresh service, prints one line per vector and a
 * final `N passed, M failed`; exits 1 on any failure, 2 when the folder cannot be read or an
 * argument is refused (an unknown option, a second folder: one line, nothing run). Ctrl-C
 * (SIGINT) or SIGTERM stops it: the service is closed, its temporary store removed, one line says
 * how far it got, exit code 130 (143 on SIGTERM); a second one ends it at once.
 */
import { Command } from 'commander';
import { parseScriptArgumentsOrExit } from '../../apps/session-service/src/script-command-line';
import { VECTORS_DIR } from '../support/shared-dir';
import { vectorsFolder } from './vectors-folder';
import { interruptedExitCode, RunInterrupted, stopOnSignals } from '../../apps/replay/src/stop-on-signals';
import { holdSignalsWhileLoading, releaseLoadingSignals } from './loading-signals';

async function main(): Promise<void> {
  // Held already when run as npm run conformance (conformance.js); run directly, from here on.
  holdSignalsWhileLoading('conformance');
  const program = new Command()
    .name('conformance')
    .description('Run compaction conformance vectors through the HTTP API of a fresh service instance')
    .argument('[dir]', 'folder of vector JSON files', VECTORS_DIR)
    .allowExcessArguments(false);
  parseScriptArgumentsOrExit(program, process.argv.slice(2));
  // Also checked before ts-node loads when run as npm run conformance (conformance.js): the same line.
  const { dir, problem } = vectorsFolder(program.args[0]);
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(2);
  }
  // Loaded once the arguments and the folder are accepted: the service's modules take seconds under ts-node.
  const { runConformance } = await import('./conformance-runner');
  let passed = 0;
  let failed = 0;
  // A signal that came while the modules loaded (synchronously) is delivered at the event loop's next turn: to the loading handler.
  await new Promise((resolve) => setImmediate(resolve));
  releaseLoadingSignals();
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
