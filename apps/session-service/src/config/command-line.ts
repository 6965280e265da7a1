/**
 * The service's command line: `--help` (`-h`) and nothing else — its settings are environment
 * variables. Parsed with Node's `util.parseArgs` (strict: an unknown option or any positional
 * argument is refused). `--help` prints {@link usage}: every environment variable the service reads,
 * from {@link ENVIRONMENT_VARIABLES} (the Configuration table of docs/configuration.md lists the same names: its spec
 * checks both ways), with the number variables' defaults and ranges from {@link NUMBER_VARIABLES}.
 */
import { parseArgs } from 'node:util';
import { NUMBER_VARIABLES } from './number-variables';

/**
 * One documented environment variable: its default (as text, `—` for none), a one-line meaning, for
 * one without a default what leaving it unset means, and whether an empty value counts as unset
 * (documented exceptions to the blank rule of `environment-values.ts`; otherwise a blank value is refused).
 */
export interface EnvironmentVariable {
  readonly name: string;
  readonly fallback: string;
  readonly meaning: string;
  readonly unset?: string;
  readonly emptyMeansUnset?: boolean;
}

/** A number variable's row: default and range from {@link NUMBER_VARIABLES}. */
function numberVariable(name: keyof typeof NUMBER_VARIABLES): EnvironmentVariable {
  const { min, max, fallback, what } = NUMBER_VARIABLES[name];
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `${min} to ${max}`;
  return { name, fallback: String(fallback), meaning: `${what}, ${range}` };
}

/**
 * Every environment variable the service reads (the summarizer's included), in the order of docs/configuration.md's table.
 * The number variables' rows come from {@link NUMBER_VARIABLES}, so their defaults and ranges cannot drift.
 */
export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  numberVariable('PORT'),
  { name: 'HOST', fallback: '127.0.0.1', meaning: 'interface to listen on' },
  { name: 'DATA_DIR', fallback: './data', meaning: 'embedded store and read models (created when missing)' },
  { name: 'KURRENTDB_CONNECTION_STRING', fallback: '—', unset: 'the embedded SQLite store', meaning: 'use KurrentDB instead of SQLite' },
  { name: 'DATABASE_URL', fallback: '—', unset: 'the embedded SQLite store', meaning: 'use PostgreSQL (postgres://…) instead of SQLite' },
  numberVariable('DATABASE_POOL_SIZE'),
  numberVariable('DATABASE_STATEMENT_TIMEOUT_MS'),
  {
    name: 'API_KEYS',
    fallback: '—',
    unset: 'open development mode, no authentication',
    meaning: 'key:tenant pairs, comma-separated; unset: open development mode',
  },
  {
    name: 'ALLOWED_HOSTS',
    fallback: '—',
    unset: 'localhost, *.localhost and IP addresses only',
    meaning: 'open mode: Host names answered besides localhost, *.localhost and IP addresses, comma-separated',
  },
  { name: 'OPENAI_BASE_URL', fallback: 'https://api.openai.com/v1', emptyMeansUnset: true, meaning: 'OpenAI-compatible summarizer endpoint' },
  { name: 'OPENAI_API_KEY', fallback: '—', emptyMeansUnset: true, meaning: 'summarizer API key (with neither: extractive summarizer)' },
  { name: 'SUMMARIZER_MODEL', fallback: 'gpt-4o-mini', meaning: 'summarizer model' },
  numberVariable('SUMMARIZER_TIMEOUT_MS'),
  numberVariable('SUMMARIZER_MAX_RETRIES'),
  numberVariable('SUMMARIZER_MAX_INPUT_TOKENS'),
  numberVariable('SUMMARIZER_MAX_CALLS_PER_PASS'),
  numberVariable('MAX_BODY_BYTES'),
  numberVariable('MAX_EVENTS_PER_REQUEST'),
  numberVariable('MAX_TEXT_LENGTH'),
  numberVariable('MAX_WAIT_MS'),
  numberVariable('COUNTING_DEADLINE_MS'),
  numberVariable('WRITE_DEADLINE_MS'),
  numberVariable('SESSION_CACHE_MAX_MB'),
  numberVariable('REQUEST_TIMEOUT_MS'),
  numberVariable('SHUTDOWN_TIMEOUT_MS'),
  { name: 'SQLITE_WRITER_THREAD', fallback: 'true', meaning: 'true/1 or false/0: SQLite commits in a worker thread' },
  { name: 'SQLITE_QUICK_CHECK', fallback: 'true', meaning: 'true/1 or false/0: check the SQLite events file (PRAGMA quick_check) at start' },
  { name: 'PROJECTOR_WORKER', fallback: 'false', meaning: 'true/1 or false/0: the projector runs in a worker thread' },
  numberVariable('RATE_LIMIT_PER_MINUTE'),
  { name: 'TRUST_PROXY', fallback: 'false', meaning: "proxy hops (1-16) or the proxies' addresses/CIDR ranges whose X-Forwarded-For gives the client address" },
  numberVariable('AUTO_COMPACTION_MAX_FAILURES'),
  numberVariable('AUTO_COMPACTION_BACKOFF_MS'),
  numberVariable('COMPACTION_CLAIM_POLL_MS'),
  numberVariable('AUTO_COMPACTION_CLAIM_MAX_WAIT_MS'),
  numberVariable('COMPACTION_CLAIM_MAX_WAIT_MS'),
  { name: 'LOG_LEVEL', fallback: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
  { name: 'LOG_FORMAT', fallback: 'pretty on a terminal, else json', meaning: 'pretty or json' },
  { name: 'REQUEST_LOG_LEVEL', fallback: 'debug', meaning: 'level of the one line per HTTP request' },
  {
    name: 'NATS_URL',
    fallback: '—',
    unset: 'no NATS transport',
    meaning: 'NATS server(s), comma-separated nats://host:4222 URLs (tls://host:4222 on every one: TLS required): turns on the JetStream transport',
  },
  { name: 'NATS_USER', fallback: '—', unset: 'no credentials', meaning: 'NATS user' },
  { name: 'NATS_PASSWORD', fallback: '—', unset: 'no credentials', meaning: 'NATS password' },
  { name: 'NATS_ERASE_HANDLED_COMMANDS', fallback: 'false', meaning: 'true/1 or false/0: erase each handled command from its stream' },
  { name: 'NATS_PREFIX', fallback: 'compaction', meaning: 'subject, stream and consumer prefix' },
  { name: 'NATS_REPLY_PREFIXES', fallback: '_INBOX', meaning: "subject prefixes a command's Reply-To must be under, comma-separated" },
  numberVariable('NATS_CONCURRENCY'),
  numberVariable('NATS_ACK_WAIT_MS'),
  numberVariable('NATS_PING_INTERVAL_MS'),
  numberVariable('NATS_CONSUMER_STUCK_MS'),
  { name: 'SQLITE_EVENTS_FILE', fallback: '<DATA_DIR>/events.sqlite', meaning: "the embedded store's file" },
  {
    name: 'BUILD_COMMIT',
    fallback: '—',
    unset: "the commit of the checkout's .git, else unknown",
    emptyMeansUnset: true,
    meaning: 'the commit this build was made from (/health, /metrics, the start-up line)',
  },
];

/** The `--help` text: usage, options, and every environment variable with its default (lines end with `\n`). */
export function usage(): string {
  const width = Math.max(...ENVIRONMENT_VARIABLES.map((v) => v.name.length));
  const rows = ENVIRONMENT_VARIABLES.map((v) => `  ${v.name.padEnd(width)}  ${v.meaning} (default: ${v.fallback})`);
  const emptyMeansUnset = ENVIRONMENT_VARIABLES.filter((v) => v.emptyMeansUnset).map((v) => v.name);
  return [
    'usage: main.js [--help]',
    '',
    'Starts the session memory compaction service. Settings are environment variables (docs/configuration.md):',
    '',
    ...rows,
    '',
    'White space around a value is not part of it. A variable set to an empty or blank value stops the start-up',
    `(unset it for its default), except ${emptyMeansUnset.slice(0, -1).join(', ')} and ${emptyMeansUnset.at(-1)}, where empty counts as unset. Words in any case.`,
    '',
    'options:',
    '  -h, --help  print this text and exit',
    '',
  ].join('\n');
}

/**
 * What the command line asks for: `help` when `--help`/`-h` is given.
 * @throws Error with a one-line message naming the argument when an option is unknown, `--help` is
 *   given a value, or a positional argument is given.
 */
export function parseCommandLine(args: readonly string[]): { help: boolean } {
  try {
    const { values } = parseArgs({ args: [...args], options: { help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
    return { help: values.help === true };
  } catch (err) {
    // parseArgs' messages run on with advice about `--`: the first sentence names the argument.
    const first = (err as Error).message.split('. ')[0].replace(/\.$/, '');
    throw new Error(`${first}: the service takes no arguments but --help; its settings are environment variables (see --help)`, { cause: err });
  }
}
