/**
 * The start's refusal of a PostgreSQL database whose `es_events` holds events past its head
 * (`es_head`): a `pg_restore` that ran into a database where a start had already created the
 * schema collided with it (`duplicate key` on `es_head`, errors ignored), leaving the dump's events
 * under a head at 0 (EventStoreHeadBehindError). A {@link ConfigurationError} (exit code 2) naming
 * `DATABASE_URL` (credentials masked), both positions and what to do: drop the database, create it
 * again and restore into it with no replica running. Nothing was created or changed in the
 * database. Newcomer ncpg73 F3: such a database was reported as "the event store's log is empty".
 */
import type { EventStoreHeadBehindError } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';

/** See the module documentation; `databaseUrl` as configured. */
export function databaseHeadBehindRefusal(error: EventStoreHeadBehindError, databaseUrl: string): ConfigurationError {
  return new ConfigurationError({
    variable: 'DATABASE_URL',
    value: databaseUrl,
    mask: 'url',
    problem: `${error.message}; nothing was created or changed in the database`,
    fix: 'with every replica stopped, drop the database and create it again (dropdb, then createdb -E UTF8 -T template0 <name>), restore the backup into the empty database (pg_restore --no-owner --dbname=<DATABASE_URL> <dump>, no errors this time), then start the replicas; do NOT delete read-models.sqlite (docs/stores.md, Backup and restore)',
  });
}
