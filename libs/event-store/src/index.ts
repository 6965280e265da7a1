export * from './event-store.port';
export * from './errors';
export { deterministicEventId, isUuid, EVENT_ID_NAMESPACE } from './deterministic-id';
export { prepareAppend, satisfies, type SerializedEvent } from './append-input';
export { PollingSubscription, type ReadPage } from './polling-subscription';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';
export { SQLITE_SCHEMA_SQL, SQLITE_SCHEMA_VERSION } from './sqlite/sqlite-schema';
export { KurrentDbEventStore } from './kurrentdb/kurrentdb-event-store';
export { createEventStore, DEFAULT_SQLITE_FILE, type EventStoreConfig } from './create-event-store';
