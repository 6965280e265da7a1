import type Database from 'better-sqlite3';
import type { RecordedEvent } from '../event-store.port';
import type { CopiedRows, DeletedStream, ForeignRows, LogContents, LogCopy } from '../log-copy.port';
import { metadataText } from '../recorded-from-row';
import { COPY_MARKER_TABLE, type CopyMarker } from '../copy-marker';
import { readSqliteCopyMarker, SQLITE_COPY_MARKER_SQL } from './sqlite-copy-marker';

/**
 * {@link LogCopy} on an SQLite event store's connection (schema: sqlite-schema.ts). Each method is
 * one transaction on `db` (synchronous: the copy's writes block the event loop while they run,
 * which the copy command wants). Positions are written into `events.position` as given;
 * AUTOINCREMENT's `sqlite_sequence` then holds the highest, raised further by {@link importHead}.
 */
export class SqliteLogCopy implements LogCopy {
  constructor(private readonly db: Database.Database) {}

  /** See {@link LogCopy.contents}: counts of `events`, of the streams in `streams` or `deleted_streams`, and `sqlite_sequence`. */
  async contents(): Promise<LogContents> {
    const row = this.db
      .prepare<[], { events: bigint; streams: bigint; head: bigint | null }>(
        `SELECT (SELECT count(*) FROM events) AS events,
                (SELECT count(*) FROM (SELECT stream FROM streams UNION SELECT stream FROM deleted_streams)) AS streams,
                (SELECT seq FROM sqlite_sequence WHERE name = 'events') AS head`,
      )
      .safeIntegers(true)
      .get()!;
    return { events: row.events, streams: row.streams, head: row.head ?? 0n };
  }

  /** See {@link LogCopy.copyMarker}. */
  async copyMarker(): Promise<CopyMarker | null> {
    return readSqliteCopyMarker(this.db) ?? null;
  }

  /** See {@link LogCopy.markCopyInProgress}: the table and its one row, in one transaction. */
  async markCopyInProgress(marker: CopyMarker): Promise<void> {
    this.db.transaction(() => {
      this.db.exec(`${SQLITE_COPY_MARKER_SQL}; DELETE FROM ${COPY_MARKER_TABLE};`);
      this.db
        .prepare<[number, string, number | null, string | null]>(`INSERT INTO ${COPY_MARKER_TABLE} (started, source, pid, host) VALUES (?, ?, ?, ?)`)
        .run(marker.started.getTime(), marker.source, marker.pid ?? null, marker.host ?? null);
    })();
  }

  /** See {@link LogCopy.unmarkCopyInProgress}. */
  async unmarkCopyInProgress(): Promise<void> {
    this.db.exec(`DROP TABLE IF EXISTS ${COPY_MARKER_TABLE}`);
  }

  /** See {@link LogCopy.deletedStreams}: the rows of `deleted_streams`. */
  async deletedStreams(): Promise<DeletedStream[]> {
    return this.db
      .prepare<[], DeletedStream>('SELECT stream, revision FROM deleted_streams ORDER BY stream')
      .safeIntegers(true)
      .all()
      .map((r) => ({ stream: r.stream, revision: r.revision }));
  }

  /** See {@link LogCopy.importEvents}: inserts the rows with their positions, then upserts each stream's revision. */
  async importEvents(events: readonly RecordedEvent[]): Promise<void> {
    const insert = this.db.prepare<[bigint, string, bigint, string, string, string, string | null, number]>(
      'INSERT INTO events (position, stream, revision, id, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const upsert = this.db.prepare<[string, bigint]>(
      'INSERT INTO streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = max(revision, excluded.revision)',
    );
    this.db.transaction(() => {
      const last = new Map<string, bigint>();
      for (const e of events) {
        insert.run(e.position, e.streamId, e.revision, e.id, e.type, JSON.stringify(e.data), metadataText(e.metadata), e.created.getTime());
        last.set(e.streamId, e.revision);
      }
      for (const [stream, revision] of last) upsert.run(stream, revision);
    })();
  }

  /** See {@link LogCopy.importDeletedStreams}: rows of `deleted_streams` (a live stream keeps its `streams` row). */
  async importDeletedStreams(deleted: readonly DeletedStream[]): Promise<void> {
    const insert = this.db.prepare<[string, bigint]>(
      'INSERT INTO deleted_streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = max(revision, excluded.revision)',
    );
    this.db.transaction(() => {
      for (const d of deleted) insert.run(d.stream, d.revision);
    })();
  }

  /** See {@link LogCopy.importHead}: `sqlite_sequence`'s row for `events`, raised (created when absent). */
  async importHead(position: bigint): Promise<void> {
    this.db.transaction(() => {
      const { changes } = this.db.prepare<[bigint]>("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'").run(position);
      if (changes === 0) this.db.prepare<[bigint]>("INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)").run(position);
    })();
  }

  /** See {@link LogCopy.clear}. */
  async clear(): Promise<void> {
    this.db.transaction(() => {
      this.db.exec("DELETE FROM events; DELETE FROM streams; DELETE FROM deleted_streams; DELETE FROM sqlite_sequence WHERE name = 'events';");
      this.db.exec(`DROP TABLE IF EXISTS ${COPY_MARKER_TABLE}`);
    })();
  }

  /**
   * See {@link LogCopy.clearCopied}: in one IMMEDIATE transaction (the write lock taken first: no other connection
   * writes meanwhile), the events counted against `copied`, and removed as {@link clear} only when they match.
   */
  async clearCopied(copied: CopiedRows): Promise<ForeignRows | null> {
    const count = this.db.prepare<[], bigint>('SELECT count(*) FROM events').pluck().safeIntegers(true);
    const inRun = this.db.prepare<[bigint, bigint], bigint>('SELECT count(*) FROM events WHERE position BETWEEN ? AND ?').pluck().safeIntegers(true);
    const headOf = this.db.prepare<[], bigint>("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck().safeIntegers(true);
    return this.db
      .transaction((): ForeignRows | null => {
        const total = count.get()!;
        let ours = 0n;
        for (const [lo, hi] of copied.runs) ours += inRun.get(lo, hi)!;
        const head = headOf.get() ?? 0n;
        if (total === ours && ours === copied.events && head <= copied.head) {
          this.db.exec("DELETE FROM events; DELETE FROM streams; DELETE FROM deleted_streams; DELETE FROM sqlite_sequence WHERE name = 'events';");
          this.db.exec(`DROP TABLE IF EXISTS ${COPY_MARKER_TABLE}`);
          return null;
        }
        const found: ForeignRows = { events: total - ours, missing: copied.events - ours, head };
        if (total === ours) return found;
        // The first event outside the runs: the events in position order, walked beside the (ascending) runs.
        let run = 0;
        for (const e of this.db
          .prepare<[], { position: bigint; stream: string }>('SELECT position, stream FROM events ORDER BY position')
          .safeIntegers(true)
          .iterate()) {
          while (run < copied.runs.length && copied.runs[run][1] < e.position) run += 1;
          if (run === copied.runs.length || e.position < copied.runs[run][0]) {
            found.first = { position: e.position, stream: e.stream };
            break;
          }
        }
        return found;
      })
      .immediate();
  }

  /**
   * See {@link LogCopy.otherUsers}: this connection takes the file's EXCLUSIVE lock for a moment, without waiting
   * (`locking_mode = EXCLUSIVE`, an empty IMMEDIATE transaction, `busy_timeout` 0), then gives it up again. In WAL
   * mode every other open connection (that has read the file) holds a SHARED lock on it for as long as it is open,
   * so the lock is refused (SQLITE_BUSY) exactly while another connection, of any process, has the file open.
   */
  async otherUsers(): Promise<string[]> {
    const timeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma('busy_timeout = 0');
    this.db.pragma('locking_mode = EXCLUSIVE');
    try {
      this.db.exec('BEGIN IMMEDIATE; COMMIT');
      return [];
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      const code = (error as { code?: unknown }).code;
      if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') throw error;
      return [
        `another connection has the file open (a service or rebuild-read-models on it as SQLITE_EVENTS_FILE, or another program: SQLite does not say which)`,
      ];
    } finally {
      this.db.pragma('locking_mode = NORMAL');
      // The exclusive lock is given up at the next read in NORMAL mode.
      this.db.prepare('SELECT count(*) FROM sqlite_master').get();
      this.db.pragma(`busy_timeout = ${timeout}`);
    }
  }
}
