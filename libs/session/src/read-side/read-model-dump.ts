import { READ_MODEL_TABLES } from './read-model-schema';
import type { ReadModelStore } from './read-model-store';

/**
 * Every row of every read model, in a stable order, as plain JSON-able values (bigint integers
 * as decimal strings). Two stores with equal dumps hold the same read models: used to check
 * that a rebuild gives the rows of the incremental run (DESIGN §5).
 */
export function dumpReadModels(store: ReadModelStore): Record<string, unknown[]> {
  const dump: Record<string, unknown[]> = {};
  for (const table of READ_MODEL_TABLES) {
    const sql = table.startsWith('recall_') ? `SELECT rowid, body FROM ${table} ORDER BY rowid` : `SELECT * FROM ${table} ORDER BY 1, 2`;
    const rows = store.db.prepare(sql).safeIntegers(true).all() as Array<Record<string, unknown>>;
    dump[table] = rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'bigint' ? value.toString() : value])));
  }
  return dump;
}
