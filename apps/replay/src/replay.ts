/**
 * `npm run replay -- <file> [options]`: replays agent sessions through the session service and
 * reports how compaction behaved (issue 5). See `--help` and apps/replay/README.md.
 *
 * Exit codes: 0 no validation failure; 1 validation failures (listed); 2 a problem of the input
 * or environment (unreadable file, wrong shape including a message the service's parser would
 * reject, bad option, no service at `--url`, a setting the in-process service refuses, or a 4xx
 * answer of the service during the run): one line on stderr; `--help` and a usage error are
 * answered before run-replay.ts (and the service) is loaded; 3 an unexpected error (a 5xx answer of the service or a bug of the replay):
 * "unexpected error" and the stack trace; 130 (143 on SIGTERM) interrupted by Ctrl-C: no new turn
 * is sent, the in-process service is closed and its temporary store removed, no report is written,
 * and one line says how far it got. A second Ctrl-C while it closes ends the process at once.
 */
import { Command, InvalidArgumentError } from 'commander';
import { parseScriptArguments } from '../../session-service/src/script-command-line';
import { REPLAY_UNEXPECTED_EXIT_CODE, REPLAY_USAGE_EXIT_CODE, ReplayError, ReplayInterrupted } from './replay-error';
import type { ReplayOptions } from './run-replay';
import { interruptedExitCode, stopOnSignals } from './stop-on-signals';

function integer(name: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError(`${name} must be a positive integer.`);
    return Number(value);
  };
}

/** Builds the command-line parser (exported for tests). */
export function buildProgram(): Command {
  return new Command()
    .name('replay')
    .description(
      'Replay agent sessions (tau-bench shape or plain OpenAI message arrays) through the session service, turn by turn, with auto-compaction; validate the window after every turn; report.',
    )
    .argument('<file>', 'JSON file: [{ task_id, traj: [messages] }] or [[messages]]')
    .option('--url <url>', 'base URL of a running service (default: start one in-process on a temporary store)')
    .option('--api-key <key>', 'API key for a service that requires one (default: $REPLAY_API_KEY)')
    .option(
      '--strategy <strategy>',
      'JSON, short form (token-count:2000, sliding-window:12, recursive-summarization:8,2, rolling-summary:2,800) or "all"',
      'all',
    )
    .option(
      '--trigger <trigger>',
      'JSON or short form (token-count:3000, turn-count:6, a|b = any-of, a&b = all-of, none); with "all" replaces the built-in triggers',
    )
    .option('--estimator <name>', 'cl100k_base, o200k_base or chars', 'cl100k_base')
    .option('--sessions <n>', 'replay only the first N sessions', integer('--sessions'))
    .option('--concurrency <n>', 'sessions replayed at once', integer('--concurrency'), 4)
    .option('--out <dir>', 'report directory', './replay-report')
    .option('--html-sessions <n>', 'sessions per strategy charted in report.html', integer('--html-sessions'), 3)
    .option('--fidelity-sessions <n>', 'sessions measured for context fidelity (default: all replayed)', integer('--fidelity-sessions'))
    .option('--no-fidelity', 'skip the context fidelity section (facts retained, recall reach, baselines)')
    .option('--no-progress', 'no progress output')
    .showHelpAfterError(false)
    .exitOverride();
}

/**
 * Parses `argv`, runs the replay, and returns the exit code (0 ok, 1 validation failures, 2 input,
 * usage or environment problem, including a 4xx answer of the service; 130 interrupted by SIGINT,
 * 143 by SIGTERM, after closing what it opened); anything else rejects (exit 3 from the CLI).
 */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const exitCode = parseScriptArguments(program, argv);
  if (exitCode !== undefined) return exitCode;
  const file = program.args[0];
  const o = program.opts();
  const options: ReplayOptions = {
    file,
    url: o.url,
    apiKey: o.apiKey ?? process.env.REPLAY_API_KEY,
    strategy: o.strategy,
    trigger: o.trigger,
    estimator: o.estimator,
    sessions: o.sessions,
    concurrency: o.concurrency,
    out: o.out,
    htmlSessions: o.htmlSessions,
    progress: o.progress,
    fidelity: o.fidelity,
    fidelitySessions: o.fidelitySessions,
  };
  // Ctrl-C (or SIGTERM) stops the run cleanly; a second one ends the process at once (Node's default).
  const stop = stopOnSignals();
  try {
    // Loaded once the arguments are checked: `--help` and a usage error answer at once (run-replay's modules take seconds under ts-node).
    const { runReplay } = await import('./run-replay');
    const report = await runReplay({ ...options, signal: stop.signal });
    return report.validationFailures === 0 ? 0 : 1;
  } catch (err) {
    if (err instanceof ReplayInterrupted) {
      process.stderr.write(`replay: ${err.message}\n`);
      return interruptedExitCode(err.signal);
    }
    if (err instanceof ReplayError) {
      process.stderr.write(`replay: ${err.message}\n`);
      return REPLAY_USAGE_EXIT_CODE;
    }
    throw err;
  } finally {
    stop.dispose();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`replay: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(REPLAY_UNEXPECTED_EXIT_CODE);
    },
  );
}
