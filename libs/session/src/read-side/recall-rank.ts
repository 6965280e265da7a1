import type { ReadModelStore } from './read-model-store';

/**
 * BM25 of recall with the index statistics frozen at one moment (recall cursors, see
 * `recall-cursor`). FTS5's `bm25()` scores a row with statistics of the whole index at query
 * time: the number of rows N, their average length in tokens, and for each phrase the number of
 * rows holding it (its IDF). Every append (or erasure) changes them, so the same row scores
 * differently from one page to the next, and even the order of two rows can change (the IDFs
 * weigh the words of a multi-word query against each other; the average length weighs a row's
 * length against its word frequencies). A recall cursor keeps the statistics of its first page
 * ({@link RecallRankStats}) and the next pages score every row with them: the ranking of the
 * first page, whatever was appended or erased since.
 *
 * FTS5 does not expose a row's phrase frequencies, only its `bm25()`. The frequency of phrase p
 * in a row is recovered from that row's `bm25()` for the query `p` alone, the current statistics
 * (the index's totals record, the phrase's row count) and the row's length (FTS5's `docsize`
 * record), by inverting the formula (frequencies are whole numbers: rounding removes the
 * floating-point error). The score is then computed as `fts5Bm25Function` (SQLite's
 * `ext/fts5/fts5_aux.c`) computes it, operation for operation, in SQL (so only the page's rows
 * leave SQLite), with logarithms from SQLite's `ln()` (the C library's, as FTS5's): with the
 * statistics of the first page it gives that page's `bm25()` values bit for bit
 * (`recall-rank.spec.ts` checks this against FTS5 on random corpora, in both indexes).
 */

/**
 * Events a query word may match for recall to rank by BM25 (issue 14). FTS5's BM25 first counts,
 * for every phrase of the query, the rows of the whole index (the tenant's, see
 * `recall-index-tables`) holding it (its IDF), walking that phrase's matches one by one (about
 * 1.3 µs each): a word found in half of a tenant's 200k events costs
 * ~130 ms before the first row is ranked, whatever the filters or the session. A word matching
 * more events than this still has to occur in every hit but does not score: the other words rank
 * the hits; a query made only of such words is answered newest first (`order: 'newest'`). Each
 * word is counted up to this limit + 1 (a bounded, cheap index walk) in the tenant's index: other
 * tenants' events never change a tenant's order.
 */
export const RECALL_RANKED_MATCH_LIMIT = 2000;

/** k1 of FTS5's `bm25()` (term frequency saturation), as SQL text of the same double. */
const K1 = '1.2';
/** b of FTS5's `bm25()` (length normalisation), as SQL text of the same double. */
const B = '0.75';

/** Row count and total length of a full-text index, as FTS5's `bm25()` reads them. */
export interface RecallIndexTotals {
  /** Rows of the index (N), a whole number ≥ 0. */
  rows: number;
  /** Sum of the rows' lengths in tokens, a whole number ≥ 0. */
  tokens: number;
}

/** The statistics a recall cursor ranks with: the index's totals and, per ranked phrase, how many rows held it. */
export interface RecallRankStats extends RecallIndexTotals {
  /** The ranked phrases: `index` into the query plan's `phrases`, `rows` the rows holding that phrase (whole numbers). */
  phrases: Array<{ index: number; rows: number }>;
}

/**
 * A tenant's full-text index recall ranks in, as `recallIndexTables` names it (its FTS5 shadow
 * tables are `<table>_data` and `<table>_docsize`).
 */
export type RecallIndexTable = string;

/**
 * The totals of `table` as `bm25()` sees them now: FTS5's averages record (`<table>_data` row 1:
 * SQLite varints, the row count then the token count of each column; recall indexes have one
 * column). `{ rows: 0, tokens: 0 }` for an index never written.
 */
export function readIndexTotals(store: ReadModelStore, table: RecallIndexTable): RecallIndexTotals {
  const row = store.statement(`SELECT block FROM ${table}_data WHERE id = 1`).get() as { block: Buffer } | undefined;
  if (!row) return { rows: 0, tokens: 0 };
  const values: number[] = [];
  let i = 0;
  // SQLite varints: big-endian groups of 7 bits, the high bit set on every byte but the last; a ninth byte carries 8 bits.
  while (values.length < 2 && i < row.block.length) {
    let value = 0;
    for (let k = 0; k < 9 && i < row.block.length; k++) {
      const byte = row.block[i++];
      if (k === 8) {
        value = value * 256 + byte;
        break;
      }
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    values.push(value);
  }
  return { rows: values[0] ?? 0, tokens: values[1] ?? 0 };
}

/**
 * SQL of a row's length in tokens from its FTS5 `docsize` record `sz` (a SQL expression of the
 * blob): one SQLite varint (recall indexes have one column), decoded here up to 4 bytes (lengths
 * below 2^28; a word document holds at most 262,144 characters, a trigram one 16,384).
 */
export function documentLengthSql(sz: string): string {
  const nibble = (i: number) => `(instr('0123456789ABCDEF', substr(hex(${sz}), ${i}, 1)) - 1)`;
  const byte = (i: number) => `(${nibble(2 * i - 1)} * 16 + ${nibble(2 * i)})`;
  const high = (i: number) => `(${byte(i)} - 128)`;
  return `(CASE length(${sz})
      WHEN 1 THEN ${byte(1)}
      WHEN 2 THEN ${high(1)} * 128 + ${byte(2)}
      WHEN 3 THEN (${high(1)} * 128 + ${high(2)}) * 128 + ${byte(3)}
      ELSE ((${high(1)} * 128 + ${high(2)}) * 128 + ${high(3)}) * 128 + ${byte(4)} END)`;
}

/**
 * IDF of a phrase held by `phraseRows` of `rows` rows, as `bm25()` computes it (log((N − n + 0.5)
 * / (n + 0.5)), 1e-6 when not positive). `ln` is the natural logarithm to use: pass
 * {@link sqliteLn} for the very value FTS5 computes (JavaScript's `Math.log` differs from the C
 * library's `log` in the last bit for about 2% of arguments).
 */
export function phraseIdf(rows: number, phraseRows: number, ln: (x: number) => number): number {
  const idf = ln((rows - phraseRows + 0.5) / (phraseRows + 0.5));
  return idf <= 0 ? 1e-6 : idf;
}

/**
 * The natural logarithm of SQLite's `ln()` on `store`'s connection: the C library's `log`, the one
 * FTS5's `bm25()` calls, so IDFs computed with it are bit for bit FTS5's. `Math.log` when the
 * SQLite build has no math functions.
 */
export function sqliteLn(store: ReadModelStore): (x: number) => number {
  try {
    const ln = store.statement('SELECT ln(@x) AS v');
    return (x) => (ln.get({ x }) as { v: number }).v;
  } catch {
    return Math.log;
  }
}

/**
 * SQL of a row's rank (FTS5's convention: the negative BM25, lower is better) under the frozen
 * statistics, from `scores[k]`, SQL of the row's current `bm25()` score (positive: minus
 * `bm25()`) for ranked phrase k alone (NULL when the row does not hold it), and `length`, SQL of the row's length in tokens. Its
 * parameters are {@link frozenRankParams}'.
 */
export function frozenRankSql(scores: readonly string[], length: string): string {
  const terms = scores.map((score, k) => {
    const frequency = `max(1.0, round(${score} * (${K1} * (1 - ${B} + ${B} * ${length} / @rankAvgdlNow)) / (@rankIdfNow${k} * (${K1} + 1.0) - ${score})))`;
    // A row not holding the phrase (NULL score: a row of a hit across rows, `recall-cross-chunk`) scores 0 for it, as in FTS5.
    return `coalesce(@rankIdf${k} * ((${frequency} * (${K1} + 1.0)) / (${frequency} + ${K1} * (1 - ${B} + ${B} * ${length} / @rankAvgdl))), 0.0)`;
  });
  return `(-(${terms.join(' + ')}))`;
}

/**
 * The parameters of {@link frozenRankSql}: the frozen `stats` (IDFs and average length), and the
 * current statistics the row scores are computed with (`now`, and `rowsNow[k]` the rows holding
 * ranked phrase k now), logarithms by `ln` ({@link sqliteLn}).
 */
export function frozenRankParams(
  stats: RecallRankStats,
  now: RecallIndexTotals,
  rowsNow: readonly number[],
  ln: (x: number) => number,
): Record<string, number> {
  const params: Record<string, number> = { rankAvgdl: stats.tokens / stats.rows, rankAvgdlNow: now.tokens / now.rows };
  stats.phrases.forEach((phrase, k) => {
    params[`rankIdf${k}`] = phraseIdf(stats.rows, phrase.rows, ln);
    params[`rankIdfNow${k}`] = phraseIdf(now.rows, rowsNow[k], ln);
  });
  return params;
}
