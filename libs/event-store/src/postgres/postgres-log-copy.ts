import type { PoolClient } from 'pg';
import type { RecordedEvent } from '../event-store.port';
import type { CopiedRows, DeletedStream, ForeignRows, LogContents, LogCopy } from '../log-copy.port';
import { metadataText } from '../recorded-from-row';
import { SERVICE_APPLICATION_NAME } from './postgres-application-name';
import { COPY_MARKER_TABLE, UNKNOWN_COPY_MARKER, markerOfRow, type CopyMarker } from '../copy-marker';

/** What {@link PostgresLogCopy} runs on: the store's reads and transactions (schema set up first, errors mapped as the store's). */
export interface PostgresLogCopyAccess {
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
  transaction(fn: (client: PoolClient) => Promise<void>): Promise<void>;
}

/**
 * {@link LogCopy} on a PostgreSQL event store (schema: postgres-schema.ts): events inserted into
 * `es_events` with their positions and `created` as given (not the column's default), `es_streams`
 * rows (deleted streams: `deleted` set at their last revision), `es_head` raised to the copied
 * head. Each method is one transaction. `created` is written to the millisecond (what
 * {@link RecordedEvent.created} holds).
 */
export class PostgresLogCopy implements LogCopy {
  constructor(private readonly db: PostgresLogCopyAccess) {}

  /** See {@link LogCopy.contents}: counts of `es_events` and `es_streams`, and `es_head`. */
  async contents(): Promise<LogContents> {
    const [row] = await this.db.query<{ events: string; streams: string; head: string | null }>(
      'SELECT (SELECT count(*) FROM es_events)::text AS events, (SELECT count(*) FROM es_streams)::text AS streams, (SELECT position FROM es_head)::text AS head',
    );
    return { events: BigInt(row.events), streams: BigInt(row.streams), head: BigInt(row.head ?? '0') };
  }

  /** See {@link LogCopy.copyMarker}. */
  async copyMarker(): Promise<CopyMarker | null> {
    const [row] = await this.db.query<{ marked: boolean }>(`SELECT to_regclass('${COPY_MARKER_TABLE}') IS NOT NULL AS marked`);
    if (!row.marked) return null;
    // SELECT *: a mark an older copy left has no pid and host columns.
    const [marker] = await this.db.query<{ started: Date; source: string; pid?: number | null; host?: string | null }>(
      `SELECT * FROM ${COPY_MARKER_TABLE} LIMIT 1`,
    );
    return marker ? markerOfRow(marker) : UNKNOWN_COPY_MARKER;
  }

  /** See {@link LogCopy.markCopyInProgress}: the table ({@link POSTGRES_COPY_MARKER_SQL}) and its one row, in one transaction. */
  async markCopyInProgress(marker: CopyMarker): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query(`${POSTGRES_COPY_MARKER_SQL}; DELETE FROM ${COPY_MARKER_TABLE}`);
      await client.query(`INSERT INTO ${COPY_MARKER_TABLE} (started, source, pid, host) VALUES ($1, $2, $3, $4)`, [
        marker.started.toISOString(),
        marker.source,
        marker.pid ?? null,
        marker.host ?? null,
      ]);
    });
  }

  /** See {@link LogCopy.unmarkCopyInProgress}. */
  async unmarkCopyInProgress(): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query(`DROP TABLE IF EXISTS ${COPY_MARKER_TABLE}`);
    });
  }

  /** See {@link LogCopy.deletedStreams}: the `es_streams` rows with `deleted` set (a stream written again after its deletion shows its floor by its first revision). */
  async deletedStreams(): Promise<DeletedStream[]> {
    const rows = await this.db.query<{ stream: string; revision: string }>(
      'SELECT stream, revision::text AS revision FROM es_streams WHERE deleted ORDER BY stream COLLATE "C"',
    );
    return rows.map((r) => ({ stream: r.stream, revision: BigInt(r.revision) }));
  }

  /** See {@link LogCopy.importEvents}: one multi-row insert, the streams' revisions and the head, in one transaction. */
  async importEvents(events: readonly RecordedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.transaction(async (client) => {
      await client.query(
        `INSERT INTO es_events (position, stream, revision, id, type, data, metadata, created)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])`,
        [
          events.map((e) => e.position.toString()),
          events.map((e) => e.streamId),
          events.map((e) => e.revision.toString()),
          events.map((e) => e.id),
          events.map((e) => e.type),
          events.map((e) => JSON.stringify(e.data)),
          events.map((e) => metadataText(e.metadata)),
          events.map((e) => e.created.toISOString()),
        ],
      );
      const last = new Map<string, bigint>();
      for (const e of events) last.set(e.streamId, e.revision);
      await client.query(
        `INSERT INTO es_streams AS s (stream, revision, deleted) SELECT t.stream, t.revision, false FROM unnest($1::text[], $2::bigint[]) AS t(stream, revision)
         ON CONFLICT (stream) DO UPDATE SET revision = greatest(s.revision, excluded.revision), deleted = false`,
        [[...last.keys()], [...last.values()].map(String)],
      );
      await client.query('UPDATE es_head SET position = greatest(position, $1::bigint)', [events[events.length - 1].position.toString()]);
    });
  }

  /** See {@link LogCopy.importDeletedStreams}: `es_streams` rows with `deleted` set; a stream with a row (live) keeps it. */
  async importDeletedStreams(deleted: readonly DeletedStream[]): Promise<void> {
    if (deleted.length === 0) return;
    await this.db.transaction(async (client) => {
      await client.query(
        `INSERT INTO es_streams (stream, revision, deleted) SELECT t.stream, t.revision, true FROM unnest($1::text[], $2::bigint[]) AS t(stream, revision)
         ON CONFLICT (stream) DO NOTHING`,
        [deleted.map((d) => d.stream), deleted.map((d) => d.revision.toString())],
      );
    });
  }

  /** See {@link LogCopy.importHead}. */
  async importHead(position: bigint): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query('UPDATE es_head SET position = greatest(position, $1::bigint)', [position.toString()]);
    });
  }

  /** See {@link LogCopy.clear}. */
  async clear(): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query('TRUNCATE es_events, es_streams');
      await client.query('UPDATE es_head SET position = 0');
      await client.query(`DROP TABLE IF EXISTS ${COPY_MARKER_TABLE}`);
    });
  }

  /**
   * See {@link LogCopy.clearCopied}: the tables locked first (ACCESS EXCLUSIVE, as TRUNCATE takes: no append,
   * erasure or read runs meanwhile), then counted against `copied`, then emptied as {@link clear} only when they match.
   */
  async clearCopied(copied: CopiedRows): Promise<ForeignRows | null> {
    let found: ForeignRows | null = null;
    await this.db.transaction(async (client) => {
      await client.query('LOCK TABLE es_head, es_streams, es_events IN ACCESS EXCLUSIVE MODE');
      const runs = [copied.runs.map(([lo]) => lo.toString()), copied.runs.map(([, hi]) => hi.toString())];
      const {
        rows: [row],
      } = await client.query<{ total: string; ours: string; head: string | null }>(
        `SELECT (SELECT count(*) FROM es_events)::text AS total,
                (SELECT count(*) FROM es_events e JOIN unnest($1::bigint[], $2::bigint[]) AS r(lo, hi) ON e.position BETWEEN r.lo AND r.hi)::text AS ours,
                (SELECT position FROM es_head)::text AS head`,
        runs,
      );
      const [total, ours, head] = [BigInt(row.total), BigInt(row.ours), BigInt(row.head ?? '0')];
      if (total === ours && ours === copied.events && head <= copied.head) {
        await client.query('TRUNCATE es_events, es_streams');
        await client.query('UPDATE es_head SET position = 0');
        await client.query(`DROP TABLE IF EXISTS ${COPY_MARKER_TABLE}`);
        return;
      }
      found = { events: total - ours, missing: copied.events - ours, head };
      if (total === ours) return;
      const {
        rows: [first],
      } = await client.query<{ position: string; stream: string }>(
        `SELECT e.position::text AS position, e.stream FROM es_events e
         WHERE NOT EXISTS (SELECT 1 FROM unnest($1::bigint[], $2::bigint[]) AS r(lo, hi) WHERE e.position BETWEEN r.lo AND r.hi)
         ORDER BY e.position LIMIT 1`,
        runs,
      );
      if (first) found.first = { position: BigInt(first.position), stream: first.stream };
    });
    return found;
  }

  /**
   * See {@link LogCopy.otherUsers}: the rows of `pg_stat_activity` on this database whose `application_name` is a
   * service's ({@link SERVICE_APPLICATION_NAME}, ` claims` after it, or another command's name after it), but this
   * store's own (its connections' `application_name`, which the copy makes its own).
   */
  async otherUsers(): Promise<string[]> {
    const rows = await this.db.query<{ pid: number; name: string; usename: string | null; addr: string | null; since: Date | null }>(
      `SELECT pid, application_name AS name, usename, host(client_addr) AS addr, backend_start AS since FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND (application_name = $1 OR starts_with(application_name, $1 || ' ')) AND application_name <> current_setting('application_name')
       ORDER BY backend_start, pid`,
      [SERVICE_APPLICATION_NAME],
    );
    return rows.map(
      (r) =>
        `connection pid ${r.pid} "${r.name}"${r.usename ? ` of user ${r.usename}` : ''}${r.addr ? ` from ${r.addr}` : ''}${r.since ? ` since ${r.since.toISOString()}` : ''}`,
    );
  }
}

/** The SQL creating the marker table in PostgreSQL. */
export const POSTGRES_COPY_MARKER_SQL = `CREATE TABLE IF NOT EXISTS ${COPY_MARKER_TABLE} (started timestamptz NOT NULL, source text NOT NULL, pid integer, host text)`;
