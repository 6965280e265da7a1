/**
 * The one table of the service's number environment variables and the ranges they accept: the
 * start-up checks each against its row and quotes the row's range when it refuses a value, and the
 * The Configuration table of docs/configuration.md states the same ranges (its spec checks every row against this table).
 */
import { DEFAULT_MAX_TEXT_LENGTH } from '@lib/compaction';
import { DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS } from '@lib/event-store';
import {
  DEFAULT_CLAIM_MAX_WAIT_MS,
  DEFAULT_CLAIM_POLL_MS,
  DEFAULT_COMMAND_CLAIM_MAX_WAIT_MS,
  DEFAULT_COUNTING_DEADLINE_MS,
  DEFAULT_SESSION_CACHE_MAX_BYTES,
  SUMMARIZER_NUMBER_VARIABLES,
  type NumberVariable,
} from '@lib/session';

/** No upper bound of its own: the largest integer a JavaScript number holds exactly (2^53 − 1). */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** The service's own number variables (see {@link NUMBER_VARIABLES}). */
export const SERVICE_NUMBER_VARIABLES = {
  PORT: { min: 0, max: 65_535, fallback: 3000, what: 'a TCP port (0 picks a free one)' },
  MAX_BODY_BYTES: { min: 1024, max: UNBOUNDED, fallback: 5 * 1024 * 1024, what: 'a size in bytes' },
  MAX_EVENTS_PER_REQUEST: { min: 1, max: UNBOUNDED, fallback: 1000, what: 'a number of events' },
  MAX_TEXT_LENGTH: { min: 1, max: UNBOUNDED, fallback: DEFAULT_MAX_TEXT_LENGTH, what: 'a number of characters' },
  MAX_WAIT_MS: { min: 0, max: 60_000, fallback: 5000, what: 'a time in milliseconds' },
  REQUEST_TIMEOUT_MS: { min: 100, max: 3_600_000, fallback: 60_000, what: 'a time in milliseconds' },
  SHUTDOWN_TIMEOUT_MS: { min: 1000, max: 3_600_000, fallback: 20_000, what: 'a time in milliseconds' },
  COUNTING_DEADLINE_MS: { min: 1000, max: 600_000, fallback: DEFAULT_COUNTING_DEADLINE_MS, what: 'a time in milliseconds' },
  WRITE_DEADLINE_MS: { min: 100, max: 3_600_000, fallback: 30_000, what: 'a time in milliseconds' },
  SESSION_CACHE_MAX_MB: { min: 1, max: 1_048_576, fallback: DEFAULT_SESSION_CACHE_MAX_BYTES / 1024 / 1024, what: 'a size in MiB' },
  RATE_LIMIT_PER_MINUTE: { min: 0, max: UNBOUNDED, fallback: 6000, what: 'requests per minute (0 disables the limit)' },
  AUTO_COMPACTION_MAX_FAILURES: { min: 1, max: UNBOUNDED, fallback: 3, what: 'a number of failures' },
  AUTO_COMPACTION_BACKOFF_MS: { min: 0, max: UNBOUNDED, fallback: 30_000, what: 'a time in milliseconds' },
  COMPACTION_CLAIM_POLL_MS: { min: 10, max: 60_000, fallback: DEFAULT_CLAIM_POLL_MS, what: 'a time in milliseconds' },
  AUTO_COMPACTION_CLAIM_MAX_WAIT_MS: { min: 0, max: 3_600_000, fallback: DEFAULT_CLAIM_MAX_WAIT_MS, what: 'a time in milliseconds' },
  COMPACTION_CLAIM_MAX_WAIT_MS: {
    min: 0,
    // less than REQUEST_TIMEOUT_MS too (checked with it); unset: the fallback or half of REQUEST_TIMEOUT_MS, whichever is less
    max: 3_599_999,
    fallback: DEFAULT_COMMAND_CLAIM_MAX_WAIT_MS,
    what: 'a time in milliseconds, less than REQUEST_TIMEOUT_MS',
  },
  NATS_CONCURRENCY: { min: 1, max: 1024, fallback: 16, what: 'a number of commands' },
  NATS_ACK_WAIT_MS: { min: 1000, max: 3_600_000, fallback: 30_000, what: 'a time in milliseconds' },
  NATS_PING_INTERVAL_MS: { min: 1000, max: 600_000, fallback: 10_000, what: 'a time in milliseconds' },
  NATS_CONSUMER_STUCK_MS: { min: 5000, max: 3_600_000, fallback: 60_000, what: 'a time in milliseconds' },
  DATABASE_POOL_SIZE: { min: 1, max: 1000, fallback: DEFAULT_POOL_SIZE, what: 'a number of PostgreSQL connections per replica' },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    min: 0,
    max: 3_600_000,
    fallback: DEFAULT_STATEMENT_TIMEOUT_MS,
    what: "a time in milliseconds (0 leaves the role's statement_timeout and lock_timeout)",
  },
} as const satisfies Record<string, NumberVariable>;

/**
 * Every number environment variable the service reads, by name → its accepted range (integers
 * from `min` to `max`; a `max` of 2^53 − 1 means no bound of its own), default and unit: the
 * service's own and the summarizer's ({@link SUMMARIZER_NUMBER_VARIABLES}).
 */
export const NUMBER_VARIABLES: Readonly<Record<keyof typeof SERVICE_NUMBER_VARIABLES | keyof typeof SUMMARIZER_NUMBER_VARIABLES, NumberVariable>> = {
  ...SERVICE_NUMBER_VARIABLES,
  ...SUMMARIZER_NUMBER_VARIABLES,
};
