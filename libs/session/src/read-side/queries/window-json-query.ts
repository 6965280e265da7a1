import type { EstimatorName } from '../../events/session-stream-events';
import type { ReadModelStore } from '../read-model-store';
import type Database from 'better-sqlite3';
import { JsonBytes } from './json-bytes';
import { preparedOn, readWindowPages, type WindowRowsOptions } from './window-rows';

/**
 * The projected active window of `sessionId` in `tenantId` as the bytes (UTF-8 JSON) of the
 * window answer in format `events`:
 * `{ sessionId, revision, tokens, estimator, events: [{ ...event, tokens, revision, createdAt, compactionId? }] }`
 * (revisions as decimal strings; `tokens` under `estimator`, UTF-16 code units for `chars`), the
 * same bytes as `JSON.stringify` of the answer built from {@link getWindow}'s entries, in the same
 * window order (DESIGN §3.3.4). No event is parsed or stringified: a page of events is built by
 * SQLite from their stored JSON (`windowJsonPage`), and an event of more than `options.aloneBytes`
 * (default {@link LARGE_EVENT_BYTES}) is a page alone, its stored JSON spliced in as bytes, so a
 * 1,000,000-character event costs the event loop a copy.
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
  // The events first (the header's `tokens` is their sum), each page built by SQLite as it is read.
  const pages: Buffer[] = [];
  let tokens = 0;
  const path = estimatorPath(estimator);
  // A larger event is a page alone, spliced in JavaScript (tests set it small to read every event so).
  const aloneBytes = options.aloneBytes ?? LARGE_EVENT_BYTES;
  const session = await readWindowPages(
    store,
    tenantId,
    sessionId,
    (db, rowids, bytes) => readJsonPage(db, rowids, rowids.length === 1 && bytes > aloneBytes, path),
    (page) => {
      if (pages.length > 0) pages.push(COMMA);
      pages.push(page.json);
      tokens += page.uncosted > 0 ? NaN : page.tokens;
    },
    { ...options, aloneBytes },
  );
  if (!session) return null;
  const head = new JsonBytes();
  head.text('{"sessionId":').value(sessionId);
  head.text(',"revision":').value(session.revision.toString());
  head.text(',"tokens":').value(tokens);
  head.text(',"estimator":').value(estimator);
  head.text(',"events":[');
  return Buffer.concat([head.toBuffer(), ...pages, CLOSE]);
}

const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/**
 * What follows an event's own members in the window answer, as SQL text over a `window_entries`
 * row `w`: `tokens` when its costs hold the estimator (`@path`), as its stored JSON text;
 * `revision` as a decimal string; `createdAt`; `compactionId` when set; then the closing brace.
 * After the stored event JSON less its closing brace, and a comma unless it is `{}`, these are the
 * bytes of what `JSON.stringify` makes of `{ ...event, tokens, revision, createdAt, compactionId }`
 * for each entry of `getWindow` (the stored event JSON was written by `JSON.stringify` of a
 * validated event, whose keys are never these four), which `window-json-page.spec.ts` and
 * `session-reads-json.spec.ts` check. `concat()` copies each argument once (a chain of `||`
 * copies a large event once per operator: 41–119 ms for five events of 4 MB against 17–32).
 */
const EVENT_MEMBERS = `concat(
         CASE WHEN w.costs_json -> @path IS NULL THEN '' ELSE concat('"tokens":', w.costs_json -> @path, ',') END,
         '"revision":"', w.revision, '","createdAt":', json_quote(w.created_at),
         CASE WHEN w.compaction_id IS NULL OR w.compaction_id = '' THEN '' ELSE concat(',"compactionId":', json_quote(w.compaction_id)) END,
         '}')`;

/** A comma when the row's stored event has members of its own (is not `{}`), as SQL text over `w`. */
const MEMBERS_COMMA = `CASE WHEN octet_length(w.event_json) <= 2 THEN '' ELSE ',' END`;

/**
 * One page of the window answer's events, built by SQLite in one statement: each row's stored
 * event JSON with {@link EVENT_MEMBERS} after its own, the rows joined by commas. `total()` sums
 * the page's costs; `uncosted` counts rows whose costs lack the estimator (the sum is then NaN).
 * Parameters: `path`, the estimator's JSON path; `rowids`, the page's rowids as a JSON array.
 *
 * The rows are concatenated in the order the join visits them: `CROSS JOIN` makes `json_each` the
 * outer loop, which visits the array in order; `keys` lists the array indexes in the order
 * concatenated, and the page is read again with `ORDER BY j.key` ({@link ORDERED}) if they are ever
 * out of order. (An aggregate's `ORDER BY` sorts the rows' texts in a temporary B-tree: 3.7 ms
 * instead of 2.0 for a page of 1,600 events of ~300 bytes.)
 */
const windowJsonPage = (order: string): string => `SELECT CAST(group_concat(concat(
         substr(w.event_json, 1, length(w.event_json) - 1), ${MEMBERS_COMMA}, ${EVENT_MEMBERS}), ',' ${order}) AS BLOB) AS json,
       group_concat(j.key, ',' ${order}) AS keys,
       total(w.costs_json ->> @path) AS tokens,
       count(*) - count(w.costs_json -> @path) AS uncosted
FROM json_each(@rowids) AS j CROSS JOIN window_entries AS w ON w.rowid = j.value`;

/** {@link windowJsonPage} in the join's order (checked by its `keys`). */
const AS_VISITED = windowJsonPage('');
/** {@link windowJsonPage} sorted by the rowids' order. */
const ORDERED = windowJsonPage('ORDER BY j.key');

/**
 * One large event of the window answer (a page alone, {@link LARGE_EVENT_BYTES}): its stored JSON
 * as bytes, spliced in JavaScript with {@link EVENT_MEMBERS} (SQLite's string functions walk and
 * copy a text several times: five events of 4 MB took 17–32 ms that way, 2–3 ms read as bytes).
 * Parameters: `path`; `rowid`.
 */
const LARGE_EVENT = `SELECT CAST(w.event_json AS BLOB) AS event, concat(${MEMBERS_COMMA}, ${EVENT_MEMBERS}) AS members,
       total(w.costs_json ->> @path) AS tokens, count(*) - count(w.costs_json -> @path) AS uncosted
FROM window_entries AS w WHERE w.rowid = @rowid`;

/**
 * Stored event JSON (UTF-8 bytes) above which an event is a page of the window answer alone, read
 * by {@link LARGE_EVENT}; smaller ones are built by {@link windowJsonPage}, which costs less per row.
 */
export const LARGE_EVENT_BYTES = 64 * 1024;

/** What {@link windowJsonPage} answers for one page. */
interface WindowJsonPage {
  /** The page's events, comma-separated, as UTF-8 JSON bytes. */
  json: Buffer;
  /** The sum of their costs under the estimator (tokens; UTF-16 code units for `chars`). */
  tokens: number;
  /** How many of them have no cost under the estimator. */
  uncosted: number;
  /** The page's indexes (`0,1,2,…`) in the order its events were concatenated. */
  keys: string;
}

/** The JSON path of `estimator`'s cost in an event's stored costs (`$."cl100k_base"`). */
function estimatorPath(estimator: EstimatorName): string {
  return `$.${JSON.stringify(estimator)}`;
}

/** One page of the window answer: `large`, one event larger than `aloneBytes` ({@link LARGE_EVENT}), else built by SQLite ({@link windowJsonPage}). */
function readJsonPage(db: Database.Database, rowids: number[], large: boolean, path: string): WindowJsonPage {
  if (large) {
    const row = preparedOn(db, LARGE_EVENT, (on) => on.prepare(LARGE_EVENT)).get({ path, rowid: rowids[0] }) as LargeEventRow;
    const json = Buffer.concat([row.event.subarray(0, row.event.length - 1), Buffer.from(row.members)]);
    return { json, tokens: row.tokens, uncosted: row.uncosted, keys: '0' };
  }
  const params = { path, rowids: JSON.stringify(rowids) };
  const page = preparedOn(db, AS_VISITED, (on) => on.prepare(AS_VISITED)).get(params) as WindowJsonPage;
  if (page.keys === indexList(rowids.length)) return page;
  return preparedOn(db, ORDERED, (on) => on.prepare(ORDERED)).get(params) as WindowJsonPage;
}

/** What {@link LARGE_EVENT} answers. */
interface LargeEventRow {
  event: Buffer;
  members: string;
  tokens: number;
  uncosted: number;
}

/** `0,1,…,n-1`: the keys of a page of `n` rows in order (the last few lengths remembered). */
function indexList(n: number): string {
  let list = indexLists.get(n);
  if (list === undefined) {
    if (indexLists.size >= 4) indexLists.clear();
    indexLists.set(n, (list = Array.from({ length: n }, (_, i) => i).join(',')));
  }
  return list;
}

const indexLists = new Map<number, string>();
