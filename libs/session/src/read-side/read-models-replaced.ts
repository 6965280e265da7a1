/**
 * The read models rewritten under a running service by another build of it: a second service
 * process on the same `DATA_DIR` (builds from before 2026-11-30 17:18 take no lock on it) finds read
 * models of another version at its start, drops them and rebuilds its own. This process's statements
 * then name tables or columns the file no longer has, and answered 500 `internal` while `/health`
 * said ok (newcomer ncupgrade F1). Such a failure is told apart by the file's schema version
 * (`PRAGMA user_version`) differing from this build's, and is then reported as the read models'
 * damage is ({@link ReadModelsReplacedError} is a `ReadModelsDamagedError`): 503
 * `read_models_damaged`, `/health` unavailable, until the restart rebuilds them.
 */
import { ReadModelsDamagedError } from './read-models-damage-rule';
import { READ_MODEL_SCHEMA_VERSION } from './read-model-schema';
import type { ReadModelStore } from './read-model-store';

/**
 * A failure on read models that another build rewrote (see the module documentation): `name` is the
 * failure's (e.g. `SqliteError`), `message` its own and the versions; `versionOnDisk` the
 * file's `user_version` when it was met.
 */
export class ReadModelsReplacedError extends ReadModelsDamagedError {
  constructor(
    readonly versionOnDisk: number,
    failure: Error,
  ) {
    super(
      failure.name,
      `${failure.message}; the file holds read models version ${versionOnDisk}, this build's are version ${READ_MODEL_SCHEMA_VERSION}: another build of the service rewrote it`,
    );
  }
}

/**
 * A failure on read models of this build's version that lack a table or column this build makes:
 * another program changed the file (a table dropped with `sqlite3`, say). Their damage as well
 * (it answered 500 `internal`, newcomer ncverify48 F3): a restart rebuilds them from the log
 * (`missingReadModelSchema`). `name` is the failure's, `message` its own and what it means.
 */
export class ReadModelsAlteredError extends ReadModelsDamagedError {
  constructor(failure: Error) {
    super(
      failure.name,
      `${failure.message}; the file holds this build's read models version ${READ_MODEL_SCHEMA_VERSION} without it: another program changed it`,
    );
  }
}

/**
 * True when `error` is SQLite's answer to a statement naming a table or column the database does not
 * have, or an upsert whose unique index is gone (`ON CONFLICT clause does not match any PRIMARY KEY or
 * UNIQUE constraint`: a dropped index jammed the projector while `/health` said ok; newcomer ncverify49 F1).
 */
export function isSchemaMismatch(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === 'SQLITE_ERROR' &&
    typeof message === 'string' &&
    /^(no such (table|column)|table \S+ has no column named|ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint)/.test(message)
  );
}

/**
 * `error` as the service should treat it: when it is a schema mismatch ({@link isSchemaMismatch}),
 * a {@link ReadModelsReplacedError} if `store`'s file now holds read models of another version than
 * this build's, else a {@link ReadModelsAlteredError} (one pragma read, only for such a failure);
 * any other `error` itself (also a mismatch when the version cannot be read).
 */
export function asReadModelsReplaced(error: unknown, store: ReadModelStore): unknown {
  if (!isSchemaMismatch(error)) return error;
  let version: number;
  try {
    version = store.db.pragma('user_version', { simple: true }) as number;
  } catch {
    return error;
  }
  return version === READ_MODEL_SCHEMA_VERSION ? new ReadModelsAlteredError(error as Error) : new ReadModelsReplacedError(version, error as Error);
}
