/**
 * The command line of `npm run rebuild-read-models`: no arguments but `--help` (the usage and the
 * environment variables that choose what it rebuilds, exit code 0); any other argument is refused
 * (one line on stderr, exit code 2): its settings are environment variables, as the service's.
 * Imported first by rebuild-read-models.ts: evaluating this module checks `process.argv` and ends the
 * process on `--help` or a bad argument, before the store modules load (seconds under ts-node) and
 * before anything is opened.
 */
import { Command } from 'commander';
import { REBUILD_NUMBER_VARIABLES } from './config/rebuild-number-variables';
import { parseScriptArgumentsOrExit } from './script-command-line';

/** The environment variables that choose what the rebuild reads and writes: name, default, meaning (the service's others are checked as at its start). */
const REBUILD_VARIABLES: readonly (readonly [name: string, fallback: string, meaning: string])[] = [
  ['DATA_DIR', './data', "the service's data directory: its read models are rebuilt; with the embedded store it must exist and hold the store"],
  ['SQLITE_EVENTS_FILE', '<DATA_DIR>/events.sqlite', "the embedded store's file: the log replayed"],
  ['DATABASE_URL', '—', 'replay the PostgreSQL log (postgres://…) instead'],
  ['KURRENTDB_CONNECTION_STRING', '—', 'replay the KurrentDB log instead'],
  ['SQLITE_QUICK_CHECK', 'true', 'true/1 or false/0: check the SQLite files (PRAGMA quick_check) first'],
  // The rebuild's own: ranges and defaults from the one table loadRebuildSettings checks them with.
  ...Object.entries(REBUILD_NUMBER_VARIABLES).map(([name, { min, max, fallback, what }]) => [name, String(fallback), `${what}, ${min} to ${max}`] as const),
];

/** The rebuild's commander program: `--help` only; its help lists {@link REBUILD_VARIABLES} and the exit codes. */
export function rebuildProgram(): Command {
  const width = Math.max(...REBUILD_VARIABLES.map(([name]) => name.length));
  return new Command()
    .name('rebuild-read-models')
    .description(
      "Rebuilds every read model of the service's DATA_DIR from an empty database by replaying the event log. Stop the service on that DATA_DIR first.",
    )
    .allowExcessArguments(false)
    .addHelpText(
      'after',
      [
        '',
        "Settings are the service's environment variables (npm start -- --help lists them all; each is checked as at its start):",
        ...REBUILD_VARIABLES.map(([name, fallback, meaning]) => `  ${name.padEnd(width)}  ${meaning} (default: ${fallback})`),
        '',
        'Exit codes: 0 rebuilt (or --help); 2 a bad argument or setting, a DATA_DIR in use or missing; 1 another failure.',
      ].join('\n'),
    );
}

parseScriptArgumentsOrExit(
  rebuildProgram(),
  process.argv.slice(2),
  'it takes no arguments but --help; set DATA_DIR (and DATABASE_URL or KURRENTDB_CONNECTION_STRING) in the environment',
);
