import type { EventStore } from './event-store.port';
import { KurrentDbEventStore } from './kurrentdb/kurrentdb-event-store';
import { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';

/** Which store {@link createEventStore} builds. */
export interface EventStoreConfig {
  /** When set (e.g. `kurrentdb://localhost:2113?tls=false`), the KurrentDB adapter is used. */
  kurrentDbConnectionString?: string;
  /** SQLite file used otherwise. Default `./data/events.sqlite`. */
  sqliteFile?: string;
  /** Options for the SQLite adapter. */
  sqlite?: SqliteEventStoreOptions;
}

/** Default SQLite file of {@link createEventStore}. */
export const DEFAULT_SQLITE_FILE = './data/events.sqlite';

/**
 * Builds the configured event store: KurrentDB when a connection string is given, else the embedded
 * SQLite store at `sqliteFile`.
 * @throws EventStoreUnavailableError when the SQLite file cannot be opened (KurrentDB connects lazily:
 *   its errors appear on first use).
 */
export function createEventStore(config: EventStoreConfig = {}): EventStore {
  if (config.kurrentDbConnectionString) return KurrentDbEventStore.connect(config.kurrentDbConnectionString);
  return SqliteEventStore.open(config.sqliteFile ?? DEFAULT_SQLITE_FILE, config.sqlite);
}
