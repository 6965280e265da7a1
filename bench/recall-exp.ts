import * as path from 'node:path';
import { CONVERSATION_EVENT, ReadModelStore, SessionProjector, recallMatchExpression, searchRecall, sessionKey, sessionStream, storeEventId } from '@lib/session';
import { corpus, EventCycler } from '/work/main/bench/lib/corpus';
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const rm = ReadModelStore.open(path.join('/work/benchtmp', `exp-${Date.now()}.sqlite`));
const pr = new SessionProjector(rm); const cyc = new EventCycler(corpus().conversations, 'r', true);
let pos = 0n; const created = new Date();
for (let s = 0; pos < 200000n; s++) { const key = sessionKey('default', 's' + s); pr.applyBatch(cyc.take(200).map(({ event, costs }, r) => ({ id: storeEventId(key, event.id), type: CONVERSATION_EVENT, data: { event, costs }, metadata: { tenantId: 'default', sessionId: 's' + s }, streamId: sessionStream(key), revision: BigInt(r), position: ++pos, created }))); }
const words = ['flight', 'reservation', 'user', 'would', 'like', 'cancel', 'baggage', 'payment', 'please', 'help'];
const count = rm.db.prepare('SELECT count(*) AS n FROM recall_fts WHERE recall_fts MATCH ?');
const noSnip = rm.db.prepare(`SELECT l.position FROM recall_fts JOIN session_log l ON l.position = recall_fts.rowid JOIN sessions s ON s.session_id = l.session_id WHERE recall_fts MATCH ? AND s.tenant_id = 'default' ORDER BY bm25(recall_fts), l.position LIMIT 21`);
const bare = rm.db.prepare('SELECT rowid FROM recall_fts WHERE recall_fts MATCH ? ORDER BY rank LIMIT 21');
for (const w of words) { const m = recallMatchExpression(w); const n = (count.get(m) as any).n;
  const t = (f: () => void) => { f(); const t0 = nowMs(); for (let i = 0; i < 5; i++) f(); return ((nowMs() - t0) / 5).toFixed(1); };
  console.log(w.padEnd(12), 'matches', String(n).padStart(6), 'full', t(() => searchRecall(rm, { tenantId: 'default', q: w })), 'ms; joins no snippet', t(() => noSnip.all(m)), 'ms; bare', t(() => bare.all(m)), 'ms'); }
