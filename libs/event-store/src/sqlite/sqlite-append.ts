import type Database from 'better-sqlite3';
import type { SerializedEvent } from '../append-input';
import { satisfies } from '../append-input';
import { WrongExpectedRevisionError, WrongIncarnationError } from '../errors';
import { resolveExistingIds, storedRowOf, type StoredEventRow } from '../idempotent-retry';
import type { AppendResult, ExpectedRevision } from '../event-store.port';

type ExistingRow = StoredEventRow;
/** A stream's revision row, first event's revision and deleted revision record (each null when absent). */
interface IncarnationRow {
  current: bigint | null;
  first: bigint | null;
  deleted: bigint | null;
}

/**
 * An append's result inside the SQLite store: the port's {@link AppendResult} and, when this append
 * wrote its events (not an idempotent resend), `writtenAtMs`: their `created` stamp (ms since the
 * epoch). The store keeps it for {@link SqliteRecentEvents} and answers callers without it.
 */
export type SqliteAppendResult = AppendResult & { writtenAtMs?: number };

/**
 * One append's logic against the SQLite schema: the expected-revision check, idempotent retries
 * and the insert. Must run inside a write transaction (the caller's `BEGIN IMMEDIATE` plus a
 * SAVEPOINT), which makes the check and the insert atomic, also across processes.
 * Statements use safe integers: positions and revisions are bigint.
 */
export class SqliteAppender {
  private readonly streamRevision: Database.Statement<[string], { revision: bigint }>;
  private readonly eventById: Database.Statement<[string], ExistingRow>;
  private readonly insertEvent: Database.Statement<[string, bigint, string, string, string, string | null, number]>;
  private readonly upsertStream: Database.Statement<[string, bigint]>;
  private readonly deleteEvents: Database.Statement<[string]>;
  private readonly deleteStreamRow: Database.Statement<[string]>;
  private readonly deletedRevision: Database.Statement<[string], { revision: bigint }>;
  private readonly firstRevision: Database.Statement<[string], { revision: bigint }>;
  private readonly recordDeletedRevision: Database.Statement<[string, bigint]>;
  private readonly incarnationRow: Database.Statement<[string, string, string], IncarnationRow>;

  constructor(db: Database.Database) {
    this.streamRevision = db.prepare<[string], { revision: bigint }>('SELECT revision FROM streams WHERE stream = ?').safeIntegers(true);
    this.eventById = db.prepare<[string], ExistingRow>('SELECT position, stream, revision, type, data, metadata FROM events WHERE id = ?').safeIntegers(true);
    this.insertEvent = db
      .prepare<[string, bigint, string, string, string, string | null, number]>(
        'INSERT INTO events (stream, revision, id, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .safeIntegers(true);
    this.upsertStream = db.prepare<[string, bigint]>(
      'INSERT INTO streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision',
    );
    this.deleteEvents = db.prepare<[string]>('DELETE FROM events WHERE stream = ?');
    this.deleteStreamRow = db.prepare<[string]>('DELETE FROM streams WHERE stream = ?');
    this.firstRevision = db
      .prepare<[string], { revision: bigint }>('SELECT revision FROM events WHERE stream = ? ORDER BY revision LIMIT 1')
      .safeIntegers(true);
    this.deletedRevision = db.prepare<[string], { revision: bigint }>('SELECT revision FROM deleted_streams WHERE stream = ?').safeIntegers(true);
    // incarnation()'s three reads in one statement: one read transaction instead of two or three (on the event loop once per write request).
    this.incarnationRow = db
      .prepare<[string, string, string], IncarnationRow>(
        'SELECT (SELECT revision FROM streams WHERE stream = ?) AS current, ' +
          '(SELECT revision FROM events WHERE stream = ? ORDER BY revision LIMIT 1) AS first, ' +
          '(SELECT revision FROM deleted_streams WHERE stream = ?) AS deleted',
      )
      .safeIntegers(true);
    this.recordDeletedRevision = db.prepare<[string, bigint]>(
      // The larger of the two: a build from before deleted_streams (a rollback) writes an erased stream again from revision 0, and its deletion must not lower the record.
      'INSERT INTO deleted_streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = max(revision, excluded.revision)',
    );
  }

  /** Current revision (bigint) of the stream's last event, or null when the stream does not exist. */
  currentRevision(stream: string): bigint | null {
    return this.streamRevision.get(stream)?.revision ?? null;
  }

  /** See `EventStore.streamIncarnation`: the first event's revision, else the revision after the deleted ones (0n when none). */
  incarnation(stream: string): bigint {
    const { current, first, deleted } = this.incarnationRow.get(stream, stream, stream) as IncarnationRow;
    if (current !== null && first !== null) return first;
    return deleted !== null ? deleted + 1n : 0n;
  }

  /**
   * Appends `events` (already validated) to `stream`, or recognises an idempotent retry.
   * `incarnation`: see `AppendOptions.incarnation` (checked first, in the caller's transaction).
   * @throws WrongIncarnationError when `incarnation` is given and is not the stream's incarnation.
   * @throws WrongExpectedRevisionError when the stream's state does not match `expected`.
   * @throws DuplicateEventIdError when an id exists with other content or at another place.
   */
  append(stream: string, events: SerializedEvent[], expected: ExpectedRevision, incarnation?: bigint): SqliteAppendResult {
    const current = this.currentRevision(stream);
    if (incarnation !== undefined) {
      const actual = this.incarnation(stream);
      if (actual !== incarnation) throw new WrongIncarnationError(stream, expected, current ?? 'no_stream', incarnation, actual);
    }
    const existing = events.map((e) => storedRowOf(stream, e, (id) => this.eventById.get(id)));
    if (existing.some((row) => row !== undefined)) {
      return resolveExistingIds(stream, events, expected, current, existing, this.firstRevision.get(stream)?.revision ?? null);
    }
    if (!satisfies(expected, current)) throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
    const created = Date.now();
    // A deleted stream written again continues after its deleted revisions (never reused).
    let revision = current ?? this.deletedRevision.get(stream)?.revision ?? -1n;
    let position = 0n;
    for (const e of events) {
      revision += 1n;
      position = BigInt(this.insertEvent.run(stream, revision, e.id, e.type, e.data, e.metadata, created).lastInsertRowid);
    }
    this.upsertStream.run(stream, revision);
    return { nextExpectedRevision: revision, position, writtenAtMs: created };
  }

  /**
   * Deletes the stream's events and its revision row, and records that revision in
   * `deleted_streams` (appending again continues after it); returns how many events were removed.
   * @throws WrongExpectedRevisionError when `expected` is given and is not the stream's revision (nothing deleted).
   */
  delete(stream: string, expected?: bigint): number {
    const current = this.currentRevision(stream);
    if (expected !== undefined && current !== expected) throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
    if (current === null) return 0;
    const { changes } = this.deleteEvents.run(stream);
    this.deleteStreamRow.run(stream);
    this.recordDeletedRevision.run(stream, current);
    return changes;
  }
}
