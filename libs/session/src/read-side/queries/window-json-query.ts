import type { EstimatorName, EventCosts } from '../../events/session-stream-events';
import type { ReadModelStore } from '../read-model-store';
import { appendObjectWith, JsonBytes } from './json-bytes';
import { readWindowRows, type WindowRowsOptions } from './window-rows';

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
 * The rows are read in pages of one consistent snapshot of the read models, with a turn of the
 * event loop between pages (`readWindowRows`; `options.rowsPerPage`, default `WINDOW_ROWS_PER_PAGE`),
 * each page spliced into the answer as it is read, so a window of 30,000 events does not hold
 * every other request for the whole of it (newcomer ncnoisy F1).
 * Resolves to null when the session is unknown to the projection or belongs to another tenant (→ 404).
 */
export async function getWindowJson(
  store: ReadModelStore,
  tenantId: string,
  sessionId: string,
  estimator: EstimatorName,
  options: WindowRowsOptions = {},
): Promise<Buffer | null> {
  // The events first (the header's `tokens` is their sum), each page spliced in as it is read.
  const events = new JsonBytes();
  let tokens = 0;
  const session = await readWindowRows(
    store,
    tenantId,
    sessionId,
    (rows, offset) => {
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        const cost = (JSON.parse(row.costsJson) as EventCosts)[estimator];
        tokens += cost;
        if (offset + i > 0) events.text(',');
        const members = [
          ...(cost !== undefined ? [`"tokens":${JSON.stringify(cost)}`] : []),
          `"revision":${JSON.stringify(row.revision.toString())}`,
          `"createdAt":${JSON.stringify(row.createdAt)}`,
          ...(row.compactionId ? [`"compactionId":${JSON.stringify(row.compactionId)}`] : []),
        ];
        appendObjectWith(events, row.eventJson, members.join(','));
      }
    },
    options,
  );
  if (!session) return null;
  const head = new JsonBytes();
  head.text('{"sessionId":').value(sessionId);
  head.text(',"revision":').value(session.revision.toString());
  head.text(',"tokens":').value(tokens);
  head.text(',"estimator":').value(estimator);
  head.text(',"events":[');
  events.text(']}');
  return JsonBytes.concat(head, events);
}
