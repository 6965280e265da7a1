/**
 * The PostgreSQL event store schema (version 1), created idempotently on first use (under a
 * transaction-scoped advisory lock, so replicas starting together do not race on the DDL).
 *
 * - `es_events`: the global log. `position` is assigned by `es_append` from `es_head` (see
 *   below); `revision` is 0-based in `stream`; `id` is the event's UUID (unique in the store);
 *   `data` and `metadata` are JSON text exactly as the adapter serialised it (kept as text so an
 *   idempotent retry compares byte for byte); `created` is the commit's transaction time.
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
 *   commit one at a time (see the README, Performance).
 * - `es_append(...)`: one append in one round trip (check, insert, head update), run as a single
 *   autocommit statement, so the head lock is held only for the server-side insert and the commit.
 *   It answers `ok`, `wrong_revision` (nothing written; `revision` = current or null),
 *   `ids_exist` (nothing written: some ids are stored; the adapter decides retry or conflict) or
 *   `retry` (a concurrent append created the stream first; call again).
 */
export const POSTGRES_SCHEMA_VERSION = 1;

/** Key of the advisory lock that serialises schema creation. */
export const POSTGRES_SCHEMA_LOCK_KEY = 7_402_113_051;

export const POSTGRES_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS es_events (
  position  bigint      PRIMARY KEY,
  stream    text        NOT NULL,
  revision  bigint      NOT NULL CHECK (revision >= 0),
  id        uuid        NOT NULL UNIQUE,
  type      text        NOT NULL,
  data      text        NOT NULL,
  metadata  text,
  created   timestamptz NOT NULL DEFAULT now(),
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
CREATE OR REPLACE FUNCTION es_append(
  p_stream text, p_expected text, p_ids uuid[], p_types text[], p_data text[], p_metadata text[]
) RETURNS TABLE (out_outcome text, out_revision bigint, out_position bigint)
LANGUAGE plpgsql AS $fn$
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
  IF EXISTS (SELECT 1 FROM es_events e WHERE e.id = ANY (p_ids)) THEN
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
$fn$;
COMMENT ON TABLE es_events IS 'session memory compaction event store, schema version ${POSTGRES_SCHEMA_VERSION}';
`;
