/**
 * `@lib/event-store`: the port, its errors, the SQLite adapter and {@link createEventStore}. The
 * PostgreSQL and KurrentDB adapters have their own entry points (`@lib/event-store/postgres`,
 * `@lib/event-store/kurrentdb`) so that their drivers load only where they are used.
 */
export * from './event-store.port';
export * from './errors';
export type { CopiedRows, DeletedStream, ForeignRows, LogContents, LogCopy } from './log-copy.port';
export { COPY_MARKER_TABLE, copyMayStillRun, describeCopyMarker, type CopyMarker } from './copy-marker';
export { sqliteFileCopyMarker, sqliteFileHeldOpen } from './sqlite/sqlite-copy-marker';
export type { HeldClaim } from './claim.port';
export { deterministicEventId, deterministicEventIdForms, isUuid, EVENT_ID_NAMESPACE } from './deterministic-id';
export { prepareAppend, satisfies, type SerializedEvent } from './append-input';
export { jsonText, knownJsonText, knownStringUnits, rememberJsonText } from './known-json';
export { freezeShared, sharedValuesFrozen, withoutSharedValueFreeze } from './shared-value-freeze';
export { findInStream } from './find-in-stream';
export { PollingSubscription, type ReadPage } from './polling-subscription';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';
export { realStoreFile, sqliteClaimFileName, sqliteClaimsDirectory } from './sqlite/sqlite-claims';
export { SQLITE_SCHEMA_SQL, SQLITE_SCHEMA_VERSION } from './sqlite/sqlite-schema';
export { isSqliteCorrupt, isSqliteDiskFull, isSqliteWriteFailure } from './sqlite/sqlite-errors';
export { PROBE_MIN_FREE_BYTES, freeBytesShort } from './sqlite/sqlite-write-probe';
export { sqliteQuickCheck } from './sqlite/sqlite-quick-check';
export { SqliteWalPurge, WAL_PURGE_RETRY_DEFAULTS, type PendingWalScrub, type WalPurgeRetry, type WalScrubbed } from './sqlite/sqlite-wal-purge';
export { createEventStore, DEFAULT_SQLITE_FILE, type EventStoreConfig } from './create-event-store';
export type { PostgresEventStoreOptions } from './postgres/postgres-event-store';
export { POSTGRES_SCHEMA_SQL, POSTGRES_SCHEMA_VERSION } from './postgres/postgres-schema';
export {
  INSUFFICIENT_PRIVILEGE,
  isClosedBeforePostgresAnswer,
  isPostgresPasswordMissing,
  isPostgresPermissionDenied,
  postgresCauseOf,
  postgresConnectionCauseOf,
  postgresPrivilegesNeeded,
  postgresUnavailableMessage,
} from './postgres/postgres-errors';
export { ANSWER_MARGIN_MS, DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS, answerTimeoutMs } from './postgres/postgres-settings';
export { PostgresNoAnswerError } from './postgres/no-answer';
export { SERVICE_APPLICATION_NAME, copyStoreApplicationName } from './postgres/postgres-application-name';
export { resolveExistingIds, storedRowOf, type StoredEventRow } from './idempotent-retry';
export { PollingSubscriptions } from './polling-subscriptions';
export { yieldToIo, LONG_TASK_MS } from './yield-to-io';
export { parseCanonicalInteger, MAX_REVISION, CANONICAL_DECIMAL_PATTERN, CANONICAL_DECIMAL_RULE } from './revision-text';
export { urlParts, withoutCredentials, type UrlParts } from './without-credentials';
export { mayContinueAppend, completeLastAppend, MAX_APPEND_COMPLETION_PAGES } from './append-boundary';
export { headToSkipTo } from './head-to-skip-to';
export { storeWith } from './store-with';
