/**
 * The refusal of a start (and of `npm run rebuild-read-models`) on an event store that holds the
 * mark of an unfinished `npm run copy-store` (`es_copy_in_progress`: EventStoreCopyInProgressError):
 * a {@link ConfigurationError} (exit code 2) naming the setting that chose the store (`DATABASE_URL`,
 * credentials masked; `SQLITE_EVENTS_FILE` when set, else `DATA_DIR`), the mark, and what to do: run
 * the copy again with `--empty-partial-target`, or drop the partial target. Nothing was read or written.
 */
import * as path from 'node:path';
import { EventStoreCopyInProgressError, type EventStore } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';
import type { ServiceConfig } from './service-config';

/** See the module documentation. */
export function copyInProgressRefusal(
  config: Pick<ServiceConfig, 'dataDir' | 'sqliteEventsFile' | 'databaseUrl'>,
  error: EventStoreCopyInProgressError,
): ConfigurationError {
  const setting =
    config.databaseUrl !== undefined
      ? ({ variable: 'DATABASE_URL', value: config.databaseUrl, mask: 'url' } as const)
      : config.sqliteEventsFile !== path.join(config.dataDir, 'events.sqlite')
        ? { variable: 'SQLITE_EVENTS_FILE', value: config.sqliteEventsFile }
        : { variable: 'DATA_DIR', value: config.dataDir };
  const target = config.databaseUrl !== undefined ? '<this DATABASE_URL>' : config.sqliteEventsFile;
  return new ConfigurationError({
    ...setting,
    problem: `${error.message}; nothing was read or written`,
    fix: `run the copy again from its source with npm run copy-store -- --to ${target} --empty-partial-target (it empties this partial copy, copies again and removes the mark once verified), or drop this database (delete the file with its -wal and -shm files) and copy into a new one; or point the service back at the source`,
  });
}

/**
 * Refuses (with {@link copyInProgressRefusal}) a PostgreSQL store holding a copy's mark, by setting
 * its schema up now; other errors of that set-up are the caller's to meet later (a server down now).
 * A SQLite store refuses such a file at open (`openEventStore`).
 */
export async function refuseCopyInProgress(config: Pick<ServiceConfig, 'dataDir' | 'sqliteEventsFile' | 'databaseUrl'>, store: EventStore): Promise<void> {
  if (config.databaseUrl === undefined) return;
  await store.headPosition().catch((err: unknown) => {
    if (err instanceof EventStoreCopyInProgressError) throw copyInProgressRefusal(config, err);
  });
}
