/**
 * The SQLite event store schema (version 1), created idempotently on open.
 *
 * - `events`: the global log. `position` is an `INTEGER PRIMARY KEY AUTOINCREMENT`, so positions
 *   are strictly increasing and never reused, even after the rows are deleted; positions are
 *   assigned inside the single-writer transaction, so they become visible in increasing order.
 *   `revision` is the 0-based revision in `stream`. `data` and `metadata` are JSON text
 *   (`metadata` NULL when absent); `created` is Unix time in milliseconds.
 *   UNIQUE(stream, revision) and UNIQUE(id) are enforced by the database itself.
 * - `streams`: the current revision of each live stream (O(1) expected-revision checks);
 *   a row is removed when its stream is deleted.
 * - `deleted_streams`: the last revision of each deleted stream, so that appending to it again
 *   continues after that revision and never reuses one (as KurrentDB after a soft delete): a
 *   writer that decided on the deleted stream's state is refused by the expected-revision check.
 *   Holds only the stream's name and a number (the erasure record names the stream too). Created
 *   by `IF NOT EXISTS` on open, so files written before it simply have no such rows.
 */
export const SQLITE_SCHEMA_VERSION = 1;

export const SQLITE_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS events (
  position  INTEGER PRIMARY KEY AUTOINCREMENT,
  stream    TEXT    NOT NULL,
  revision  INTEGER NOT NULL CHECK (revision >= 0),
  id        TEXT    NOT NULL,
  type      TEXT    NOT NULL,
  data      TEXT    NOT NULL,
  metadata  TEXT,
  created   INTEGER NOT NULL,
  UNIQUE (stream, revision),
  UNIQUE (id)
);
CREATE TABLE IF NOT EXISTS streams (
  stream    TEXT    PRIMARY KEY,
  revision  INTEGER NOT NULL CHECK (revision >= 0)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deleted_streams (
  stream    TEXT    PRIMARY KEY,
  revision  INTEGER NOT NULL CHECK (revision >= 0)
) WITHOUT ROWID;
`;
