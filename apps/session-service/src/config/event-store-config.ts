import { createEventStore, type EventStore, type EventStoreConfig } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';
import { databaseUrlUnavailable } from './database-url-unavailable';
import type { ServiceConfig } from './service-config';

/** Which event store a configuration selects. */
export type EventStoreKind = 'kurrentdb' | 'postgres' | 'sqlite';

/** The store a configuration selects: KurrentDB or PostgreSQL when configured, else SQLite under `dataDir`. */
export function eventStoreKind(config: ServiceConfig): EventStoreKind {
  if (config.kurrentDbConnectionString) return 'kurrentdb';
  return config.databaseUrl ? 'postgres' : 'sqlite';
}

/**
 * The argument of `createEventStore` for a service configuration (SQLite file `SQLITE_EVENTS_FILE`,
 * default `<dataDir>/events.sqlite`; its writer thread `SQLITE_WRITER_THREAD`; PostgreSQL's errors
 * naming `DATABASE_URL`, {@link databaseUrlUnavailable}).
 */
export function eventStoreConfig(config: ServiceConfig): EventStoreConfig {
  return {
    kurrentDbConnectionString: config.kurrentDbConnectionString,
    postgresUrl: config.databaseUrl,
    // Its errors name DATABASE_URL (masked) and what to fix: /health, the projector's and the feed's warn lines show them.
    postgres: config.databaseUrl ? { describeUnavailable: (error) => databaseUrlUnavailable(error, config.databaseUrl!) } : undefined,
    sqliteFile: config.sqliteEventsFile,
    sqlite: { writerThread: config.sqliteWriterThread },
  };
}

/**
 * Opens the event store a configuration selects (`createEventStore(eventStoreConfig(config))`).
 * @throws ConfigurationError naming `KURRENTDB_CONNECTION_STRING` (its password masked) with the
 *   driver's reason when the connection string cannot be parsed; the store's other errors unchanged.
 */
export function openEventStore(config: ServiceConfig): EventStore {
  try {
    return createEventStore(eventStoreConfig(config));
  } catch (err) {
    if (eventStoreKind(config) !== 'kurrentdb' || (err as Error).constructor?.name !== 'ParseError') throw err;
    const reason = (err as Error).message.split('\n')[0];
    throw new ConfigurationError({
      variable: 'KURRENTDB_CONNECTION_STRING',
      value: config.kurrentDbConnectionString!,
      mask: 'url',
      problem: `not a KurrentDB connection string (${reason})`,
      fix: 'use e.g. kurrentdb://localhost:2113?tls=false',
    });
  }
}
