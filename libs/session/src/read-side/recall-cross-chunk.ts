import type { ReadModelStore } from './read-model-store';
import { RECALL_WHOLE_CLUSTERS_FUNCTION } from './read-model-store';
import { firstRecallRowid, lastRecallRowid, RECALL_CHUNK_BITS, RECALL_SEVERAL_TRIGRAM_ROWS, RECALL_SEVERAL_WORD_ROWS } from './recall-chunks';
import type { RecallIndexKind } from './recall-index-tables';
import type { RecallQueryPlan } from './recall-match-expression';

/**
 * Recall's matches across the rows of one event (read models 22). A long event is indexed in
 * overlapping rows (`recall-chunks`), and a row matches a query only when it holds every word:
 * an event of 600 KB holding `alpha` near its start and `omega` near its end had no such row.
 * Such events are rare (a document over 262,144 code units in the word index, 16,384 in the
 * trigram index) and listed (`session_log.recall_rows`, see `RECALL_SEVERAL_WORD_ROWS`): the
 * events of the search's span listed for its index are checked one by one, each word (phrase,
 * substring, whole cluster) looked up in the event's own rows (an FTS5 seek bounded by the
 * event's row ids), so the cost grows with the number of such events in the span, never with the
 * index. An event some row of which matches every word is an ordinary hit and left out here.
 *
 * A word of `q` made of several tokens (`update_reservation`, a phrase) still has to lie in one
 * row: the rows overlap by more than a query's length, so each occurrence lies whole in one.
 */

/**
 * Long events of a search's span above which a query with a ranked word (one of at most
 * `RECALL_RANKED_MATCH_LIMIT` rows) first keeps those holding its rarest ranked word (one walk of
 * its matches), so the events checked word by word are at most that limit's.
 */
export const RECALL_CROSS_ROW_PREFILTER = 32;

/** The events found only across rows: their positions, and every row id of those events in the index searched (for an SQL `IN`). */
export interface CrossRowHits {
  /** Global positions of the events, ascending. */
  positions: bigint[];
  /** Every row id those events have in the index (JSON array text, the value of `json_each`). */
  rows: string;
}

/**
 * The events of `tenantId` in `table` (its `kind` index) at positions `lo`..`hi` (inclusive) that
 * hold every word of `plan` in some row but no row holding all of them; undefined when there is
 * none (nearly always: then nothing more is read than an empty index range of `session_log`).
 * `rare`: the query's rarest ranked phrase, when it has one (see {@link RECALL_CROSS_ROW_PREFILTER}).
 * Cost: one FTS5 seek per word (stopping at the first missing) and one more per long event of the
 * span, about 20–100 µs each; without a ranked word (`newest` order), for every long event of the span.
 */
export function crossRowHits(
  store: ReadModelStore,
  table: string,
  kind: RecallIndexKind,
  plan: RecallQueryPlan,
  scope: { tenantId: string; lo: bigint; hi: bigint },
  rare?: string,
): CrossRowHits | undefined {
  if (plan.phrases.length + plan.substrings.length < 2 || scope.hi < scope.lo) return undefined;
  const bit = kind === 'words' ? RECALL_SEVERAL_WORD_ROWS : RECALL_SEVERAL_TRIGRAM_ROWS;
  const listed = store
    .statement(
      // The listed events first (the partial index), then their sessions: never the tenant's whole log.
      `SELECT l.position AS position FROM session_log l INDEXED BY session_log_by_recall_rows CROSS JOIN sessions s ON s.session_key = l.session_key
       WHERE l.recall_rows IS NOT NULL AND l.position BETWEEN @lo AND @hi AND (l.recall_rows & @bit) <> 0 AND s.tenant_id = @tenantId
       ORDER BY l.position`,
    )
    .all({ lo: scope.lo, hi: scope.hi, bit, tenantId: scope.tenantId }) as Array<{ position: bigint }>;
  if (listed.length === 0) return undefined;
  let candidates = listed.map((row) => row.position);
  if (rare !== undefined && candidates.length > RECALL_CROSS_ROW_PREFILTER) {
    // Many long events in the span: only those holding the rare word (a walk of its matches, at most `RECALL_RANKED_MATCH_LIMIT`).
    const holding = new Set(
      (
        store
          .statement(`SELECT DISTINCT rowid >> ${RECALL_CHUNK_BITS} AS position FROM ${table} WHERE ${table} MATCH @rare AND rowid BETWEEN @loRow AND @hiRow`)
          .all({ rare, loRow: firstRecallRowid(scope.lo), hiRow: lastRecallRowid(scope.hi) }) as Array<{ position: bigint }>
      ).map((row) => row.position),
    );
    candidates = candidates.filter((position) => holding.has(position));
  }
  const inEvent = `rowid BETWEEN @from AND @to`;
  const like = (i: number) => `body LIKE @substring${i} ESCAPE '\\'`;
  const whole = (i: number) => `${RECALL_WHOLE_CLUSTERS_FUNCTION}(body, @whole${i})`;
  const phrase = store.statement(`SELECT 1 FROM ${table} WHERE ${table} MATCH @phrase AND ${inEvent} LIMIT 1`);
  const words: Array<{ sql: string; params: Record<string, unknown> }> = [
    ...plan.substrings.map((term, i) => ({ sql: like(i), params: { [`substring${i}`]: likePattern(term) } })),
    ...plan.wholeClusters.map((term, i) => ({ sql: whole(i), params: { [`whole${i}`]: term } })),
  ];
  const substring = words.map((word) => store.statement(`SELECT 1 FROM ${table} WHERE ${inEvent} AND ${word.sql} LIMIT 1`));
  // One row holding every word: an ordinary hit.
  const allParams = Object.assign({}, ...words.map((word) => word.params)) as Record<string, unknown>;
  const all = store.statement(
    `SELECT 1 FROM ${table} WHERE ${[...(plan.match === null ? [] : [`${table} MATCH @match`]), inEvent, ...words.map((word) => word.sql)].join(' AND ')} LIMIT 1`,
  );
  const positions = candidates.filter((position) => {
    const range = { from: firstRecallRowid(position), to: lastRecallRowid(position) };
    if (!plan.phrases.every((p) => phrase.get({ ...range, phrase: p }) !== undefined)) return false;
    if (!words.every((word, i) => substring[i].get({ ...range, ...word.params }) !== undefined)) return false;
    return all.get({ ...range, ...allParams, ...(plan.match === null ? {} : { match: plan.match }) }) === undefined;
  });
  if (positions.length === 0) return undefined;
  const rowsOf = store.statement(`SELECT id FROM ${table}_docsize WHERE id BETWEEN @from AND @to`).pluck();
  const rows = positions.flatMap((position) => rowsOf.all({ from: firstRecallRowid(position), to: lastRecallRowid(position) }) as bigint[]);
  return { positions, rows: `[${rows.join(',')}]` };
}

/** A `LIKE … ESCAPE '\'` pattern finding `term` anywhere. */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** An FTS5 MATCH expression matching a row holding any of `phrases` (quoted phrases), in their order (BM25 numbers them so). */
export function anyPhrase(phrases: readonly string[]): string {
  return phrases.join(' OR ');
}
