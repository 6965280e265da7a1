/**
 * `recall-rank` reproduces FTS5's `bm25()` of a past moment: rows ranked with the statistics
 * frozen then, after rows were added and deleted, get the very `bm25()` values FTS5 gave them
 * then, bit for bit, in both recall indexes, for one- to three-phrase queries (multi-token
 * phrases included). A SQLite upgrade that changed `bm25()` or its records would fail here.
 */
import fc from 'fast-check';
import { ReadModelStore } from './read-model-store';
import { createdTenantRecallIndexTables } from './recall-index-tables';
import { documentLengthSql, frozenRankParams, frozenRankSql, readIndexTotals, sqliteLn, type RecallIndexTable, type RecallRankStats } from './recall-rank';

const WORDS = ['read_file', 'src/a.ts', 'kestrel', 'osprey', 'heron', 'x', '東京タワー', 'タワー', '鶴の絵'];

/** rowid → FTS5 rank (`bm25()`) of the rows matching every phrase, now. */
function fts5Ranks(store: ReadModelStore, table: RecallIndexTable, phrases: string[]): Map<bigint, number> {
  const rows = store.statement(`SELECT rowid, bm25(${table}) AS rank FROM ${table} WHERE ${table} MATCH @m`).all({ m: phrases.join(' ') }) as Array<{
    rowid: bigint;
    rank: number;
  }>;
  return new Map(rows.map((r) => [r.rowid, r.rank]));
}

function rowsHolding(store: ReadModelStore, table: RecallIndexTable, phrase: string): number {
  return Number((store.statement(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH @phrase`).get({ phrase }) as { n: bigint }).n);
}

/** rowid → rank under `stats` of the rows matching every phrase, computed now by `frozenRankSql`. */
function frozenRanks(store: ReadModelStore, table: RecallIndexTable, phrases: string[], stats: RecallRankStats): Map<bigint, number> {
  const ctes = phrases.map(
    (_, k) => `p${k} AS MATERIALIZED (SELECT rowid AS position, -bm25(${table}) AS score FROM ${table} WHERE ${table} MATCH @rankPhrase${k})`,
  );
  const joins = phrases.slice(1).map((_, k) => `JOIN p${k + 1} ON p${k + 1}.position = p0.position`);
  const sql = `WITH ${ctes.join(', ')}
    SELECT p0.position AS rowid, ${frozenRankSql(
      phrases.map((_, k) => `p${k}.score`),
      documentLengthSql('d.sz'),
    )} AS rank
    FROM p0 ${joins.join(' ')} JOIN ${table}_docsize d ON d.id = p0.position`;
  const params: Record<string, unknown> = frozenRankParams(
    stats,
    readIndexTotals(store, table),
    phrases.map((p) => rowsHolding(store, table, p)),
    sqliteLn(store),
  );
  phrases.forEach((p, k) => (params[`rankPhrase${k}`] = p));
  const rows = store.statement(sql).all(params) as Array<{ rowid: bigint; rank: number }>;
  return new Map(rows.map((r) => [r.rowid, r.rank]));
}

describe('recall-rank reproduces FTS5 bm25() with frozen statistics', () => {
  it('ranks the rows of a past moment as FTS5 did then, bit for bit, after rows were added and deleted, in both indexes', () => {
    const doc = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 200 });
    fc.assert(
      fc.property(
        fc.array(doc, { minLength: 1, maxLength: 50 }),
        fc.array(doc, { maxLength: 50 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.uniqueArray(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
        (before, after, deletions, query) => {
          const store = ReadModelStore.open(':memory:');
          const tables = createdTenantRecallIndexTables(store.db, 'acme');
          const insert = (docs: string[][], from: number) =>
            docs.forEach((words, i) => {
              for (const table of [tables.words, tables.trigrams])
                store.db.prepare(`INSERT INTO ${table} (rowid, body) VALUES (?, ?)`).run(from + i, words.join(' '));
            });
          insert(before, 1);
          const quote = (w: string) => `"${w}"`;
          const checked: Array<[RecallIndexTable, string[]]> = [
            [tables.words, query.map(quote)],
            [tables.trigrams, query.filter((w) => [...w].length >= 3).map(quote)],
          ];
          const then = checked.map(([table, phrases]) => {
            if (phrases.length === 0) return null;
            const stats: RecallRankStats = {
              ...readIndexTotals(store, table),
              phrases: phrases.map((p, index) => ({ index, rows: rowsHolding(store, table, p) })),
            };
            return { ranks: fts5Ranks(store, table, phrases), stats };
          });
          insert(after, before.length + 1);
          const deleted = new Set(deletions.map((d) => BigInt(1 + (d % before.length))));
          for (const rowid of deleted) for (const table of [tables.words, tables.trigrams]) store.db.prepare(`DELETE FROM ${table} WHERE rowid = ?`).run(rowid);
          checked.forEach(([table, phrases], i) => {
            const moment = then[i];
            if (!moment) return;
            const frozen = frozenRanks(store, table, phrases, moment.stats);
            const expected = [...moment.ranks].filter(([rowid]) => !deleted.has(rowid));
            const got = [...frozen].filter(([rowid]) => rowid <= BigInt(before.length));
            expect({ table, ranks: got }).toEqual({ table, ranks: expected });
          });
          store.close();
        },
      ),
      { numRuns: 150 },
    );
  });

  it('reads lengths of one to three varint bytes, and the totals record', () => {
    const store = ReadModelStore.open(':memory:');
    const { words, trigrams } = createdTenantRecallIndexTables(store.db, 'acme');
    const lengths = [1, 127, 128, 300, 16383, 16384, 40000];
    lengths.forEach((n, i) => store.db.prepare(`INSERT INTO ${words} (rowid, body) VALUES (?, ?)`).run(i + 1, 'kestrel '.repeat(n)));
    const read = store.db.prepare(`SELECT ${documentLengthSql('sz')} AS n FROM ${words}_docsize ORDER BY id`).all() as Array<{ n: number }>;
    expect(read.map((r) => r.n)).toEqual(lengths);
    expect(readIndexTotals(store, words)).toEqual({ rows: lengths.length, tokens: lengths.reduce((a, b) => a + b, 0) });
    expect(readIndexTotals(store, trigrams)).toEqual({ rows: 0, tokens: 0 });
    store.close();
  });
});
