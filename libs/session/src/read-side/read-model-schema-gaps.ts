import Database from 'better-sqlite3';
import { READ_MODEL_DDL } from './read-model-schema';

/**
 * Columns a file of this schema version may lack: added to it after the version was set, and
 * added at open (`projector_checkpoints.event`, empty until the next checkpoint).
 */
const COLUMNS_ADDED_AT_OPEN: ReadonlySet<string> = new Set(['projector_checkpoints.event']);

/**
 * The tables (`type = 'table'`, shadow tables of FTS5 included) and their columns of `db`, as `table`
 * → column names, and the named indexes (`index <name>`, as a table without columns: an upsert's
 * unique index gone jams the projector).
 */
function tablesOf(db: Database.Database): Map<string, Set<string>> {
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").pluck().all() as string[];
  return new Map([
    ...names.map((name): [string, Set<string>] => [name, new Set(db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(name) as string[])]),
    ...indexes.map((name): [string, Set<string>] => [`index ${name}`, new Set<string>()]),
  ]);
}

/** The tables and columns {@link READ_MODEL_DDL} makes, read once from an in-memory database. */
let expected: Map<string, Set<string>> | undefined;

/**
 * What the read models in `db` (a file holding this build's schema version) lack of the tables,
 * columns and indexes {@link READ_MODEL_DDL} makes, as `table erasures` / `column
 * sessions.event_count` / `index window_entries_by_id`, in the DDL's order; empty when nothing is missing. A file of this version lacking one was changed by
 * another program (a table dropped with `sqlite3`, say): `CREATE TABLE IF NOT EXISTS` would make it
 * again empty, and its rows (e.g. the erasure records' audit rows) would be lost for good, since the
 * projector's checkpoint is past their events; so `ReadModelStore.open` rebuilds the read models
 * from the log instead (newcomer ncverify48 F3). The tenants' recall index tables, made per
 * tenant, are not checked here. Reads `db` only.
 */
export function missingReadModelSchema(db: Database.Database): string[] {
  if (expected === undefined) {
    const model = new Database(':memory:');
    try {
      model.exec(READ_MODEL_DDL);
      expected = tablesOf(model);
    } finally {
      model.close();
    }
  }
  const held = tablesOf(db);
  const missing: string[] = [];
  for (const [table, columns] of expected) {
    const heldColumns = held.get(table);
    if (heldColumns === undefined) missing.push(table.startsWith('index ') ? table : `table ${table}`);
    else
      for (const column of columns) if (!heldColumns.has(column) && !COLUMNS_ADDED_AT_OPEN.has(`${table}.${column}`)) missing.push(`column ${table}.${column}`);
  }
  return missing;
}
