import type Database from 'better-sqlite3';

/**
 * Each tenant's own full-text indexes of recall. FTS5's `bm25()` scores with statistics of the
 * whole index it searches (its row count, the rows' average length, each phrase's row count: its
 * IDF), and recall's own choices count index rows too (a word of more than
 * `RECALL_RANKED_MATCH_LIMIT` rows does not score, a substring scan reads at most
 * `RECALL_SUBSTRING_SCAN_LIMIT` rows per page). In one index shared by every tenant these numbers
 * counted the other tenants' texts: a tenant could tell whether a word occurred in another
 * tenant's events from the score of its own events (`hunter2` in someone else's archived event
 * lowered the score of its own event holding it). Each tenant therefore has its own pair of FTS5
 * tables, created by the projector on the tenant's first indexed document (same DDL as before
 * version 11, see {@link recallIndexDdl}), so every statistic recall reads is the tenant's own.
 *
 * `recall_tenants` maps a tenant id to a small integer, the tenant's index id (assigned on its
 * first indexed document, 1, 2, … in projection order; kept when the tenant's sessions are erased,
 * the tables then empty). {@link recallIndexTables} names the tables of an index id: every layer
 * (projector, recall, erasure, drop, dump) names them through it.
 */

/** The full-text indexes of one tenant: `words` (unicode61, BM25 over words) and `trigrams` (substrings, for scripts written without spaces and emoji). */
export interface RecallIndexTables {
  /** FTS5 table of the tenant's word index (`recall_fts_<id>`). */
  words: string;
  /** FTS5 table of the tenant's trigram index (`recall_trigram_<id>`). */
  trigrams: string;
}

/** Which of a tenant's two indexes (see {@link RecallIndexTables}). */
export type RecallIndexKind = keyof RecallIndexTables;

/** Table mapping a tenant id to its index id (see {@link recallIndexTables}). */
export const RECALL_TENANTS_TABLE = 'recall_tenants';

/** DDL of {@link RECALL_TENANTS_TABLE} (part of `READ_MODEL_DDL`). */
export const RECALL_TENANTS_DDL = `CREATE TABLE IF NOT EXISTS ${RECALL_TENANTS_TABLE} (
  id         INTEGER PRIMARY KEY,
  tenant_id  TEXT NOT NULL UNIQUE
);`;

/**
 * The names of the FTS5 tables of index `id` (a positive integer of `recall_tenants.id`): the one
 * rule naming a tenant's recall tables. Their FTS5 shadow tables are `<table>_data`,
 * `<table>_docsize`, … (`recall-rank` reads the first two).
 * @throws RangeError when `id` is not a positive safe integer (a table name is never built from anything else).
 */
export function recallIndexTables(id: number): RecallIndexTables {
  if (!Number.isSafeInteger(id) || id < 1) throw new RangeError(`recall index id must be a positive integer, got ${String(id)}`);
  return { words: `recall_fts_${id}`, trigrams: `recall_trigram_${id}` };
}

/**
 * DDL creating the tables `tables` names (idempotent: `IF NOT EXISTS`), each with FTS5's
 * `secure-delete` option on (deleting a row removes its tokens from the index segments at once:
 * erasure). The word index folds diacritics of Latin letters (`remove_diacritics 2`), the trigram
 * index too (`remove_diacritics 1`, what its tokenizer takes). The word index's tokens are
 * {@link WORD_TOKENIZER}'s.
 */
export function recallIndexDdl(tables: RecallIndexTables): string {
  return `
${recallTableDdl('words', tables.words)}
${recallTableDdl('trigrams', tables.trigrams)}`;
}

/** DDL creating one recall table of kind `kind` named `table` (idempotent), as {@link recallIndexDdl} does for a tenant's pair. */
export function recallTableDdl(kind: RecallIndexKind, table: string): string {
  const tokenize = kind === 'words' ? WORD_TOKENIZER.replaceAll("'", "''") : 'trigram remove_diacritics 1';
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5 (body, tokenize = '${tokenize}');
INSERT INTO ${table} (${table}, rank) VALUES ('secure-delete', 1);`;
}

/**
 * The word index's tokenizer (FTS5 unicode61, the argument of `tokenize =`): a word is a run of
 * letters (L*), digits and other numbers (N*), private-use characters (Co) and combining marks
 * (Mn, Mc; since read models 15, newcomer report ncintl F8: unicode61's default, `L* N* Co`, made
 * the dependent vowel signs and the virama of Hindi, Bengali, Tamil, … separators, so `बिल` found
 * `बाल`). Enclosing marks (Me: the keycap U+20E3) and the variation selectors U+FE0E/U+FE0F
 * (Mn, kept by `recallFold` only after an emoji, which this index does not hold) still separate:
 * `1️⃣` is the word `1`, as before. Diacritics of Latin letters are folded (`remove_diacritics 2`:
 * `cafe` finds `café`, also written with U+0301). Script boundaries are marked before
 * (`wordIndexText`).
 */
export const WORD_TOKENIZER = "unicode61 remove_diacritics 2 categories 'L* N* Co Mn Mc' separators '\ufe0e\ufe0f'";

/** What the functions here need of a SQLite connection: `prepare` may return a cached statement (e.g. `ReadModelStore.statement`). */
export interface RecallIndexConnection {
  prepare(sql: string): Database.Statement;
  exec(sql: string): unknown;
}

/**
 * The recall tables of `tenantId`, undefined when it has none yet (no document of it was ever
 * indexed: recall then finds nothing).
 */
export function tenantRecallIndexTables(db: Pick<RecallIndexConnection, 'prepare'>, tenantId: string): RecallIndexTables | undefined {
  const row = db.prepare(`SELECT id FROM ${RECALL_TENANTS_TABLE} WHERE tenant_id = ?`).get(tenantId) as { id: number | bigint } | undefined;
  return row ? recallIndexTables(Number(row.id)) : undefined;
}

/**
 * The recall tables of `tenantId`, created (inside the caller's transaction) with the next index
 * id when the tenant has none yet. The projector's writer calls it before indexing a document.
 */
export function createdTenantRecallIndexTables(db: RecallIndexConnection, tenantId: string): RecallIndexTables {
  const known = tenantRecallIndexTables(db, tenantId);
  if (known) return known;
  const { id } = db.prepare(`INSERT INTO ${RECALL_TENANTS_TABLE} (tenant_id) VALUES (?) RETURNING id`).get(tenantId) as { id: number | bigint };
  const tables = recallIndexTables(Number(id));
  db.exec(recallIndexDdl(tables));
  return tables;
}

/** Names {@link recallIndexTables} gives, and nothing else (not their shadow tables). */
const RECALL_INDEX_TABLE_NAME = /^recall_(fts|trigram)_[1-9][0-9]*$/;

/**
 * Every tenant's recall table in `db` (the FTS5 virtual tables named by {@link recallIndexTables},
 * shadow tables excluded), read from `sqlite_master`, so also those of a file whose
 * `recall_tenants` is missing or disagrees. Dropping a virtual table drops its shadow tables.
 */
export function recallIndexTablesIn(db: Database.Database): string[] {
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name").pluck().all() as string[];
  return names.filter((name) => RECALL_INDEX_TABLE_NAME.test(name));
}
