/**
 * The command line of the project's scripts (`npm run rebuild-read-models`, `client:generate`,
 * `bench`, `conformance`, `replay`), parsed with commander, one contract for all: `--help` (`-h`)
 * prints the usage on stdout and ends with exit code 0 before anything is opened or written; a usage
 * error (an unknown option, an argument too many or missing, a value an option's parser refuses)
 * prints one line on stderr, `<name>: <what is wrong>[: <hint>] (see --help)`, and ends with exit code 2
 * ({@link USAGE_EXIT_CODE}, the service's configuration errors' code too) before anything is done.
 */
import { CommanderError, type Command } from 'commander';

/** Exit code of every command for a usage error, as for the service's configuration errors. */
export const USAGE_EXIT_CODE = 2;

/** The commander error codes that end a command successfully: the usage or the version was printed. */
const PRINTED = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

/**
 * Parses `args` (the arguments after the script's path, `process.argv.slice(2)`) into `program`
 * (its options then read with `program.opts()`, its arguments with `program.args`). Sets the
 * program's `exitOverride` and silences commander's own error output: this function writes the one line.
 * @param hint what to do instead, added to a usage error's line before `(see --help)` (default: none)
 * @returns `undefined` when the command should run; else the exit code to end with: 0 after
 *   `--help` (the usage is on stdout), {@link USAGE_EXIT_CODE} after a usage error (its line is on stderr).
 * @throws whatever an option's parser throws other than commander's `InvalidArgumentError`.
 */
export function parseScriptArguments(program: Command, args: readonly string[], hint?: string): number | undefined {
  program
    .exitOverride()
    .showHelpAfterError(false)
    .configureOutput({ writeErr: () => undefined });
  try {
    program.parse([...args], { from: 'user' });
    return undefined;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (PRINTED.has(err.code)) return 0;
    // commander's messages start with `error: `, some end with a period ("too many arguments. Expected 0 …"),
    // an unknown option's may go on on a second line ("(Did you mean --help?)"): one line.
    const what = err.message
      .replace(/^error: /, '')
      .replace(/\.$/, '')
      .replace(/\s*\n\s*/g, ' ');
    process.stderr.write(`${program.name()}: ${what}${hint ? `: ${hint}` : ''} (see --help)\n`);
    return USAGE_EXIT_CODE;
  }
}

/**
 * {@link parseScriptArguments}, then ends the process with its exit code unless the command should
 * run (0 after `--help`, {@link USAGE_EXIT_CODE} after a usage error); returns when it should.
 */
export function parseScriptArgumentsOrExit(program: Command, args: readonly string[], hint?: string): void {
  const exitCode = parseScriptArguments(program, args, hint);
  if (exitCode !== undefined) process.exit(exitCode);
}
