/**
 * Settings the environment gives that the rest of the configuration leaves without effect
 * (docs/configuration.md): each group is told in one `warn` line of the start-up summary, `X is ignored
 * because Y`, instead of being dropped without a word (an operator who set NATS credentials but
 * forgot `NATS_URL` got no transport and no hint). They are not refused: a shared environment file
 * may hold settings of another set-up, and each stays valid on its own (it is still checked).
 */
import { eventStoreKind } from './event-store-config';
import type { ServiceConfig } from './service-config';

/** Variables that only the embedded SQLite event store reads (`SQLITE_QUICK_CHECK` is not one: it checks the read models too). */
const SQLITE_STORE_VARIABLES = ['SQLITE_EVENTS_FILE', 'SQLITE_WRITER_THREAD'];

/** Variables that only the PostgreSQL event store reads. */
const POSTGRES_STORE_VARIABLES = ['DATABASE_POOL_SIZE', 'DATABASE_STATEMENT_TIMEOUT_MS'];

/** Variables that only the NATS transport reads. */
const NATS_VARIABLES = [
  'NATS_USER',
  'NATS_PASSWORD',
  'NATS_PREFIX',
  'NATS_CONCURRENCY',
  'NATS_ACK_WAIT_MS',
  'NATS_PING_INTERVAL_MS',
  'NATS_CONSUMER_STUCK_MS',
  'NATS_ERASE_HANDLED_COMMANDS',
  'NATS_REPLY_PREFIXES',
];

/** Variables that only a model summarizer reads (the extractive one has no model, timeout, retries nor input bound). */
const MODEL_SUMMARIZER_VARIABLES = [
  'SUMMARIZER_MODEL',
  'SUMMARIZER_TIMEOUT_MS',
  'SUMMARIZER_MAX_RETRIES',
  'SUMMARIZER_MAX_INPUT_TOKENS',
  'SUMMARIZER_MAX_CALLS_PER_PASS',
];

/** `env[name]` holds something besides white space (a blank value is refused or counts as unset before this). */
const isSet = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name]?.trim() ?? '') !== '';

/**
 * The lines, one per group of ignored variables set in `env` (the environment `config` was loaded
 * from), e.g. `NATS_USER, NATS_PASSWORD are ignored because NATS_URL is not set (no NATS transport)`;
 * empty when nothing is ignored.
 */
export function ignoredSettingLines(env: NodeJS.ProcessEnv, config: ServiceConfig): string[] {
  const kind = eventStoreKind(config);
  const groups: Array<[names: string[], because: string]> = [
    [
      kind === 'sqlite' ? [] : SQLITE_STORE_VARIABLES,
      kind === 'postgres' ? 'the event store is PostgreSQL (DATABASE_URL)' : 'the event store is KurrentDB (KURRENTDB_CONNECTION_STRING)',
    ],
    [
      kind === 'postgres' ? [] : POSTGRES_STORE_VARIABLES,
      kind === 'sqlite' ? 'DATABASE_URL is not set (the embedded SQLite store)' : 'the event store is KurrentDB (KURRENTDB_CONNECTION_STRING)',
    ],
    [config.natsUrl ? [] : NATS_VARIABLES, 'NATS_URL is not set (no NATS transport)'],
    [config.apiKeys.size === 0 ? [] : ['ALLOWED_HOSTS'], 'API_KEYS is set (the Host check is for open development mode)'],
    [
      isSet(env, 'OPENAI_BASE_URL') || isSet(env, 'OPENAI_API_KEY') ? [] : MODEL_SUMMARIZER_VARIABLES,
      'neither OPENAI_BASE_URL nor OPENAI_API_KEY is set (the extractive summarizer)',
    ],
  ];
  return groups.flatMap(([names, because]) => {
    const set = names.filter((name) => isSet(env, name));
    if (set.length === 0) return [];
    return [`${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} ignored because ${because}`];
  });
}
