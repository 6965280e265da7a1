/**
 * Erasure of a session's recall rows (`recall-erasure`). Newcomer report ncretry F5: erasing a
 * session of 1,000 events of 3,000 characters took 12–14 s on SQLite (23.5 s here with CJK text),
 * FTS5's `secure-delete` editing each (term, row) pair out of the index's segments one at a time:
 * a trigram index holds one pair per distinct trigram of an event. The work is held to a bound
 * here by what SQLite writes (rows changed in the index's shadow tables, `total_changes()`), not
 * by a wall-clock time: a session holding most of an index is erased by rewriting the index, in
 * writes of the order of its pages; a small share of a large index row by row. Either way no term
 * of the erased rows is left in the index, and the other sessions' rows keep theirs.
 */
import { ReadModelStore } from './read-model-store';
import { tenantRecallIndexTables } from './recall-index-tables';
import { RECALL_BULK_ERASE_SHARE, eraseSessionRecallRows, varints } from './recall-erasure';
import { SessionProjector } from './session-projector';
import { searchRecall } from './queries/recall-query';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

/** `length` ideographs of the CJK block, a different run per `seed`: nearly every trigram of it distinct. */
function ideographs(length: number, seed: number): string {
  return Array.from({ length }, (_, i) => String.fromCodePoint(0x4e00 + ((seed * 7919 + i * 131) % 3000))).join('');
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

const trigramsOf = (text: string) => Array.from({ length: text.length - 2 }, (_, i) => text.slice(i, i + 3));

describe('eraseSessionRecallRows', () => {
  it('erases a session holding most of its trigram index in writes of the order of the index, not one per (term, row)', () => {
    // 40 events of 2,000 ideographs: ~80,000 (trigram, row) pairs; the index is ~300 pages of 4 KiB.
    const doomed = Array.from({ length: 40 }, (_, i) => ideographs(2000, i));
    const projector = projected({ doomed, kept: ['東京タワーの夜景'] });
    const before = totalChanges(projector).n;
    expect(projector.eraseSession('acme', 'doomed')).toBe(true);
    const writes = totalChanges(projector).n - before;
    // Row by row with secure-delete (before): 80,753 rows changed. Rewritten: 1,601.
    expect(writes).toBeLessThan(5000);
    expect(trigramTerms(projector, trigramsOf(doomed[0]).slice(0, 200))).toBe(0);
    expect(searchRecall(projector.store, { tenantId: 'acme', q: doomed[7].slice(100, 110) }).items).toEqual([]);
    expect(searchRecall(projector.store, { tenantId: 'acme', q: 'タワー' }).items.map((i) => i.sessionId)).toEqual(['kept']);
    const { words, trigrams } = tenantRecallIndexTables(projector.store.db, 'acme')!;
    for (const table of [words, trigrams]) {
      projector.store.db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('integrity-check', 1)`);
      // The option is on again for the next erasure.
      expect(projector.store.db.prepare(`SELECT v FROM ${table}_config WHERE k = 'secure-delete'`).pluck().get()).toBe(1);
    }
  });

  it('erases a small share of an index row by row (secure-delete), the rest of the index untouched', () => {
    const kept = Array.from({ length: 20 }, (_, i) => ideographs(2000, 100 + i));
    const projector = projected({ kept, small: [ideographs(200, 7)] });
    const { trigrams } = tenantRecallIndexTables(projector.store.db, 'acme')!;
    const key = projector.store.db.prepare("SELECT session_key AS k FROM sessions WHERE session_id = 'small'").pluck().get() as string;
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
  });

  it('rewrites the index from the share RECALL_BULK_ERASE_SHARE names on', () => {
    expect(RECALL_BULK_ERASE_SHARE.trigrams).toBeGreaterThan(RECALL_BULK_ERASE_SHARE.words);
    const kept = Array.from({ length: 8 }, (_, i) => ideographs(1000, 200 + i));
    const projector = projected({ kept, large: [ideographs(1000, 9)] });
    const { trigrams } = tenantRecallIndexTables(projector.store.db, 'acme')!;
    const key = projector.store.db.prepare("SELECT session_key AS k FROM sessions WHERE session_id = 'large'").pluck().get() as string;
    expect(projector.store.transaction(() => eraseSessionRecallRows(projector.store.db, trigrams, 'trigrams', key))).toEqual({ rows: 1, way: 'rewrite' });
    expect(projector.store.transaction(() => eraseSessionRecallRows(projector.store.db, trigrams, 'trigrams', key))).toEqual({ rows: 0, way: 'none' });
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
