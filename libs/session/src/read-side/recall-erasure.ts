/**
 * Erasure of a session's rows from one recall index (an FTS5 table of `recall-index-tables`),
 * leaving no entry of them in the index's segments, at a cost bounded by about twice the cheaper
 * of two ways (newcomer ncretry F5).
 *
 * FTS5's `secure-delete` edits each deleted (term, row) pair out of the segment holding it: it
 * seeks the term in every segment and rewrites a leaf page, per pair, and a term in many rows has
 * a long doclist to edit. A 3,000-character event in the trigram index (an unspaced script or an
 * emoji: one pair per distinct trigram) cost ~23 ms, so 1,000 of them took 23.5 s of one
 * transaction; prose of common words ~3 ms an event in an index of 3,000 such events, 14 ms in one
 * of 10,000 (2 cores). The other way: the rows deleted with `secure-delete` off, which writes delete
 * markers (FTS5 reads and tokenizes each row again), then `optimize` merges every segment into one,
 * dropping the markers and the entries they delete: the whole index rewritten, 40–80 ns a token of
 * it. And when the rows are half the index or more, the other rows are indexed anew in a new table
 * instead. Either of the last two frees the old segments' pages, which SQLite zeroes
 * (`secure_delete` of the file), inside the caller's transaction. Which way:
 * {@link eraseSessionRecallRows}.
 */
import { recallTableDdl, type RecallIndexConnection, type RecallIndexKind } from './recall-index-tables';
import { RECALL_CHUNK_BITS } from './recall-chunks';

/**
 * What rewriting an index is taken to cost per token it holds, in nanoseconds (delete markers and
 * `optimize`; measured 40–80 ns on 2 cores, trigram and word indexes alike; rounded up so that a
 * rewrite is chosen only when clearly cheaper).
 */
export const RECALL_REWRITE_NS_PER_TOKEN = 100;

/** How {@link eraseSessionRecallRows} erased: rows deleted, and the way (see the module doc; `none` when the session had no row there). */
export interface RecallRowsErased {
  rows: number;
  way: 'secure' | 'rewrite' | 'rebuild' | 'none';
}

/**
 * Deletes from the FTS5 table `table` the rows of every event `session_log` holds for `sessionKey`
 * (row ids: `recall-chunks`), leaving none of their terms in the index's segments. When they hold
 * half of the index's tokens or more (`_docsize` of the rows against the index's total), the index
 * is built anew from the other rows (under the same name, `secure-delete` on). Otherwise they are
 * deleted row by row with the table's `secure-delete`, in chunks of 1, 2, 4, … rows (at most 64),
 * each flushed and timed; once the time spent per row, times the rows left, passes what rewriting
 * the index is taken to cost ({@link RECALL_REWRITE_NS_PER_TOKEN} per token of it), the rows left
 * are deleted with delete markers (`secure-delete` off, set again before returning) and an
 * `optimize` rewrites the index without them. So the erasure costs at most about twice the cheaper
 * way, whichever the index's shape (a row's secure delete costs per distinct term, more for terms
 * in many rows: 1–23 ms for a 3,000-character event). `kind` names the table's DDL for a rebuild.
 * Call inside a transaction (every way is undone with it), before the session's `session_log` rows
 * are deleted. Returns how many rows went and the last way taken.
 */
export function eraseSessionRecallRows(
  db: RecallIndexConnection,
  table: string,
  kind: RecallIndexKind,
  sessionKey: string,
  now: () => number = () => performance.now(),
): RecallRowsErased {
  // The session's rows, by the `_docsize` rows of their events' row-id ranges (one per position, see `recall-chunks`).
  const ofSession = (columns: string) =>
    `SELECT ${columns} FROM session_log l JOIN ${table}_docsize d ON d.id BETWEEN (l.position << ${RECALL_CHUNK_BITS}) AND ((l.position + 1) << ${RECALL_CHUNK_BITS}) - 1
     WHERE l.session_key = ?`;
  const rows = db.prepare(ofSession('d.id AS id, d.sz AS sz')).safeIntegers(true).all(sessionKey) as Array<{ id: bigint; sz: Buffer }>;
  if (rows.length === 0) return { rows: 0, way: 'none' };
  const erasedTokens = rows.reduce((sum, { sz }) => sum + firstVarint(sz), 0);
  const averages = db.prepare(`SELECT block FROM ${table}_data WHERE id = 1`).get() as { block: Buffer } | undefined;
  // The averages record: the row count, then each column's token count (one column: body).
  const indexTokens = averages ? varints(averages.block, 2)[1] : 0;
  if (indexTokens - erasedTokens <= erasedTokens) {
    // Most of the index: a new table of the rest, the old one dropped (its pages freed, so zeroed), the new one renamed.
    const rebuilt = `${table}_rebuilt`;
    db.exec(recallTableDdl(kind, rebuilt));
    db.prepare(`INSERT INTO ${rebuilt} (rowid, body) SELECT rowid, body FROM ${table} WHERE rowid NOT IN (${ofSession('d.id')})`).run(sessionKey);
    db.exec(`DROP TABLE ${table}; ALTER TABLE ${rebuilt} RENAME TO ${table};`);
    return { rows: rows.length, way: 'rebuild' };
  }
  const rewriteMs = (indexTokens * RECALL_REWRITE_NS_PER_TOKEN) / 1e6;
  const remove = db.prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT value FROM json_each(?))`);
  const flush = db.prepare(`INSERT INTO ${table} (${table}) VALUES ('flush')`);
  let done = 0;
  let spentMs = 0;
  for (let chunk = 1; done < rows.length; chunk = Math.min(chunk * 2, SECURE_CHUNK_ROWS)) {
    if (done > 0 && (spentMs / done) * (rows.length - done) > rewriteMs) {
      // Row by row would cost more than the rewrite: the rest with delete markers, then the rewrite.
      db.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('secure-delete', 0)`).run();
      remove.run(idsJson(rows.slice(done)));
      // `optimize` first flushes the pending delete markers (with secure-delete off), then merges every segment into one.
      db.prepare(`INSERT INTO ${table} (${table}) VALUES ('optimize')`).run();
      db.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('secure-delete', 1)`).run();
      return { rows: rows.length, way: 'rewrite' };
    }
    const started = now();
    remove.run(idsJson(rows.slice(done, done + chunk)));
    // The secure deletes are done when FTS5 flushes its pending changes: here, so that they are timed.
    flush.run();
    spentMs += now() - started;
    done += Math.min(chunk, rows.length - done);
  }
  return { rows: rows.length, way: 'secure' };
}

/** Most rows deleted between two looks at the time row-by-row deletion takes ({@link eraseSessionRecallRows}). */
const SECURE_CHUNK_ROWS = 64;

/** `rows`' ids as a JSON array (bigints as digits), for `json_each`. */
function idsJson(rows: ReadonlyArray<{ id: bigint }>): string {
  return `[${rows.map((r) => r.id.toString()).join(',')}]`;
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
