import type { EstimatorName, EventCosts } from '../../events/session-stream-events';
import type { ReadModelStore } from '../read-model-store';
import { ITEMS_PER_TURN, nextTurn } from '../../event-loop-turns';
import { appendObjectWith, JsonBytes } from './json-bytes';
import { findSession } from './session-row';

/**
 * The projected active window of `sessionId` in `tenantId` as the bytes (UTF-8 JSON) of the
 * window answer in format `events`:
 * `{ sessionId, revision, tokens, estimator, events: [{ ...event, tokens, revision, createdAt, compactionId? }] }`
 * (revisions as decimal strings; `tokens` under `estimator`, UTF-16 code units for `chars`), the
 * same bytes as `JSON.stringify` of the answer built from {@link getWindow}'s entries, in the same
 * window order (DESIGN §3.3.4). Each event's stored JSON is spliced in as bytes, never decoded,
 * so a 1,000,000-character event costs the event loop a copy, not a parse and a stringify.
 *
 * Relies on what the projector stores: `event_json` is `JSON.stringify` of a validated event,
 * whose keys never include `tokens`, `revision`, `createdAt` or `compactionId`.
 * The rows are read by one statement (one consistent snapshot of the read models); the answer is
 * built from them giving the event loop a turn every {@link ITEMS_PER_TURN} events, so a window of
 * 30,000 events does not hold every other request for the whole of it (newcomer ncnoisy F1).
 * Resolves to null when the session is unknown to the projection or belongs to another tenant (→ 404).
 */
export async function getWindowJson(store: ReadModelStore, tenantId: string, sessionId: string, estimator: EstimatorName): Promise<Buffer | null> {
  const session = findSession(store, tenantId, sessionId);
  if (!session) return null;
  // The order of compareWindowEntries: by anchor, a summary inserted before its anchor first, then by revision.
  const rows = store.db
    .prepare(
      `SELECT revision, compaction_id AS compactionId, CAST(event_json AS BLOB) AS eventJson, costs_json AS costsJson, created_at AS createdAt
       FROM window_entries WHERE session_key = ?
       ORDER BY anchor_revision, CASE WHEN is_summary = 1 AND anchor_revision <> revision THEN 0 ELSE 1 END, revision`,
    )
    .safeIntegers(true)
    .all(session.sessionKey) as Array<{ revision: bigint; compactionId: string | null; eventJson: Buffer; costsJson: string; createdAt: string }>;
  let tokens = 0;
  const costs: number[] = new Array<number>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % ITEMS_PER_TURN === 0) await nextTurn();
    costs[i] = (JSON.parse(rows[i].costsJson) as EventCosts)[estimator];
    tokens += costs[i];
  }
  const out = new JsonBytes();
  out.text('{"sessionId":').value(sessionId);
  out.text(',"revision":').value(session.revision.toString());
  out.text(',"tokens":').value(tokens);
  out.text(',"estimator":').value(estimator);
  out.text(',"events":[');
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (i > 0 && i % ITEMS_PER_TURN === 0) await nextTurn();
    if (i > 0) out.text(',');
    const members = [
      ...(costs[i] !== undefined ? [`"tokens":${JSON.stringify(costs[i])}`] : []),
      `"revision":${JSON.stringify(row.revision.toString())}`,
      `"createdAt":${JSON.stringify(row.createdAt)}`,
      ...(row.compactionId ? [`"compactionId":${JSON.stringify(row.compactionId)}`] : []),
    ];
    appendObjectWith(out, row.eventJson, members.join(','));
  }
  out.text(']}');
  return out.toBuffer();
}
