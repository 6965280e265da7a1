/**
 * The columns the service needs in each of its PostgreSQL tables ({@link POSTGRES_TABLE_COLUMNS},
 * as `postgres-schema.ts` creates them), and the check of a database's existing tables against
 * them ({@link schemaShapeMismatch}): a table of the same name that another application created
 * (e.g. its own `es_events`) is found at start, before anything is created or changed in the
 * database, instead of failing every statement later.
 */
import { EventStoreSchemaMismatchError } from '../errors';

/**
 * Per table, each column the service reads or writes and its type as PostgreSQL's `format_type`
 * prints it. `es_streams.deleted` is absent from databases set up before it was added (the start
 * adds it), so it is checked only when present.
 */
export const POSTGRES_TABLE_COLUMNS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  es_events: {
    position: 'bigint',
    stream: 'text',
    revision: 'bigint',
    id: 'uuid',
    type: 'text',
    data: 'text',
    metadata: 'text',
    created: 'timestamp with time zone',
  },
  es_streams: { stream: 'text', revision: 'bigint', deleted: 'boolean' },
  es_head: { one: 'boolean', position: 'bigint' },
  es_schema: { one: 'boolean', version: 'integer' },
};

/** Columns a table of an older schema may lack (the start adds them). */
const ADDED_LATER: ReadonlySet<string> = new Set(['es_streams.deleted']);

/**
 * The columns of the existing tables named in {@link POSTGRES_TABLE_COLUMNS}, one row per column, as
 * the service's statements resolve the names (`to_regclass`: the `search_path`): `table`, `column`,
 * `type` (`format_type`). Tables that do not exist have no rows.
 */
export const POSTGRES_TABLE_COLUMNS_SQL = `
SELECT t.name AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
  FROM unnest($1::text[]) AS t(name)
  JOIN pg_attribute a ON a.attrelid = to_regclass(t.name) AND a.attnum > 0 AND NOT a.attisdropped
`;

/** A row of {@link POSTGRES_TABLE_COLUMNS_SQL}. */
export interface TableColumnRow {
  table: string;
  column: string;
  type: string;
}

/**
 * The first table of {@link POSTGRES_TABLE_COLUMNS} that exists (has rows in `columns`) but lacks a
 * column the service needs, or has it with another type, as an {@link EventStoreSchemaMismatchError}
 * naming the table and what differs; null when every existing table fits (extra columns are
 * allowed; tables that do not exist are created by the setup).
 */
export function schemaShapeMismatch(columns: readonly TableColumnRow[]): EventStoreSchemaMismatchError | null {
  for (const [table, needed] of Object.entries(POSTGRES_TABLE_COLUMNS)) {
    const present = new Map(columns.filter((c) => c.table === table).map((c) => [c.column, c.type]));
    if (present.size === 0) continue;
    for (const [column, type] of Object.entries(needed)) {
      const found = present.get(column);
      if (found === undefined) {
        if (ADDED_LATER.has(`${table}.${column}`)) continue;
        return new EventStoreSchemaMismatchError(table, `it has no column ${column} (${type}); its columns are ${[...present.keys()].join(', ')}`);
      }
      if (found !== type) return new EventStoreSchemaMismatchError(table, `its column ${column} is ${found}, not ${type}`);
    }
  }
  return null;
}
