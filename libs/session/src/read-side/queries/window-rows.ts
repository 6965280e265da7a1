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
 * anchor else 1, revision), in no order: no event text read. Sorted in JavaScript into the window
 * order (DESIGN §3.3.4, `compareWindowEntries`: by anchor revision, a summary inserted before its
 * anchor first, then by revision; `is_summary` is 1 exactly for events of type `summary`). No index
 * holds that order (see `read-model-schema`), and SQL's `ORDER BY` would read every key in its
 * first step, in one stretch; iterated, the keys are read a page at a time.
 */
const WINDOW_KEYS = `SELECT rowid, anchor_revision, CASE WHEN is_summary = 1 AND anchor_revision <> revision THEN 0 ELSE 1 END, revision
                     FROM window_entries WHERE session_key = ?`;

/** The rows of a page of rowids (a JSON array), each with its index in that array (`at`): the order is restored from it. */
const WINDOW_ROWS_BY_ROWID = `SELECT j.key AS at, w.revision, w.anchor_revision AS anchorRevision, w.compaction_id AS compactionId,
                                     CAST(w.event_json AS BLOB) AS eventJson, w.costs_json AS costsJson, w.created_at AS createdAt
                              FROM json_each(?) AS j CROSS JOIN window_entries AS w ON w.rowid = j.value`;

/** Options of {@link readWindowRows}. */
export interface WindowRowsOptions {
  /** Rows per page (default {@link WINDOW_ROWS_PER_PAGE}, ≥ 1); tests set it small to see the pages. */
  rowsPerPage?: number;
}

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
  const perPage = Math.max(1, Math.floor(options.rowsPerPage ?? WINDOW_ROWS_PER_PAGE));
  return store.pagedSnapshot(async (db, paged) => {
    const session = findSession({ db }, tenantId, sessionId);
    if (!session) return null;
    let offset = 0;
    const steps = windowRowPages(db, session.sessionKey, perPage);
    // In memory (one connection, no snapshot across turns) every step is done before the first page is visited (visit may await).
    for (const step of paged ? steps : [...steps]) {
      if (step) {
        await visit(step, offset);
        offset += step.length;
      }
      // A turn after each step: the iterator does the next when asked for it.
      if (paged) await nextTurn();
    }
    return session;
  });
}

/**
 * The window rows of the session `sessionKey` on `db`, in window order, in steps of at most
 * `perPage` rows each, done when asked for: first the keys of its window rows, `perPage` at a time
 * (each step `undefined`; one statement iterated: `db` must not run another meanwhile), sorted into
 * the window order when all are read, then the rows a page at a time (each step the page's rows,
 * one statement by rowid). All steps must see one snapshot: inside one transaction, or all done
 * without a turn of the event loop in between.
 */
export function* windowRowPages(
  db: Database.Database,
  sessionKey: string,
  perPage = WINDOW_ROWS_PER_PAGE,
): Generator<WindowRow[] | undefined, void, undefined> {
  const rowid: number[] = [];
  const anchor: number[] = [];
  const place: number[] = [];
  const revision: number[] = [];
  for (const [r, a, p, v] of db.prepare(WINDOW_KEYS).raw().iterate(sessionKey) as IterableIterator<[number, number, number, number]>) {
    rowid.push(r);
    anchor.push(a);
    place.push(p);
    revision.push(v);
    if (rowid.length % perPage === 0) yield undefined;
  }
  // Revisions are below 2^53: exact as numbers.
  const order = Array.from(rowid.keys()).sort((i, j) => anchor[i] - anchor[j] || place[i] - place[j] || revision[i] - revision[j]);
  const rowids = order.map((i) => rowid[i]);
  const byRowid = db.prepare(WINDOW_ROWS_BY_ROWID).safeIntegers(true);
  for (let from = 0; from < rowids.length; from += perPage) yield readPage(byRowid, rowids.slice(from, from + perPage));
}

/** The window rows of `rowids` (rowids of one session's window rows, in window order), in that order. */
function readPage(byRowid: Database.Statement, rowids: number[]): WindowRow[] {
  const rows = new Array<WindowRow>(rowids.length);
  // `at` is left on the row (an unused member): deleting it would make every row a slower dictionary object.
  for (const row of byRowid.all(JSON.stringify(rowids)) as Array<WindowRow & { at: bigint }>) rows[Number(row.at)] = row;
  return rows;
}
