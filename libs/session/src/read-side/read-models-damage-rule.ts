/**
 * The one rule saying whether an error is the read models file (`read-models.sqlite`) found
 * damaged: {@link isReadModelsDamage}. Every place that can meet the damage calls it — a read or an
 * HTTP command (the HTTP error filter), a NATS command, the projector on the event loop or in its
 * worker thread (which applies it there and posts its verdict with the batch's outcome:
 * {@link ReadModelsDamagedError}), the decisions feed — and the service records what it says in one
 * place (`/health`'s `readModels.damaged`). Only failures are classified: nothing runs per event.
 */
import { EventStoreCorruptError, isSqliteCorrupt } from '@lib/event-store';

/**
 * A failure met on the read models in another thread (the projector's worker) that the rule there
 * found to be their damage, remade on this thread: SQLite's error code does not cross the thread
 * boundary, the worker's verdict does. `name` and `message` are the worker's error's (e.g.
 * `SqliteError`, `file is not a database`), so the projector's `lastError` reads as on the event loop.
 */
export class ReadModelsDamagedError extends Error {
  override readonly name: string;

  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/**
 * True when `error` says the read models file is damaged: SQLite's `SQLITE_CORRUPT…` or
 * `SQLITE_NOTADB` ({@link isSqliteCorrupt}, also as an error's `cause`) or its `malformed JSON`
 * ({@link isMalformedJsonText}) that is not the event store's
 * own ({@link EventStoreCorruptError}: the store wraps every one it meets, so a raw one comes from the
 * read models), or a {@link ReadModelsDamagedError} (the verdict of this rule in a worker thread).
 * False for anything else, including non-errors.
 */
export function isReadModelsDamage(error: unknown): boolean {
  if (error instanceof ReadModelsDamagedError) return true;
  if (error instanceof EventStoreCorruptError) return false;
  return isSqliteCorrupt(error) || isMalformedJsonText(error);
}

/**
 * SQLite's `malformed JSON` from a JSON function (`json_extract`, `->>`): the read models only ever
 * store JSON text made by `JSON.stringify`, so a statement finding one malformed read a row whose
 * bytes were overwritten (SQLite keeps no checksum of a row's content: such damage is met only where
 * a JSON function parses it; newcomer ncdata69 F3: it answered 500 `internal`).
 */
function isMalformedJsonText(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'SQLITE_ERROR' && message === 'malformed JSON';
}
