/**
 * The one kind of error the replay command reports as a single line (stderr, exit code 2):
 * a file it cannot read, a file of the wrong shape, an option it cannot use, a service that
 * does not answer. Anything else is a bug and keeps its stack trace.
 */

/** Exit code of the replay command when it stops on a {@link ReplayError}. */
export const REPLAY_USAGE_EXIT_CODE = 2;

/** A problem of the input or the environment, described in one line that says what is wrong. */
export class ReplayError extends Error {
  override readonly name = 'ReplayError';
  /** @param message one line, no stack trace needed to understand it. */
  constructor(message: string) {
    super(message.replace(/\s*\n\s*/g, ' '));
  }
}
