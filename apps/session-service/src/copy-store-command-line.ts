/**
 * The command line of `npm run copy-store -- --to <target>`: `--to` (required: a PostgreSQL URL
 * `postgres://…`, or the path of a new SQLite file), `--empty-partial-target` (empty a partial copy a
 * killed copy-store left there, marked by it, and copy again), `--page-size` (events per read and write,
 * 1–100,000, default 1000) and `--help`. The source is the service's configured store (its
 * environment variables). A usage error is refused (one line on stderr, exit code 2) before the
 * store modules load and before anything is opened.
 */
import { Command, InvalidArgumentError } from 'commander';
import { parseScriptArgumentsOrExit } from './script-command-line';

/** The environment variables that choose the source store. */
const SOURCE_VARIABLES: readonly (readonly [name: string, fallback: string, meaning: string])[] = [
  [
    'DATA_DIR',
    './data',
    "the service's data directory: with the embedded store it must exist and hold the store (its lock is taken: no service may run on it)",
  ],
  ['SQLITE_EVENTS_FILE', '<DATA_DIR>/events.sqlite', "the embedded store's file: the log copied"],
  ['DATABASE_URL', '—', 'copy the PostgreSQL log (postgres://…) instead'],
  ['KURRENTDB_CONNECTION_STRING', '—', 'refused: a KurrentDB log cannot be copied by this command'],
];

/** Parses `--page-size`: an integer from 1 to 100,000. */
function pageSize(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 100_000)) throw new InvalidArgumentError('use an integer from 1 to 100000');
  return n;
}

/** The copy's commander program ({@link SOURCE_VARIABLES} and the exit codes in its help). */
export function copyStoreProgram(): Command {
  const width = Math.max(...SOURCE_VARIABLES.map(([name]) => name.length));
  return new Command()
    .name('copy-store')
    .description(
      "Copies the service's event store (the source: its configuration, below) into an empty target store, verbatim: every event with its stream, revision, id, type, data, metadata, time recorded and position, the deleted streams (erasures) and the head; then verifies both logs. Stop every service using the source first: the copy fails when the source is written meanwhile.",
    )
    .requiredOption(
      '--to <target>',
      'the target: a PostgreSQL URL (postgres://user@host:5432/db, an empty database) or the path of a SQLite file that does not exist yet',
    )
    .option(
      '--empty-partial-target',
      'the target holds a partial copy a copy-store that was killed left (marked by its table es_copy_in_progress): empty it (a SQLite file: remove it) and copy again; a target without that mark is still refused, and so is one whose marking copy still runs on this host (its pid alive)',
    )
    .option('--page-size <n>', 'events per read of the source and per write of the target, 1 to 100000', pageSize, 1000)
    .allowExcessArguments(false)
    .addHelpText(
      'after',
      [
        '',
        "The source is chosen by the service's environment variables:",
        ...SOURCE_VARIABLES.map(([name, fallback, meaning]) => `  ${name.padEnd(width)}  ${meaning} (default: ${fallback})`),
        '',
        'Exit codes: 0 copied and verified (or --help); 2 a bad argument or setting, a store that cannot be copied (KurrentDB), a source that cannot be read, a target that is not empty, in use (a service connected to the PostgreSQL database, another connection holding the SQLite file open) or cannot be used (unreachable, login refused, foreign es_* tables, a partial copy without --empty-partial-target), a DATA_DIR in use or missing (nothing written); 1 the copy failed (the source moved, the target differs, a store failed: the target is emptied again, a SQLite target file removed; but when something else wrote into the target meanwhile nothing is removed, and the message says the target needs attention).',
      ].join('\n'),
    );
}

/** The parsed command line (after {@link parseScriptArgumentsOrExit} let the command run). */
export interface CopyStoreArguments {
  to: string;
  pageSize: number;
  /** `--empty-partial-target` given. */
  emptyPartialTarget?: boolean;
}

const program = copyStoreProgram();
parseScriptArgumentsOrExit(program, process.argv.slice(2));

/** This process's arguments. */
export const copyStoreArguments: CopyStoreArguments = program.opts<CopyStoreArguments>();
