/**
 * Micro-benchmark (ncagentloop F1, read models 21): what indexing one large event for recall
 * costs, now that every character of it is indexed (in chunks, `recall-chunks`).
 *
 * For each text (a minified JSON tool result of 400 KB and of 2 MB, and 2 MB of Japanese prose,
 * which also goes to the trigram index), projects one tool event holding it through the real
 * `SessionProjector.applyBatch` into a fresh read-model file (`LARGE_DIR`, default the OS temp
 * dir) and prints: wall time of the batch (ms, median of `LARGE_ROUNDS`, default 3), the rows of
 * each recall index, the bytes the recall indexes take (SQLite's `dbstat`, all pages of the
 * tenant's FTS5 tables and their shadow tables), and the text's length.
 *
 * Run: `npx ts-node --transpile-only -r tsconfig-paths/register bench/recall-large-event.ts`
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONVERSATION_EVENT, ReadModelStore, SessionProjector, sessionKey, sessionStream, storeEventId, tenantRecallIndexTables } from '@lib/session';

const ROUNDS = Number(process.env.LARGE_ROUNDS ?? 3);

function json(bytes: number): string {
  const rows: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const row = `{"id":${i},"name":"row${i}","path":"/srv/data/f${i}.json","hash":"${(i * 2654435761).toString(36)}","ok":true}`;
    rows.push(row);
    size += row.length + 1;
  }
  return `[${rows.join(',')}]`;
}

function japanese(bytes: number): string {
  const sentence = '東京の会議室で午後三時から新しい計画について話し合いました。番号は';
  const parts: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const part = `${sentence}${i}です。`;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return parts.join('');
}

function measure(name: string, text: string): void {
  const times: number[] = [];
  let rows = { words: 0, trigrams: 0 };
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const dir = fs.mkdtempSync(path.join(process.env.LARGE_DIR ?? os.tmpdir(), 'recall-large-'));
    const store = ReadModelStore.open(path.join(dir, 'read-models.sqlite'));
    try {
      const projector = new SessionProjector(store);
      const key = sessionKey('default', 'big');
      const event = { id: 't1', type: 'tool', responses: [{ toolCallId: 'c1', name: 'dump', data: text }] };
      const t0 = process.hrtime.bigint();
      projector.applyBatch([
        {
          id: storeEventId(key, 0n, 't1'),
          type: CONVERSATION_EVENT,
          data: { event, costs: { tokens: 1 } },
          metadata: { tenantId: 'default', sessionId: 'big' },
          streamId: sessionStream(key),
          revision: 0n,
          position: 1n,
          created: new Date(),
        },
      ]);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const tables = tenantRecallIndexTables(store.db, 'default')!;
      const count = (table: string) => Number((store.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
      rows = { words: count(tables.words), trigrams: count(tables.trigrams) };
      bytes = Number(
        (
          store.db.prepare(`SELECT sum(pgsize) AS bytes FROM dbstat WHERE name LIKE ? OR name LIKE ?`).get(`${tables.words}%`, `${tables.trigrams}%`) as {
            bytes: number;
          }
        ).bytes,
      );
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name}: ${text.length.toLocaleString('en-US')} UTF-16 units, ${Buffer.byteLength(text).toLocaleString('en-US')} bytes; projected in ${times[Math.floor(times.length / 2)].toFixed(0)} ms (median of ${ROUNDS}; min ${times[0].toFixed(0)}, max ${times[times.length - 1].toFixed(0)}); rows: ${rows.words} word, ${rows.trigrams} trigram; recall index ${(bytes / 1e6).toFixed(2)} MB (${(bytes / Buffer.byteLength(text)).toFixed(2)}× the text)`,
  );
}

measure('JSON tool result, 400 KB', json(400_000));
measure('JSON tool result, 2 MB', json(2_000_000));
measure('Japanese prose, 2 MB', japanese(2_000_000));
