/**
 * The PostgreSQL event store schema (version {@link POSTGRES_SCHEMA_VERSION}), created idempotently on first use (under a
 * transaction-scoped advisory lock, so replicas starting together do not race on the DDL).
 *
 * - `es_events`: the global log. `position` is assigned by `es_append` from `es_head` (see
 *   below); `revision` is 0-based in `stream`; `id` is the event's UUID (unique in the store);
 *   `data` and `metadata` are JSON text exactly as the adapter serialised it (kept as text so an
 *   idempotent retry compares byte for byte); `created` is the database server's clock when the
 *   row is inserted (`DEFAULT clock_timestamp()`, {@link POSTGRES_CREATED_DEFAULT}). Every append
 *   function of every build (`es_append` of builds before version 2, `es_append_v2`) inserts its
 *   rows after it took the `es_head` row lock (see below), which the append before it held until
 *   its commit: so `created` never decreases in position order while the server's clock does not
 *   go back. Databases set up before 2026-12-03 had `DEFAULT now()`, the transaction's start, taken
 *   before the append waits for that lock (times went back in position order under concurrent
 *   appends); a start changes the default ({@link POSTGRES_CREATED_DEFAULT_SQL}), and the append
 *   functions of older builds, which leave `created` to the default, then stamp the new way too.
 *   No new schema version: no build reads the default, so older builds keep working beside it.
 * - `es_streams`: the last revision of each stream (the row the expected-revision check locks).
 *   Deleting a stream keeps its row with `deleted` set (its events are removed): the stream does
 *   not exist for reads and checks, and appending to it again continues after that revision, so
 *   revisions are never reused (as KurrentDB after a soft delete) and a writer that decided on
 *   the deleted stream's state is refused by the check. The column is added to older databases
 *   on start (`ADD COLUMN IF NOT EXISTS`).
 * - `es_head`: one row, the last position assigned. Appends take its row lock as the LAST lock of
 *   their transaction and keep it until commit, so positions are assigned in commit order: when a
 *   reader sees position p committed, every position below p was committed (or rolled back, with
 *   its `es_head` update) before p was even assigned. A reader can therefore move its checkpoint
 *   past anything it has read without ever skipping an event that commits late. The price: appends
 *   commit one at a time (see docs/performance.md).
 * - `es_schema`: one row, the highest schema version a build has set up on this database (absent
 *   before version 2). A build refuses a database whose version is newer than its own (see
 *   `PostgresEventStore`); builds before version 2 never read it.
 * - `es_append_v2(...)`: one append in one round trip (check, insert, head update), run as a single
 *   autocommit statement, so the head lock is held only for the server-side insert and the commit.
 *   It answers `ok`, `wrong_revision` (nothing written; `revision` = current or null),
 *   `ids_exist` (nothing written: some ids are stored; the adapter decides retry or conflict) or
 *   `retry` (a concurrent append created the stream first; call again). `p_former` holds the
 *   events' former ids (`EventData.formerIds`), which count in this stream only (`storedRowOf`). The name carries its
 *   version: builds before schema version 2 called `es_append` and re-create it with their own body
 *   on start (the 2026-11-30 one ignores `deleted`), so this build neither calls nor creates it;
 *   a later change of this function gets a new name too, never a new body under this one.
 * - `es_append_in_life_v1(...)`: `es_append_v2` for an append given `AppendOptions.incarnation`
 *   (`p_incarnation`): it takes the stream's row lock (the one `es_append_v2` and a deletion take),
 *   reads the stream's incarnation under it (as `streamIncarnation` does: the revision after the
 *   deleted ones for a deleted stream, else its first event's, 0 for a stream never written) and
 *   answers `wrong_life` (nothing written; `out_revision`: the current revision or null,
 *   `out_incarnation`: the stream's incarnation) when it differs; otherwise it runs `es_append_v2`
 *   in the same statement, holding the lock: the check and the write are atomic. Added without a
 *   new schema version: it changes no table and no other function, and builds of version 2 do not
 *   call it, so they keep working on a database that has it.
 */
export const POSTGRES_SCHEMA_VERSION = 2;

/** The default of `es_events.created`, as `pg_get_expr` prints it: the server's clock at the insert, not at the transaction's start. */
export const POSTGRES_CREATED_DEFAULT = 'clock_timestamp()';

/** Changes `es_events.created`'s default to {@link POSTGRES_CREATED_DEFAULT}; run on start only when it differs (it takes the table's exclusive lock). */
export const POSTGRES_CREATED_DEFAULT_SQL = `ALTER TABLE es_events ALTER COLUMN created SET DEFAULT ${POSTGRES_CREATED_DEFAULT}`;

/** Key of the advisory lock that serialises schema creation. */
export const POSTGRES_SCHEMA_LOCK_KEY = 7_402_113_051;

/** The append function's name and argument types, as `to_regprocedure` reads them. */
export const POSTGRES_APPEND_FUNCTION = 'es_append_v2(text,text,uuid[],text[],text[],text[],uuid[])';

/** The body of `es_append_v2` (between its dollar quotes), as `pg_proc.prosrc` holds it: compared on start to tell a replaced body. */
export const POSTGRES_APPEND_BODY = `
DECLARE
  v_current bigint;
  v_last bigint;
  v_deleted boolean;
  v_count int := cardinality(p_ids);
  v_base bigint;
BEGIN
  SELECT s.revision, s.deleted INTO v_last, v_deleted FROM es_streams s WHERE s.stream = p_stream FOR UPDATE;
  -- A deleted stream does not exist for the check; its revisions are not reused (v_last).
  v_current := CASE WHEN v_deleted THEN NULL ELSE v_last END;
  IF NOT (p_expected = 'any'
      OR (p_expected = 'no_stream' AND v_current IS NULL)
      OR (p_expected = 'stream_exists' AND v_current IS NOT NULL)
      OR (v_current IS NOT NULL AND p_expected = v_current::text)) THEN
    RETURN QUERY SELECT 'wrong_revision'::text, v_current, NULL::bigint;
    RETURN;
  END IF;
  -- Stored under their ids anywhere, or under a former id in this stream (storedRowOf).
  IF EXISTS (SELECT 1 FROM es_events e WHERE e.id = ANY (p_ids))
      OR EXISTS (SELECT 1 FROM es_events e WHERE e.id = ANY (p_former) AND e.stream = p_stream) THEN
    RETURN QUERY SELECT 'ids_exist'::text, v_current, NULL::bigint;
    RETURN;
  END IF;
  IF v_last IS NULL THEN
    INSERT INTO es_streams AS s (stream, revision) VALUES (p_stream, v_count - 1) ON CONFLICT (stream) DO NOTHING;
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'retry'::text, NULL::bigint, NULL::bigint;
      RETURN;
    END IF;
  ELSE
    UPDATE es_streams s SET revision = v_last + v_count, deleted = false WHERE s.stream = p_stream;
  END IF;
  -- Last lock of the transaction, held until commit: positions are assigned in commit order.
  UPDATE es_head h SET position = h.position + v_count RETURNING h.position - v_count INTO v_base;
  INSERT INTO es_events (position, stream, revision, id, type, data, metadata)
    SELECT v_base + t.ord, p_stream, coalesce(v_last, -1) + t.ord, t.id, t.type, t.data, t.metadata
    FROM unnest(p_ids, p_types, p_data, p_metadata) WITH ORDINALITY AS t(id, type, data, metadata, ord);
  RETURN QUERY SELECT 'ok'::text, coalesce(v_last, -1) + v_count, v_base + v_count;
END
`;

/** The life-checked append function's name and argument types, as `to_regprocedure` reads them. */
export const POSTGRES_APPEND_IN_LIFE_FUNCTION = 'es_append_in_life_v1(text,text,bigint,uuid[],text[],text[],text[],uuid[])';

/** The body of `es_append_in_life_v1` (between its dollar quotes), as `pg_proc.prosrc` holds it: compared on start to tell a replaced body. */
export const POSTGRES_APPEND_IN_LIFE_BODY = `
DECLARE
  v_last bigint;
  v_deleted boolean;
  v_incarnation bigint;
BEGIN
  -- The lock es_append_v2 and a deletion take: the life cannot change until this statement commits.
  SELECT s.revision, s.deleted INTO v_last, v_deleted FROM es_streams s WHERE s.stream = p_stream FOR UPDATE;
  v_incarnation := CASE
    WHEN v_last IS NULL THEN 0
    WHEN v_deleted THEN v_last + 1
    ELSE coalesce((SELECT e.revision FROM es_events e WHERE e.stream = p_stream ORDER BY e.revision LIMIT 1), v_last + 1)
  END;
  IF v_incarnation <> p_incarnation THEN
    RETURN QUERY SELECT 'wrong_life'::text, CASE WHEN v_deleted THEN NULL ELSE v_last END, NULL::bigint, v_incarnation;
    RETURN;
  END IF;
  RETURN QUERY SELECT a.out_outcome, a.out_revision, a.out_position, v_incarnation
    FROM es_append_v2(p_stream, p_expected, p_ids, p_types, p_data, p_metadata, p_former) a;
END
`;

/**
 * What the database holds before the schema setup, read in its transaction (one row): whether the
 * tables exist, whether `es_streams` has `deleted`, the default of `es_events.created` (as
 * `pg_get_expr` prints it, null when there is none), the current bodies of `es_append_v2` and
 * `es_append_in_life_v1` (null when absent), whether `es_schema` exists, whether the copy's mark `es_copy_in_progress` (copy-marker.ts) does,
 * and whether `es_head` does.
 */
export const POSTGRES_SCHEMA_STATE_SQL = `
SELECT to_regclass('es_events') IS NOT NULL AS has_tables,
       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = to_regclass('es_streams') AND a.attname = 'deleted' AND NOT a.attisdropped) AS has_deleted,
       (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
         WHERE d.adrelid = to_regclass('es_events') AND a.attname = 'created') AS created_default,
       (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure('${POSTGRES_APPEND_FUNCTION}')) AS append_body,
       (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure('${POSTGRES_APPEND_IN_LIFE_FUNCTION}')) AS append_in_life_body,
       to_regclass('es_schema') IS NOT NULL AS has_version_table,
       to_regclass('es_copy_in_progress') IS NOT NULL AS has_copy_marker,
       to_regclass('es_head') IS NOT NULL AS has_head
`;

/**
 * The statement reading the highest position in `es_events` and `es_head`'s position (decimal text; `head` null
 * when the row, or with `hasHead` false the table, is missing; `last` null when `es_events` is empty): read when
 * `es_events` exists, to refuse events past the head (a collided restore, EventStoreHeadBehindError).
 * `max(position)` reads the primary key's last entry.
 */
export function postgresHeadAndLastSql(hasHead: boolean): string {
  return `SELECT (SELECT max(position) FROM es_events)::text AS last, ${hasHead ? '(SELECT position FROM es_head LIMIT 1)::text' : 'NULL::text'} AS head`;
}

/** The recorded schema version (read when `es_schema` exists). */
export const POSTGRES_SCHEMA_VERSION_SQL = 'SELECT max(version) AS version FROM es_schema';

export const POSTGRES_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS es_events (
  position  bigint      PRIMARY KEY,
  stream    text        NOT NULL,
  revision  bigint      NOT NULL CHECK (revision >= 0),
  id        uuid        NOT NULL UNIQUE,
  type      text        NOT NULL,
  data      text        NOT NULL,
  metadata  text,
  created   timestamptz NOT NULL DEFAULT ${POSTGRES_CREATED_DEFAULT},
  UNIQUE (stream, revision)
);
CREATE TABLE IF NOT EXISTS es_streams (
  stream    text   PRIMARY KEY,
  revision  bigint NOT NULL CHECK (revision >= 0)
);
ALTER TABLE es_streams ADD COLUMN IF NOT EXISTS deleted boolean NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS es_head (
  one       boolean PRIMARY KEY DEFAULT true CHECK (one),
  position  bigint  NOT NULL
);
INSERT INTO es_head (one, position) VALUES (true, 0) ON CONFLICT (one) DO NOTHING;
CREATE TABLE IF NOT EXISTS es_schema (
  one       boolean PRIMARY KEY DEFAULT true CHECK (one),
  version   int     NOT NULL
);
INSERT INTO es_schema AS s (one, version) VALUES (true, ${POSTGRES_SCHEMA_VERSION})
  ON CONFLICT (one) DO UPDATE SET version = greatest(s.version, excluded.version);
CREATE OR REPLACE FUNCTION es_append_v2(
  p_stream text, p_expected text, p_ids uuid[], p_types text[], p_data text[], p_metadata text[], p_former uuid[]
) RETURNS TABLE (out_outcome text, out_revision bigint, out_position bigint)
LANGUAGE plpgsql AS $fn$${POSTGRES_APPEND_BODY}$fn$;
CREATE OR REPLACE FUNCTION es_append_in_life_v1(
  p_stream text, p_expected text, p_incarnation bigint, p_ids uuid[], p_types text[], p_data text[], p_metadata text[], p_former uuid[]
) RETURNS TABLE (out_outcome text, out_revision bigint, out_position bigint, out_incarnation bigint)
LANGUAGE plpgsql AS $fn$${POSTGRES_APPEND_IN_LIFE_BODY}$fn$;
COMMENT ON TABLE es_events IS 'session memory compaction event store, schema version ${POSTGRES_SCHEMA_VERSION}';
`;
