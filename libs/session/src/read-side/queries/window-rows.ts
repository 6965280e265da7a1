import type Database from 'better-sqlite3';
import type { ReadModelStore } from '../read-model-store';
import { nextTurn } from '../../event-loop-turns';
import { findSession, type SessionRow } from './session-row';

/**
 * Window rows read by one statement, between two turns given to the event loop, by
 * {@link readWindowRows}: on the 2-core machine a row of a ~90-character event costs ~5–10 µs to
 * read (a `Buffer` and three strings made per row), so a page holds the loop ~5–10 ms, and a
 * 30,000-event window is 30 pages instead of one statement of 200–800 ms (newcomer ncnoisy F1).
 */
export const WINDOW_ROWS_PER_PAGE = 1000;

/** A `window_entries` row as {@link readWindowRows} reads it (revisions bigint). */
export interface WindowRow {
  revision: bigint;
  anchorRevision: bigint;
  compactionId: string | null;
  /** The event's stored JSON (`JSON.stringify` of the validated event), UTF-8 bytes. */
  eventJson: Buffer;
  /** The event's stored costs (`EventCosts` as JSON: tokens per estimator, UTF-16 code units for `chars`). */
  costsJson: string;
  createdAt: string;
}

/**
 * The keys of a session's window rows (rowid, anchor revision, 0 for a summary inserted before its
 * anchor else 1, revision, the stored event's size in UTF-8 bytes), in no order: no event text read
 * (`octet_length` of a text takes its size from the row's header). Sorted in JavaScript into the window
 * order (DESIGN §3.3.4, `compareWindowEntries`: by anchor revision, a summary inserted before its
 * anchor first, then by revision; `is_summary` is 1 exactly for events of type `summary`). No index
 * holds that order (see `read-model-schema`), and SQL's `ORDER BY` would read every key in its
 * first step, in one stretch; iterated, the keys are read a page at a time.
 */
const WINDOW_KEYS = `SELECT rowid, anchor_revision, CASE WHEN is_summary = 1 AND anchor_revision <> revision THEN 0 ELSE 1 END, revision,
                            octet_length(event_json)
                     FROM window_entries WHERE session_key = ?`;

/** The rows of a page of rowids (a JSON array), each with its index in that array (`at`): the order is restored from it. */
const WINDOW_ROWS_BY_ROWID = `SELECT j.key AS at, w.revision, w.anchor_revision AS anchorRevision, w.compaction_id AS compactionId,
                                     CAST(w.event_json AS BLOB) AS eventJson, w.costs_json AS costsJson, w.created_at AS createdAt
                              FROM json_each(?) AS j CROSS JOIN window_entries AS w ON w.rowid = j.value`;

/**
 * The most UTF-8 bytes of stored event JSON a page holds (unless its first event alone is
 * larger: that page holds it alone), besides at most {@link WindowRowsOptions.rowsPerPage} rows: a
 * page is read in one statement, and a page of the window answer is built as one string by SQLite
 * (`windowJsonPage` in `window-json-query`), which must stay far below SQLite's limit on one value (1e9 bytes).
 */
export const WINDOW_PAGE_BYTES = 8 * 1024 * 1024;

/** Options of {@link readWindowRows}. */
export interface WindowRowsOptions {
  /** Rows per page (default {@link WINDOW_ROWS_PER_PAGE}, ≥ 1); tests set it small to see the pages. */
  rowsPerPage?: number;
  /** Stored event bytes per page (default {@link WINDOW_PAGE_BYTES}, ≥ 1); a first event larger than this is a page alone. */
  pageBytes?: number;
  /** An event whose stored JSON is larger than this (UTF-8 bytes) is a page alone (default: none is). */
  aloneBytes?: number;
}

/**
 * Reads one page of a session's window rows: `rowids` (of one session's window rows, in window
 * order) on `db`, inside the read's snapshot; `bytes`, the size of their stored event JSON (UTF-8).
 */
export type WindowPageReader<T> = (db: Database.Database, rowids: number[], bytes: number) => T;

/** A statement prepared once per connection (the read connections are kept and reused), by its SQL. */
export function preparedOn(db: Database.Database, sql: string, make: (db: Database.Database) => Database.Statement): Database.Statement {
  let statements = preparedStatements.get(db);
  if (!statements) preparedStatements.set(db, (statements = new Map<string, Database.Statement>()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = make(db)));
  return statement;
}

const preparedStatements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * The one read of a session's whole projected window (every route that answers it: the window in
 * format `events` and `openai`). Finds the session's row and hands `visit` its window rows in
 * window order, page by page ({@link WindowRowsOptions.rowsPerPage} rows, default
 * {@link WINDOW_ROWS_PER_PAGE}), every page of the same snapshot of the read models as the session's
 * row: read through `ReadModelStore.pagedSnapshot` (its own read-only connection holding one read
 * transaction), with a turn of the event loop ({@link nextTurn}) after each page, so projector
 * commits between pages (appends, a compaction, an erasure) never mix into the answer. First the
 * keys of the rows (four integers a row, no event text, a page at a time) sorted into window order,
 * then each page's rows by rowid, so no page sorts the session's rows again (see
 * {@link windowRowPages}). With the read models in memory
 * (tests: no second connection) every page is read at once, without turns.
 * `visit` gets each page's rows (a fresh array, the caller may keep them) and their window order
 * index of the first (`offset`); it may be async (awaited before the next page).
 * Resolves to the session's row, or null (and `visit` is never called) when the session is unknown
 * or another tenant's (→ 404). Rejects with SQLite's errors (e.g. a damaged file) or what `visit` throws.
 */
export async function readWindowRows(
  store: ReadModelStore,
  tenantId: string,
  sessionId: string,
  visit: (rows: WindowRow[], offset: number) => void | Promise<void>,
  options: WindowRowsOptions = {},
): Promise<SessionRow | null> {
  let offset = 0;
  return readWindowPages(
    store,
    tenantId,
    sessionId,
    readRows,
    async (rows) => {
      await visit(rows, offset);
      offset += rows.length;
    },
    options,
  );
}

/**
 * {@link readWindowRows} with each page read by `readPage` instead of as rows (the window answer's
 * JSON is built by SQLite, `getWindowJson`): the same snapshot, pages, order and turns of the
 * event loop; `visit` gets what `readPage` returned for each page, in window order.
 * Resolves to the session's row, or null (`visit` never called). Rejects as {@link readWindowRows}.
 */
export async function readWindowPages<T>(
  store: ReadModelStore,
  tenantId: string,
  sessionId: string,
  readPage: WindowPageReader<T>,
  visit: (page: T) => void | Promise<void>,
  options: WindowRowsOptions = {},
): Promise<SessionRow | null> {
  return store.pagedSnapshot(async (db, paged) => {
    const session = findSession({ db }, tenantId, sessionId);
    if (!session) return null;
    const steps = windowPages(db, session.sessionKey, readPage, options);
    // In memory (one connection, no snapshot across turns) every step is done before the first page is visited (visit may await).
    for (const step of paged ? steps : [...steps]) {
      if (step !== undefined) await visit(step);
      // A turn after each step: the iterator does the next when asked for it.
      if (paged) await nextTurn();
    }
    return session;
  });
}

/**
 * The window rows of the session `sessionKey` on `db`, in window order, in steps of at most
 * `perPage` rows each (see {@link windowPages}). All steps must see one snapshot: inside one
 * transaction, or all done without a turn of the event loop in between.
 */
export function windowRowPages(db: Database.Database, sessionKey: string, perPage = WINDOW_ROWS_PER_PAGE): Generator<WindowRow[] | undefined, void, undefined> {
  return windowPages(db, sessionKey, readRows, { rowsPerPage: perPage });
}

/**
 * The pages of the session `sessionKey`'s window on `db`, in window order, each read by `readPage`,
 * in steps done when asked for: first the keys of its window rows, `rowsPerPage` at a time (each
 * step `undefined`; one statement iterated: `db` must not run another meanwhile), sorted into the
 * window order when all are read, then one page per step: at most `rowsPerPage` rows (default
 * {@link WINDOW_ROWS_PER_PAGE}) and `pageBytes` bytes of stored event JSON (default
 * {@link WINDOW_PAGE_BYTES}; a first event larger than that is a page alone), an event larger than
 * `aloneBytes` a page alone. All steps must see
 * one snapshot: inside one transaction, or all done without a turn of the event loop in between.
 */
export function* windowPages<T>(
  db: Database.Database,
  sessionKey: string,
  readPage: WindowPageReader<T>,
  options: WindowRowsOptions = {},
): Generator<T | undefined, void, undefined> {
  const perPage = Math.max(1, Math.floor(options.rowsPerPage ?? WINDOW_ROWS_PER_PAGE));
  const pageBytes = Math.max(1, options.pageBytes ?? WINDOW_PAGE_BYTES);
  const rowid: number[] = [];
  const anchor: number[] = [];
  const place: number[] = [];
  const revision: number[] = [];
  const bytes: number[] = [];
  const keys = preparedOn(db, WINDOW_KEYS, (on) => on.prepare(WINDOW_KEYS).raw());
  for (const [r, a, p, v, b] of keys.iterate(sessionKey) as IterableIterator<[number, number, number, number, number]>) {
    rowid.push(r);
    anchor.push(a);
    place.push(p);
    revision.push(v);
    bytes.push(b);
    if (rowid.length % perPage === 0) yield undefined;
  }
  // Revisions are below 2^53: exact as numbers.
  const order = Array.from(rowid.keys()).sort((i, j) => anchor[i] - anchor[j] || place[i] - place[j] || revision[i] - revision[j]);
  const aloneBytes = options.aloneBytes ?? Infinity;
  for (let from = 0; from < order.length;) {
    let to = from + 1;
    let size = bytes[order[from]];
    if (size <= aloneBytes)
      while (to < order.length && to - from < perPage && bytes[order[to]] <= aloneBytes && size + bytes[order[to]] <= pageBytes) size += bytes[order[to++]];
    yield readPage(
      db,
      order.slice(from, to).map((i) => rowid[i]),
      size,
    );
    from = to;
  }
}

/** The window rows of `rowids` (rowids of one session's window rows, in window order), in that order. */
function readRows(db: Database.Database, rowids: number[]): WindowRow[] {
  const byRowid = preparedOn(db, WINDOW_ROWS_BY_ROWID, (on) => on.prepare(WINDOW_ROWS_BY_ROWID).safeIntegers(true));
  const rows = new Array<WindowRow>(rowids.length);
  // `at` is left on the row (an unused member): deleting it would make every row a slower dictionary object.
  for (const row of byRowid.all(JSON.stringify(rowids)) as Array<WindowRow & { at: bigint }>) rows[Number(row.at)] = row;
  return rows;
}
