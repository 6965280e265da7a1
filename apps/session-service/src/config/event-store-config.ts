import type { EventStoreConfig } from '@lib/event-store';
import type { ServiceConfig } from './service-config';

/** Which event store a configuration selects. */
export type EventStoreKind = 'kurrentdb' | 'postgres' | 'sqlite';

/** The store a configuration selects: KurrentDB or PostgreSQL when configured, else SQLite under `dataDir`. */
export function eventStoreKind(config: ServiceConfig): EventStoreKind {
  if (config.kurrentDbConnectionString) return 'kurrentdb';
  return config.databaseUrl ? 'postgres' : 'sqlite';
}

/** The argument of `createEventStore` for a service configuration (SQLite file `SQLITE_EVENTS_FILE`, default `<dataDir>/events.sqlite`; its writer thread `SQLITE_WRITER_THREAD`). */
export function eventStoreConfig(config: ServiceConfig): EventStoreConfig {
  return {
    kurrentDbConnectionString: config.kurrentDbConnectionString,
    postgresUrl: config.databaseUrl,
    sqliteFile: config.sqliteEventsFile,
    sqlite: { writerThread: config.sqliteWriterThread },
  };
}
