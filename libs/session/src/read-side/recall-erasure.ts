/**
 * Erasure of a session's rows from one recall index (an FTS5 table of `recall-index-tables`),
 * leaving no entry of them in the index's segments, at a cost bounded by the cheaper of two ways.
 *
 * FTS5's `secure-delete` edits each deleted (term, row) pair out of the segment holding it: it
 * seeks the term in every segment and rewrites one leaf page, per pair. That costs 1–8 µs a pair
 * (more with more segments), so a session whose events hold an unspaced script or an emoji (each
 * event's chunk in the trigram index: one pair per distinct trigram, ~3,000 for a 3,000-character
 * event) took 23.5 s for 1,000 events of 3,000 CJK characters (2 cores, read models of that one
 * session), in one transaction. Deleting the same rows with `secure-delete` off writes delete
 * markers (0.5 s: FTS5 reads and tokenizes each row again) and `optimize` then merges every
 * segment into one, where the markers and the entries they delete are dropped (0.23 s): the whole
 * index is rewritten (~0.08 µs a token of it) and the pages of the old segments are freed, so
 * zeroed (`secure_delete` of the file). The rows go one way or the other by their share of the
 * index's tokens ({@link RECALL_BULK_ERASE_SHARE}).
 */
import type { RecallIndexConnection, RecallIndexKind } from './recall-index-tables';
import { RECALL_CHUNK_BITS } from './recall-chunks';

/**
 * Per index kind, the share of the index (its tokens) at or above which a session's rows are
 * erased by rewriting the whole index ({@link eraseSessionRecallRows}): 1/n for n here. Measured on
 * 2 cores (1,000 events of 3,000 characters): the trigram index's secure delete costs ~5 µs a
 * token of the erased rows, its rewrite ~0.08 µs a token of the index (1/64 ≈ where they meet);
 * the word index's ~0.1 µs and ~0.02 µs (1/4).
 */
export const RECALL_BULK_ERASE_SHARE: Readonly<Record<RecallIndexKind, number>> = { words: 4, trigrams: 64 };

/** How {@link eraseSessionRecallRows} erased: rows deleted, and whether by rewriting the index (`rewrite`) or row by row (`secure`). */
export interface RecallRowsErased {
  rows: number;
  way: 'secure' | 'rewrite' | 'none';
}

/**
 * Deletes from the FTS5 table `table` (of kind `kind`) the rows of every event `session_log` holds
 * for `sessionKey` (row ids: `recall-chunks`), leaving none of their terms in the index's segments:
 * row by row with the table's `secure-delete` when they hold less than 1/{@link RECALL_BULK_ERASE_SHARE}
 * of its tokens, else with delete markers and an `optimize` that rewrites the index without them
 * (the table's `secure-delete` is set again before returning, in the same transaction). Call inside
 * a transaction, before the session's `session_log` rows are deleted.
 */
export function eraseSessionRecallRows(db: RecallIndexConnection, table: string, kind: RecallIndexKind, sessionKey: string): RecallRowsErased {
  const sizes = db
    .prepare(
      `SELECT d.sz AS sz FROM session_log l JOIN ${table}_docsize d ON d.id BETWEEN (l.position << ${RECALL_CHUNK_BITS}) AND ((l.position + 1) << ${RECALL_CHUNK_BITS}) - 1
       WHERE l.session_key = ?`,
    )
    .all(sessionKey) as Array<{ sz: Buffer }>;
  if (sizes.length === 0) return { rows: 0, way: 'none' };
  const erasedTokens = sizes.reduce((sum, { sz }) => sum + firstVarint(sz), 0);
  const averages = db.prepare(`SELECT block FROM ${table}_data WHERE id = 1`).get() as { block: Buffer } | undefined;
  // The averages record: the row count, then each column's token count (one column: body).
  const indexTokens = averages ? varints(averages.block, 2)[1] : 0;
  const rewrite = erasedTokens * RECALL_BULK_ERASE_SHARE[kind] >= indexTokens;
  if (rewrite) db.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('secure-delete', 0)`).run();
  const { changes } = db
    .prepare(
      `DELETE FROM ${table} WHERE rowid IN (
         SELECT c.rowid FROM session_log l JOIN ${table} c ON c.rowid BETWEEN (l.position << ${RECALL_CHUNK_BITS}) AND ((l.position + 1) << ${RECALL_CHUNK_BITS}) - 1
         WHERE l.session_key = ?)`,
    )
    .run(sessionKey);
  if (!rewrite) return { rows: changes, way: 'secure' };
  // `optimize` first flushes the pending delete markers (with secure-delete off), then merges every segment into one.
  db.prepare(`INSERT INTO ${table} (${table}) VALUES ('optimize')`).run();
  db.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('secure-delete', 1)`).run();
  return { rows: changes, way: 'rewrite' };
}

/** The first SQLite varint of `bytes` (0 when empty): a `_docsize` row's token count of its one column. */
function firstVarint(bytes: Buffer): number {
  return varints(bytes, 1)[0] ?? 0;
}

/** The first `count` SQLite varints of `bytes` (big-endian, 7 bits a byte with the high bit saying more follow, a 9th byte of 8 bits), as numbers; fewer when the bytes end. */
export function varints(bytes: Uint8Array, count: number): number[] {
  const values: number[] = [];
  let offset = 0;
  while (values.length < count && offset < bytes.length) {
    let value = 0;
    for (let i = 0; offset < bytes.length; i++) {
      const byte = bytes[offset++];
      if (i === 8) {
        value = value * 256 + byte;
        break;
      }
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    values.push(value);
  }
  return values;
}
