/**
 * The one kind of error the replay command reports as a single line (stderr, exit code 2):
 * a file it cannot read, a file of the wrong shape (including a message the service's parser
 * would reject), an option it cannot use, a service that does not answer, a request the service
 * refuses with a 4xx. Anything else (a 5xx, a bug) keeps its stack trace (exit code 3).
 */
import { USAGE_EXIT_CODE } from '../../session-service/src/script-command-line';
import { interruptedExitCode, RunInterrupted } from './stop-on-signals';

/** Exit code of the replay command when it stops on a {@link ReplayError}. */
export const REPLAY_USAGE_EXIT_CODE = USAGE_EXIT_CODE;

/** Exit code of the replay command on any other error (a 5xx answer, a bug): "unexpected error" and the stack. */
export const REPLAY_UNEXPECTED_EXIT_CODE = 3;

/** A problem of the input or the environment, described in one line that says what is wrong. */
export class ReplayError extends Error {
  override readonly name = 'ReplayError';
  /** @param message one line, no stack trace needed to understand it. */
  constructor(message: string) {
    super(message.replace(/\s*\n\s*/g, ' '));
  }
}

/** Exit code of the replay command stopped by SIGINT (Ctrl-C), as a shell reports a process ended by it (128 + 2; SIGTERM: 143, see {@link interruptedExitCode}). */
export const REPLAY_INTERRUPTED_EXIT_CODE = interruptedExitCode('SIGINT');

/**
 * The replay was stopped by a signal (Ctrl-C): what it had opened is closed, no report is
 * written. The message says how far it got (`interrupted by SIGINT after 37 of 120 turns …`).
 */
export class ReplayInterrupted extends RunInterrupted {
  override readonly name = 'ReplayInterrupted';
  /**
   * @param signal the signal that stopped it (e.g. SIGINT)
   * @param turnsDone turns replayed (appended and checked) before it stopped, over all strategies
   * @param totalTurns turns the whole run would have replayed
   * @param where what it was doing, e.g. `strategy token-count (1 of 4)`
   */
  constructor(
    signal: string,
    readonly turnsDone: number,
    readonly totalTurns: number,
    where: string,
  ) {
    super(signal, `after ${turnsDone} of ${totalTurns} turns (${where}); no report written`);
  }
}
