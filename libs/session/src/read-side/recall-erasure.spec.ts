/**
 * Erasure of a session's recall rows (`recall-erasure`). Newcomer report ncretry F5: erasing a
 * session of 1,000 events of 3,000 characters took 12–14 s on SQLite (23.5 s here with CJK text),
 * FTS5's `secure-delete` editing each (term, row) pair out of the index's segments one at a time:
 * a trigram index holds one pair per distinct trigram of an event. The work is held to a bound
 * here by what SQLite writes (rows changed in the index's shadow tables, `total_changes()`), not
 * by a wall-clock time: a session holding most of an index is erased by indexing the rest anew, one
 * whose rows cost more row by row than a rewrite by rewriting the index without them (the choice
 * tested with a clock given to the erasure), both in writes of the order of the index's pages; a
 * small share of a large index row by row. Each way leaves no term of the erased rows in the
 * index, and the other sessions' rows keep theirs.
 */
import { ReadModelStore } from './read-model-store';
import { tenantRecallIndexTables } from './recall-index-tables';
import * as recallErasure from './recall-erasure';
import { eraseSessionRecallRows, varints } from './recall-erasure';
import { SessionProjector } from './session-projector';
import { searchRecall } from './queries/recall-query';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

/** `length` pseudo-random ideographs of the CJK block (20,000 of them), a different run per `seed`: nearly every trigram of it distinct, and in no other run. */
function ideographs(length: number, seed: number): string {
  let x = seed + 1;
  return Array.from({ length }, () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return String.fromCodePoint(0x4e00 + ((x >>> 8) % 20000));
  }).join('');
}

/** The read models with `sessions` (session id → its events' texts) of tenant acme projected, 10 events a batch. */
function projected(sessions: Record<string, string[]>): SessionProjector {
  const log = new RecordedSessionLog('acme');
  for (const [sessionId, texts] of Object.entries(sessions)) texts.forEach((text, i) => log.append(sessionId, user(`${sessionId}-${i}`, text)));
  const projector = new SessionProjector(ReadModelStore.open(':memory:'));
  for (let i = 0; i < log.events.length; i += 10) projector.applyBatch(log.events.slice(i, i + 10));
  return projector;
}

/** Rows SQLite changed on the connection so far (every statement, those FTS5 runs on its shadow tables included). */
const totalChanges = (projector: SessionProjector) => projector.store.db.prepare('SELECT total_changes() AS n').get() as { n: number };

/** How many of `terms` acme's trigram index holds (fts5vocab). */
function trigramTerms(projector: SessionProjector, terms: string[]): number {
  const { trigrams } = tenantRecallIndexTables(projector.store.db, 'acme')!;
  projector.store.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.trigram_vocab USING fts5vocab(main, ${trigrams}, 'row')`);
  const found = projector.store.db
    .prepare('SELECT count(*) AS n FROM temp.trigram_vocab WHERE term IN (SELECT value FROM json_each(?))')
    .get(JSON.stringify(terms)) as { n: number };
  projector.store.db.exec('DROP TABLE temp.trigram_vocab');
  return found.n;
}

/** Rows of the segments of FTS5 table `table` (its `_data` and `_idx` shadow tables). */
const shadowRows = (projector: SessionProjector, table: string) =>
  ['data', 'idx'].reduce((sum, shadow) => sum + (projector.store.db.prepare(`SELECT count(*) AS n FROM ${table}_${shadow}`).get() as { n: number }).n, 0);

/** The `session_key` of session `sessionId` of acme. */
const sessionKeyOf = (projector: SessionProjector, sessionId: string) =>
  projector.store.db.prepare('SELECT session_key FROM sessions WHERE session_id = ?').pluck().get(sessionId) as string;

const trigramsOf = (text: string) => Array.from({ length: text.length - 2 }, (_, i) => text.slice(i, i + 3));

describe('eraseSessionRecallRows', () => {
  it.each([
    ['most of the index: rebuilt of the rest', 1, 'rebuild'],
    ['a large share of it: rewritten without the rows', 60, 'rewrite'],
  ])('erases a session holding %s, in writes of the order of the index, not one per (term, row)', (_, keptEvents, way) => {
    // 40 events of 2,000 ideographs: ~80,000 (trigram, row) pairs; the index is a few hundred pages of 4 KiB.
    const doomed = Array.from({ length: 40 }, (_, i) => ideographs(2000, i));
    const kept = Array.from({ length: keptEvents }, (_, i) => (i === 0 ? '東京タワーの夜景' : ideographs(2000, 1000 + i)));
    const projector = projected({ doomed, kept });
    const spy = jest.spyOn(recallErasure, 'eraseSessionRecallRows');
    const { words, trigrams } = tenantRecallIndexTables(projector.store.db, 'acme')!;
    const indexRows = [words, trigrams].reduce((sum, table) => sum + shadowRows(projector, table), 0);
    const before = totalChanges(projector).n;
    expect(projector.eraseSession('acme', 'doomed')).toBe(true);
    const writes = totalChanges(projector).n - before;
    expect(spy.mock.results.map((r) => (r.value as { way: string }).way)).toEqual([way, way]);
    spy.mockRestore();
    // Row by row with secure-delete (before): 81,367 and 81,203 rows changed, 83 and 43 per row of the
    // indexes' segments (977 and 1,902 rows); now 105 (rebuilt) and 9,644 (a row by row, then rewritten).
    expect(writes).toBeLessThan(10 * indexRows);
    expect(trigramTerms(projector, trigramsOf(doomed[0]).slice(0, 200))).toBe(0);
    expect(searchRecall(projector.store, { tenantId: 'acme', q: doomed[7].slice(100, 110) }).items).toEqual([]);
    expect(searchRecall(projector.store, { tenantId: 'acme', q: 'タワー' }).items.map((i) => i.sessionId)).toEqual(['kept']);
    if (keptEvents > 1) expect(trigramTerms(projector, trigramsOf(kept[5]).slice(0, 100))).toBe(100);
    for (const table of [words, trigrams]) {
      projector.store.db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('integrity-check', 1)`);
      // The option is on for the next erasure.
      expect(projector.store.db.prepare(`SELECT v FROM ${table}_config WHERE k = 'secure-delete'`).pluck().get()).toBe(1);
    }
    // Later events are indexed and found as before.
    const later = new RecordedSessionLog('acme');
    later.append('later', user('l1', 'x'));
    projector.applyBatch(later.events.map((e) => ({ ...e, position: e.position + 10_000n, data: { ...(e.data as object), event: user('l1', '富士山の朝') } })));
    expect(searchRecall(projector.store, { tenantId: 'acme', q: '富士山' }).items.map((i) => i.sessionId)).toEqual(['later']);
  });

  it('erases a small share of an index row by row (secure-delete), the rest of the index untouched', () => {
    const kept = Array.from({ length: 20 }, (_, i) => ideographs(2000, 100 + i));
    const projector = projected({ kept, small: [ideographs(200, 7)] });
    const { trigrams } = tenantRecallIndexTables(projector.store.db, 'acme')!;
    const key = sessionKeyOf(projector, 'small');
    const erased = projector.store.transaction(() => eraseSessionRecallRows(projector.store.db, trigrams, 'trigrams', key));
    expect(erased).toEqual({ rows: 1, way: 'secure' });
    expect(
      trigramTerms(
        projector,
        trigramsOf(ideographs(200, 7)).filter((t) => !kept.some((k) => k.includes(t))),
      ),
    ).toBe(0);
    expect(trigramTerms(projector, trigramsOf(kept[3]).slice(0, 100))).toBe(100);
    projector.store.db.exec(`INSERT INTO ${trigrams} (${trigrams}, rank) VALUES ('integrity-check', 1)`);
    expect(projector.store.transaction(() => eraseSessionRecallRows(projector.store.db, trigrams, 'trigrams', key))).toEqual({ rows: 0, way: 'none' });
  });

  it('goes on row by row while the time per row, times the rows left, stays under what the rewrite would cost; then rewrites', () => {
    const kept = Array.from({ length: 30 }, (_, i) => ideographs(200, 300 + i));
    const doomed = Array.from({ length: 10 }, (_, i) => ideographs(200, 400 + i));
    // The index holds ~8,000 tokens: a rewrite is taken to cost 0.8 ms. A clock giving each look 0.01 ms, then 1 ms.
    const ways = [0.01, 1].map((msPerCall) => {
      const projector = projected({ kept, doomed });
      const { trigrams } = tenantRecallIndexTables(projector.store.db, 'acme')!;
      let clock = 0;
      const now = () => (clock += msPerCall);
      const erased = projector.store.transaction(() =>
        eraseSessionRecallRows(projector.store.db, trigrams, 'trigrams', sessionKeyOf(projector, 'doomed'), now),
      );
      expect(
        trigramTerms(
          projector,
          trigramsOf(doomed[9]).filter((t) => !kept.some((k) => k.includes(t))),
        ),
      ).toBe(0);
      expect(trigramTerms(projector, trigramsOf(kept[9]).slice(0, 50))).toBe(50);
      projector.store.db.exec(`INSERT INTO ${trigrams} (${trigrams}, rank) VALUES ('integrity-check', 1)`);
      expect(projector.store.db.prepare(`SELECT v FROM ${trigrams}_config WHERE k = 'secure-delete'`).pluck().get()).toBe(1);
      return erased;
    });
    expect(ways).toEqual([
      { rows: 10, way: 'secure' },
      { rows: 10, way: 'rewrite' },
    ]);
  });
});

describe('varints', () => {
  it('reads SQLite varints: one byte below 128, seven bits a byte after, nine bytes at most', () => {
    expect(varints(Uint8Array.of(0x05, 0x81, 0x00, 0x7f), 3)).toEqual([5, 128, 127]);
    expect(varints(Uint8Array.of(0x87, 0x68, 0x01), 5)).toEqual([1000, 1]);
    expect(varints(Uint8Array.of(0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), 1)).toEqual([2 ** 57 + 1]);
    expect(varints(Uint8Array.of(), 1)).toEqual([]);
  });
});
