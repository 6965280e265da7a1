/**
 * The ranges and defaults of `npm run rebuild-read-models`'s own number variables (docs/commands.md),
 * in a module with no imports at run time, so that the rebuild's `--help` (which lists them) answers
 * before the service's configuration modules load (seconds under ts-node). Read and checked by
 * `loadRebuildSettings` (./rebuild-settings).
 */
import type { NumberVariable } from '@lib/session';

/** The rebuild's number variables: events per read of the log, and the least time (ms) between two progress lines. */
export const REBUILD_NUMBER_VARIABLES = {
  REBUILD_PAGE_SIZE: { min: 1, max: 100_000, fallback: 1000, what: 'a number of events per read of the log' },
  REBUILD_PROGRESS_MS: { min: 0, max: 3_600_000, fallback: 2000, what: 'a time in milliseconds (0: a line after every read)' },
} as const satisfies Record<string, NumberVariable>;
