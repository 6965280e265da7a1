/**
 * The start's refusal of a PostgreSQL database whose encoding is not UTF8 (docs/configuration.md:
 * `DATABASE_URL`): a {@link ConfigurationError} naming `DATABASE_URL` (credentials masked), the
 * database's encoding and how to create a UTF8 one, e.g. `DATABASE_URL=postgres://app:***@db/events:
 * the database's encoding is LATIN1, not UTF8: …: create the database with ENCODING 'UTF8' …`.
 */
import type { EventStoreDatabaseEncodingError } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';

/** See the module documentation; `databaseUrl` as configured. */
export function databaseEncodingRefusal(error: EventStoreDatabaseEncodingError, databaseUrl: string): ConfigurationError {
  return new ConfigurationError({
    variable: 'DATABASE_URL',
    value: databaseUrl,
    mask: 'url',
    problem: error.message,
    fix: "create the database with ENCODING 'UTF8' (createdb -E UTF8 -T template0 <name>; an existing one's data can be moved with pg_dump and pg_restore) and point DATABASE_URL at it",
  });
}
