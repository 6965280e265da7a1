import type { EventStore } from './event-store.port';
import type { PostgresEventStoreOptions } from './postgres/postgres-event-store';
import { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';

/** Which store {@link createEventStore} builds. Set at most one of the connection settings. */
export interface EventStoreConfig {
  /** When set (e.g. `kurrentdb://localhost:2113?tls=false`), the KurrentDB adapter is used. */
  kurrentDbConnectionString?: string;
  /** When set (e.g. `postgres://user@db:5432/events`), the PostgreSQL adapter is used. */
  postgresUrl?: string;
  /** Options for the PostgreSQL adapter. */
  postgres?: PostgresEventStoreOptions;
  /** SQLite file used otherwise. Default `./data/events.sqlite`. */
  sqliteFile?: string;
  /** Options for the SQLite adapter. */
  sqlite?: SqliteEventStoreOptions;
}

/** Default SQLite file of {@link createEventStore}. */
export const DEFAULT_SQLITE_FILE = './data/events.sqlite';

/**
 * Builds the configured event store: KurrentDB when its connection string is given, PostgreSQL
 * when a database URL is given, else the embedded SQLite store at `sqliteFile`.
 * @throws Error when both KurrentDB and PostgreSQL are configured.
 * @throws EventStoreUnavailableError when the SQLite file cannot be opened (KurrentDB and PostgreSQL
 *   connect lazily: their errors appear on first use).
 *
 * The KurrentDB and PostgreSQL adapters, and their drivers, are loaded here only when configured:
 * a service on SQLite never holds the KurrentDB client (about 13 MiB resident) or `pg`.
 */
export function createEventStore(config: EventStoreConfig = {}): EventStore {
  if (config.kurrentDbConnectionString && config.postgresUrl) {
    throw new Error('configure one event store: KURRENTDB_CONNECTION_STRING or DATABASE_URL, not both');
  }
  if (config.kurrentDbConnectionString) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { KurrentDbEventStore } = require('./kurrentdb/kurrentdb-event-store') as typeof import('./kurrentdb/kurrentdb-event-store');
    return KurrentDbEventStore.connect(config.kurrentDbConnectionString);
  }
  if (config.postgresUrl) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { PostgresEventStore } = require('./postgres/postgres-event-store') as typeof import('./postgres/postgres-event-store');
    return PostgresEventStore.connect(config.postgresUrl, config.postgres);
  }
  return SqliteEventStore.open(config.sqliteFile ?? DEFAULT_SQLITE_FILE, config.sqlite);
}
