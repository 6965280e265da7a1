import * as path from 'node:path';
import {
  createEventStore,
  EventStoreCopyInProgressError,
  EventStoreCorruptError,
  withoutCredentials,
  type EventStore,
  type EventStoreConfig,
} from '@lib/event-store';
import { copyInProgressRefusal } from './copy-in-progress-refusal';
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
 * The event store a configuration selects, in words for a line a tool prints (credentials masked):
 * the SQLite file as an absolute path and the setting that chose it
 * (`/srv/store/events.sqlite (SQLITE_EVENTS_FILE)`, or `/app/data/events.sqlite (DATA_DIR)` for
 * the default), `PostgreSQL DATABASE_URL=postgres://app:***@db:5432/events`, or
 * `KurrentDB KURRENTDB_CONNECTION_STRING=…`.
 */
export function eventStoreNamed(config: Pick<ServiceConfig, 'dataDir' | 'sqliteEventsFile' | 'databaseUrl' | 'kurrentDbConnectionString'>): string {
  if (config.kurrentDbConnectionString) return `KurrentDB KURRENTDB_CONNECTION_STRING=${withoutCredentials(config.kurrentDbConnectionString)}`;
  if (config.databaseUrl) return `PostgreSQL DATABASE_URL=${withoutCredentials(config.databaseUrl)}`;
  const file = path.resolve(config.sqliteEventsFile);
  return `${file} (${file === path.resolve(config.dataDir, 'events.sqlite') ? 'DATA_DIR' : 'SQLITE_EVENTS_FILE'})`;
}

/**
 * The argument of `createEventStore` for a service configuration (SQLite file `SQLITE_EVENTS_FILE`,
 * default `<dataDir>/events.sqlite`; its writer thread `SQLITE_WRITER_THREAD`; its check at open
 * `SQLITE_QUICK_CHECK`, with {@link quickCheckLine}'s lines on stderr; PostgreSQL's errors
 * naming `DATABASE_URL`, {@link databaseUrlUnavailable}, its pool `DATABASE_POOL_SIZE` and
 * statement bound `DATABASE_STATEMENT_TIMEOUT_MS`).
 */
export function eventStoreConfig(config: ServiceConfig): EventStoreConfig {
  return {
    kurrentDbConnectionString: config.kurrentDbConnectionString,
    postgresUrl: config.databaseUrl,
    // Its errors name DATABASE_URL (masked) and what to fix: /health, the projector's and the feed's warn lines show them.
    postgres: config.databaseUrl
      ? {
          describeUnavailable: (error) => databaseUrlUnavailable(error, config.databaseUrl!),
          maxConnections: config.databasePoolSize,
          statementTimeoutMs: config.databaseStatementTimeoutMs,
        }
      : undefined,
    sqliteFile: config.sqliteEventsFile,
    sqlite: {
      writerThread: config.sqliteWriterThread,
      quickCheck: config.sqliteQuickCheck,
      onQuickCheck: (progress) => {
        const line = quickCheckLine(progress);
        if (line) process.stderr.write(`${line}\n`);
      },
    },
  };
}

/** Files at least this large (bytes) get a line when the quick check starts (it may take seconds). */
const QUICK_CHECK_START_LINE_BYTES = 128 * 1024 * 1024;

/** A check that took at least this long (ms) gets a line when it ends, whatever the file's size. */
const QUICK_CHECK_END_LINE_MS = 1000;

/**
 * The line said when the start-up check (`PRAGMA quick_check`) of the SQLite file `file`
 * (`bytes` long; `what` it is, e.g. `the event store file`) starts (`ms` undefined) or ends
 * (`ms`: its duration in milliseconds), or null when there is nothing worth a line: a start line
 * only for files of 128 MiB or more, an end line for those and for any check that took a second
 * or more. The check reads every page once: on 2 cores at load 18 it took 2.4 s for a 258 MiB
 * events file and 5.4 s for a 390 MiB read-models file (2026-12-02), so count up to ~15 s per GiB.
 */
export function quickCheckLine(progress: { file: string; bytes: number; ms?: number; what?: string }): string | null {
  const { file, bytes, ms, what = 'the event store file' } = progress;
  const large = bytes >= QUICK_CHECK_START_LINE_BYTES;
  const size = bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;
  if (ms === undefined)
    return large
      ? `checking ${what} ${file} (${size}) with PRAGMA quick_check before starting (it reads every page: up to ~15 s per GiB on a busy machine; SQLITE_QUICK_CHECK=false skips it)`
      : null;
  if (!large && ms < QUICK_CHECK_END_LINE_MS) return null;
  return `checked ${what} ${file} (${size}) in ${(ms / 1000).toFixed(1)} s (SQLITE_QUICK_CHECK=false skips this check at start)`;
}

/**
 * The refusal of a start on a damaged SQLite events file: names `SQLITE_EVENTS_FILE` when it is
 * set (not the default `<DATA_DIR>/events.sqlite`), else `DATA_DIR`, the file, what is wrong, and
 * what to do (restore it from a backup, or `sqlite3 .recover`; keep the read models).
 */
export function damagedEventsFileRefusal(config: Pick<ServiceConfig, 'dataDir' | 'sqliteEventsFile'>, error: EventStoreCorruptError): ConfigurationError {
  const fromEnv = config.sqliteEventsFile !== path.join(config.dataDir, 'events.sqlite');
  const file = error.file;
  return new ConfigurationError({
    ...(fromEnv ? { variable: 'SQLITE_EVENTS_FILE', value: config.sqliteEventsFile } : { variable: 'DATA_DIR', value: config.dataDir }),
    problem: `its event store ${file} is damaged (${error.reason})`,
    fix: `stop every process using it and restore ${file} from a backup, or recover what is readable with sqlite3 ${file} ".recover" | sqlite3 recovered.sqlite and put recovered.sqlite in its place (remove its -wal and -shm files); keep read-models.sqlite (it holds the events' text up to its checkpoint); SQLITE_QUICK_CHECK=false skips this check at start, but a damaged page met while running stops every write (503 store_corrupt)`,
  });
}

/**
 * Opens the event store a configuration selects (`createEventStore(eventStoreConfig(config))`).
 * @throws ConfigurationError naming `KURRENTDB_CONNECTION_STRING` (its password masked) with the
 *   driver's reason when the connection string cannot be parsed; {@link damagedEventsFileRefusal}
 *   for a damaged SQLite events file; `copyInProgressRefusal` for a SQLite file holding a partial copy
 *   (copy-store's mark); the store's other errors unchanged.
 */
export function openEventStore(config: ServiceConfig): EventStore {
  try {
    return createEventStore(eventStoreConfig(config));
  } catch (err) {
    if (err instanceof EventStoreCorruptError) throw damagedEventsFileRefusal(config, err);
    if (err instanceof EventStoreCopyInProgressError) throw copyInProgressRefusal(config, err);
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
