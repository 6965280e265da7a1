/**
 * Micro-benchmark (newcomer report ncmultilingual F1): what moving FTS5's snippet cuts to grapheme
 * cluster boundaries costs a recall page (`snippetCutsOnClusters`: each hit whose snippet FTS5 cut
 * has its index row's text fetched by rowid and the snippet's text looked up in it; then every
 * snippet's marks are widened to whole clusters, `marksOnClusters`).
 *
 * Projects `CLUSTERS_EVENTS` (default 5,000) user events of about 60 words each (English, Japanese,
 * Devanagari, Arabic with harakat, ZWJ and skin-tone emoji, a tag flag, a keycap) into a fresh
 * read-model file (`CLUSTERS_DIR`, default the OS temp dir), every one holding `booking` and
 * `東京駅`, one in three `zephyr`, so every snippet is cut. Prints, for pages of 100 hits (median of
 * `CLUSTERS_ROUNDS`, default 30): the whole `searchRecall` page, and the added work alone on the
 * same 100 raw snippets (body lookups + `snippetCutsOnClusters` + `marksOnClusters`).
 *
 * Run: `npx ts-node --transpile-only -r tsconfig-paths/register bench/recall-snippet-clusters.ts`
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CONVERSATION_EVENT,
  marksOnClusters,
  ReadModelStore,
  searchRecall,
  SessionProjector,
  sessionKey,
  sessionStream,
  snippetCutsOnClusters,
  storeEventId,
  tenantRecallIndexTables,
} from '@lib/session';

const EVENTS = Number(process.env.CLUSTERS_EVENTS ?? 5_000);
const ROUNDS = Number(process.env.CLUSTERS_ROUNDS ?? 30);
const WORDS = ['the', 'agent', 'changed', 'flight', 'for', 'family', 'मुंबई', 'क्षत्रिय', 'مُحَمَّد', '東京駅の新幹線', '👨‍👩‍👧‍👦', '👩🏽‍💻', '👍🏿', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '1️⃣', 'seat', 'window'];

function text(k: number): string {
  const words: string[] = [];
  for (let i = 0; i < 60; i++) words.push(WORDS[(k * 7 + i * 13) % WORDS.length]);
  words.splice(30, 0, 'booking', '東京駅', ...(k % 3 === 0 ? ['zephyr'] : []));
  return words.join(' ');
}

function median(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const dir = fs.mkdtempSync(path.join(process.env.CLUSTERS_DIR ?? os.tmpdir(), 'recall-clusters-'));
const store = ReadModelStore.open(path.join(dir, 'read-models.sqlite'));
try {
  const projector = new SessionProjector(store);
  const key = sessionKey('default', 'bench');
  const batch = [];
  for (let k = 0; k < EVENTS; k++) {
    const id = `u${k}`;
    batch.push({
      id: storeEventId(key, BigInt(k), id),
      type: CONVERSATION_EVENT,
      data: {
        event: { id, type: 'user', text: text(k) },
        costs: { chars: 1, cl100k_base: 1, o200k_base: 1 },
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, k)).toISOString(),
      },
      metadata: { tenantId: 'default', sessionId: 'bench' },
      streamId: sessionStream(key),
      revision: BigInt(k),
      position: BigInt(k + 1),
      created: new Date(),
    });
  }
  projector.applyBatch(batch);
  const tables = tenantRecallIndexTables(store.db, 'default')!;
  for (const [q, table] of [
    ['booking', tables.words],
    ['zephyr', tables.words],
    ['東京駅', tables.trigrams],
  ] as const) {
    const page = () => searchRecall(store, { tenantId: 'default', q, limit: 100 });
    const first = page();
    const pageTimes: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = process.hrtime.bigint();
      page();
      pageTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const raws = store.db
      .prepare(`SELECT rowid, snippet(${table}, 0, char(1), char(2), '…', 24) AS snippet FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid DESC LIMIT 100`)
      .all(`"${q}"`) as Array<{ rowid: bigint; snippet: string }>;
    const body = store.db.prepare(`SELECT body FROM ${table} WHERE rowid = ?`);
    const cut = raws.filter((r) => r.snippet.startsWith('…') || r.snippet.endsWith('…')).length;
    const addedTimes: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = process.hrtime.bigint();
      for (const raw of raws) {
        const fixed =
          raw.snippet.startsWith('…') || raw.snippet.endsWith('…')
            ? snippetCutsOnClusters(raw.snippet, (body.get(raw.rowid) as { body: string }).body)
            : raw.snippet;
        marksOnClusters(fixed);
      }
      addedTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    console.log(
      `q=${q}: order ${first.order}, ${first.items.length} hits; page ${median(pageTimes).toFixed(2)} ms (median of ${ROUNDS}); ` +
        `cluster work on ${raws.length} snippets (${cut} cut by FTS5): ${median(addedTimes).toFixed(2)} ms (${((median(addedTimes) / raws.length) * 1000).toFixed(1)} µs per hit)`,
    );
  }
} finally {
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
