import { READ_MODEL_TABLES } from './read-model-schema';
import { RECALL_TENANTS_TABLE, recallIndexTables } from './recall-index-tables';
import { ERASURE_SWEEP_CHECKPOINT, type ReadModelStore } from './read-model-store';

/**
 * Every row of every read model, in a stable order, as plain JSON-able values (bigint integers
 * as decimal strings). Two stores with equal dumps hold the same read models: used to check
 * that a rebuild gives the rows of the incremental run (DESIGN §5).
 *
 * A tenant's recall indexes are dumped by tenant id (`recall_fts:<tenantId>`,
 * `recall_trigram:<tenantId>`: rowid and body), only when they hold rows; `recall_tenants` is not
 * dumped: its index ids are the order tenants were first indexed in, and a tenant's erased
 * sessions leave its (empty) tables, which a rebuild from the log without them does not make. Nor
 * is the erasure sweep's checkpoint row ({@link ERASURE_SWEEP_CHECKPOINT}): it says how far a
 * replica's sweeps looked, not what the log holds.
 */
export function dumpReadModels(store: ReadModelStore): Record<string, unknown[]> {
  const dump: Record<string, unknown[]> = {};
  const rowsOf = (sql: string) =>
    (store.db.prepare(sql).safeIntegers(true).all() as Array<Record<string, unknown>>).map((row) =>
      Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'bigint' ? value.toString() : value])),
    );
  for (const table of READ_MODEL_TABLES) if (table !== RECALL_TENANTS_TABLE) dump[table] = rowsOf(`SELECT * FROM ${table} ORDER BY 1, 2`);
  dump.projector_checkpoints = dump.projector_checkpoints?.filter((row) => (row as { projector?: unknown }).projector !== ERASURE_SWEEP_CHECKPOINT);
  const tenants = store.db.prepare(`SELECT id, tenant_id AS tenantId FROM ${RECALL_TENANTS_TABLE} ORDER BY tenant_id`).all() as Array<{
    id: number;
    tenantId: string;
  }>;
  for (const { id, tenantId } of tenants) {
    const { words, trigrams } = recallIndexTables(id);
    for (const [name, table] of [
      ['recall_fts', words],
      ['recall_trigram', trigrams],
    ]) {
      const rows = rowsOf(`SELECT rowid, body FROM ${table} ORDER BY rowid`);
      if (rows.length > 0) dump[`${name}:${tenantId}`] = rows;
    }
  }
  return dump;
}
