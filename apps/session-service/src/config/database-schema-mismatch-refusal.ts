/**
 * The start's refusal of a PostgreSQL database holding a table of the service's names that is not
 * the service's (docs/configuration.md: `DATABASE_URL`): a {@link ConfigurationError} naming
 * `DATABASE_URL` (credentials masked), the table, what differs and what to do, e.g.
 * `DATABASE_URL=postgres://app:***@db/shared: the table es_events in the database is not this
 * service's: it has no column position (bigint); …: give the service a database of its own …`.
 * Nothing was created or changed in the database.
 */
import type { EventStoreSchemaMismatchError } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';

/** See the module documentation; `databaseUrl` as configured. */
export function databaseSchemaMismatchRefusal(error: EventStoreSchemaMismatchError, databaseUrl: string): ConfigurationError {
  return new ConfigurationError({
    variable: 'DATABASE_URL',
    value: databaseUrl,
    mask: 'url',
    problem: `${error.message}; nothing was created or changed in the database`,
    fix: `give the service a database of its own (createdb -E UTF8 -T template0 <name>), and point DATABASE_URL at it, or a schema of its own in this one (CREATE SCHEMA <name>, made the first of the connecting role's search_path: ALTER ROLE <role> SET search_path = <name>); do not rename or drop the other application's ${error.table}`,
  });
}
