import { RECALL_TENANTS_DDL, RECALL_TENANTS_TABLE } from './recall-index-tables';
import { SUMMARIZER_SPEND_DDL } from './session-summary-counts';

/**
 * DDL of the read models (DESIGN §5) kept in one SQLite file.
 *
 * Units and encodings:
 * - `position`, `revision`, `anchor_revision`, `last_position` are SQLite INTEGERs holding the
 *   store's bigint values (read them with `safeIntegers`).
 * - Times are ISO-8601 UTC strings (`Date#toISOString`), taken from the events, never from the
 *   clock of the projector: a rebuild gives identical rows.
 * - `*_json` columns hold JSON text of the payload shapes in `../events/session-stream-events`.
 *
 * Sessions are keyed by `session_key`, the stream name without `session-` (`<tenantId>.<sessionId>`,
 * see `sessionKey`): the same session id may exist in several tenants. `sessions` maps the key to
 * the public (tenant_id, session_id).
 *
 * Tables:
 * - `sessions`: one row per session stream seen, with the counts the session summary shows, kept
 *   by the projector as it applies events (since version 12; before, each summary counted them
 *   over `session_log` and `compactions`, in time proportional to the session's history):
 *   `event_count` (conversation events applied: `ConversationEventAppended` rows of `session_log`),
 *   `compaction_count`, `failed_compaction_count`, `noop_compaction_count` (rows of `compactions`
 *   with outcome `compacted`, `failed`, `noop`), and since version 18 the session's summarizer
 *   totals, `summarizer_*` and `summarizer_discarded_*` (`SUMMARIZER_SPEND_COLUMNS`: the
 *   `summarizer` figures of its `compactions` rows). An erasure deletes the row with the rest.
 * - `window_entries`: the active window of each session (the fold of `../domain/session-window`),
 *   one row per active id (unique `window_entries_by_id`). A rowid table since version 6 (it was
 *   WITHOUT ROWID, keyed by (session_key, event_id)): new rows go to the end of the table, and only
 *   the small index entry lands in a leaf per session; a WITHOUT ROWID table kept whole rows, event
 *   text included, in per-session leaves and in its interior pages (about 8 µs of the projector's
 *   ~65 µs per event, `bench/projector-cost.ts`; reading a window of 400 entries takes ~0.1 ms
 *   more of its ~1.1 ms, one rowid lookup per entry). No index on the window order (version 5 dropped
 *   `window_entries_order`): a window is read whole, through `window_entries_by_id`'s
 *   `session_key` prefix, and sorted, as fast as through the index (which cost every projected
 *   event one more B-tree page written per session and commit: about 8–14 µs per event).
 *   `first_revision` is the revision of the entry's id's earliest log row not archived yet (its own
 *   `revision` unless the id was appended again while active): an archive of the id marks the rows of
 *   that id in `session_log` between `first_revision` and `revision`, found through
 *   `session_log_by_revision`.
 * - `session_log`: every event of every session stream, keyed by global position. No index by
 *   client id (version 6 dropped `session_log_by_event_id`, about 5–15 µs of the projector's
 *   ~65–80 µs per event, `bench/projector-cost.ts --ablate`): archives find rows by revision (see
 *   `window_entries`). `recall_rows` (since version 22; NULL on nearly every row) marks an event
 *   held in several rows of a recall index (`RECALL_SEVERAL_WORD_ROWS` | `RECALL_SEVERAL_TRIGRAM_ROWS`),
 *   listed by the partial index `session_log_by_recall_rows`: recall finds a query's words across
 *   those rows (`recall-cross-chunk`); erased with the row.
 *   `session_log_by_archive` (since version 13: `archived_by`, `session_key`, `position`; since
 *   version 16 over archived rows only, `archived_by IS NOT NULL`) lists the rows a compaction
 *   archived, by compaction and session in position order: recall's `compactionId` filter, and
 *   with a paging's moment its `archived=false` filter, start from them when few rows pass them
 *   (see `recall-filter-candidates`; a query must say `archived_by IS NOT NULL` for SQLite to use
 *   the index). It costs the projector one index entry per archived event, written when the event
 *   is archived (a compaction's entries are adjacent). Versions 13–15 also listed every row not
 *   archived (`archived_by` NULL), for `archived=false`: one more index entry in a per-session
 *   leaf per projected event, about 11 of the 53 pages each commit of 9 appends wrote to the WAL
 *   (`bench/projector-cost.ts`); a session's rows not archived are those of its window entries.
 * - `recall_tenants`: a tenant's recall index id (see `recall-index-tables`), assigned on its first
 *   indexed document. Each tenant has its own two FTS5 indexes (since version 11; before, one pair
 *   for every tenant, whose BM25 statistics told a tenant about the others' words), created by the
 *   projector with the tenant's first indexed document and named by `recallIndexTables`:
 *   - `recall_fts_<id>`: FTS5 index of the tenant's conversation events and summaries; `rowid` =
 *     `session_log.position`. Its `secure-delete` option is on (set by the DDL, so also after a
 *     reset): deleting a row removes its tokens from the index segments at once (erasure), at a
 *     cost proportional to the deleted document, not to the index.
 *   - `recall_trigram_<id>`: a second FTS5 index (trigram tokenizer, `secure-delete` on) of the
 *     tenant's documents that contain characters of scripts written without spaces (Han,
 *     Hiragana, Katakana, Thai, Lao, Khmer, Myanmar), Korean, or emoji; `rowid` =
 *     `session_log.position`. unicode61 cannot split such text into words (it indexes a whole run
 *     as one token, and emoji not at all), so recall searches queries containing those characters
 *     here, as substrings (see `recall-match-expression`).
 * - `compactions`: one row per CompactionCompleted / CompactionFailed; `compactions_by_revision`
 *   finds a session's last recorded pass (the summary's `triggerStillFires`) without reading the others.
 * - `erasures` (since version 19): one row per erasure record (`SessionErased` of an
 *   `erasure-<tenant>` stream), keyed by its global position: the tenant, session id, `erased_at`,
 *   `erased_events`, and the life it closes, `last_revision` (NULL for records written before they
 *   named it) and `first_revision` (the revision after the last one of the session id's previous
 *   erased life, 0 for its first; NULL without `last_revision`), and since version 23
 *   `requested_by_json`, who ordered it (the record's `requestedBy` as JSON text, never the API key;
 *   NULL for records written before they kept it). No content: what an auditor may see
 *   of an erasure (`GET /v1/erasures`, the 404 of an erased session's summary). Rows are never
 *   deleted (the records stay in the log); a rebuild gives the same rows. `erasures_by_session`
 *   finds a session id's latest erasure.
 * - `projector_checkpoints`: the last global position applied, per projector, and `event`, what
 *   identifies the event at that position in the log it was projected from (see
 *   `checkpointEventIdentity`; NULL at position 0, and in files written before it was recorded: the
 *   column is added to them on open, and filled at the next checkpoint). Start-up and the projector
 *   compare it with the store's event at that position, so read models of another log (a store
 *   restored from a backup and written again, another database) are refused.
 * - `read_model_rebuild`: one row while the read models are rebuilt from the log (after an upgrade
 *   changed their version, or `npm run rebuild-read-models`): why and since when; removed when the
 *   rebuild reaches the log's head. A rebuild interrupted (killed, stopped) leaves it, so the next
 *   start says it finishes that rebuild.
 */

/**
 * Bumped when the DDL, or what the tables hold, changes (4: recall documents folded with NFKC; 5: no
 * `window_entries_order`; 6: `window_entries` a rowid table with `first_revision`, no
 * `session_log_by_event_id`; 7: a NUL of a recall document indexed as U+2400, so snippets go on past
 * it; 8: recall documents hold an assistant's refusal and the tool call ids; 9: the word index holds a
 * script boundary (`RECALL_SCRIPT_BOUNDARY`, see `wordIndexText`) between text of a script written
 * without spaces, or Korean, and adjacent letters or digits of another script, so `XK42Q9` is a word of
 * `号码是XK42Q9`); 10: the trigram index holds documents with Korean text too, so `서울` is found in
 * `서울에서`); 11: each tenant has its own recall indexes (`recall_tenants`, `recall_fts_<id>`,
 * `recall_trigram_<id>`) instead of `recall_fts` and `recall_trigram` shared by all, so BM25 and
 * recall's row counts never count another tenant's texts); 12: `sessions` holds the summary's counts
(`event_count`, `compaction_count`, `failed_compaction_count`, `noop_compaction_count`), and
`compactions_by_revision`); 13: `session_log_by_archive`, so recall's `archived=false` (with
 * `sessionId`) and `compactionId` filters read the rows they pass, not every match of the
 * session); 14: the recall indexes hold the first 16,384 / 262,144 code points of each document
 * (UTF-16 code units before, so half as much text of emoji or supplementary ideographs), emoji
 * are not folded by NFKC (`‼️` stayed `!!`), and documents holding flags, keycaps or skin tones
 * alone are in the trigram index too (`recallFold`, `hasUnspacedScript`, `recall-searchable`); 15:
 * the word index keeps combining marks in their words (`WORD_TOKENIZER`: Hindi's vowel signs no
 * longer separate), separates words at every change of script (`wordIndexText`: `заказаRU5566` is
 * `заказа` `RU5566`), and recall documents are folded without default-ignorable code points but
 * those of emoji (`withoutDefaultIgnorables`: `zero\u200Bwidth` is `zerowidth`); 16: recall's
 * script rules are the extractive summarizer's (`scriptChanges`, `SPACELESS_LETTER` of
 * `@lib/compaction`): the modifier letter apostrophe `ʼ` is part of its word (`donʼt` was `don` `ʼ`
 * `t`), and the trigram index holds texts by letters of the scripts without spaces, by script
 * extension (`ー`, `〱` count; their decimal digits, punctuation and symbols, `๑๒๓`, `฿`, `๚`, no
 * longer), and `session_log_by_archive` holds archived rows only (recall's `archived=false` finds a
 * session's rows not archived through its window entries); 17: `session_log.created_at` holds UTC
 * text with 9 fraction digits (`utcExactTime`; milliseconds before), so recall's `from`/`to` compare
 * a client's sub-millisecond `createdAt` exactly, and `window_entries.created_at` holds UTC text
 * with milliseconds (`utcMillisTime`; the text as sent before); 18: `sessions` holds the session's
 * summarizer totals (`SUMMARIZER_SPEND_COLUMNS`, summed from its decisions, for the session
 * summary's `summarizerSpend`); 19: `erasures`, the erasure records without content; 20: an
 * assistant event stored without `text` is held with `text: null` in `window_entries.event_json`
 * and `session_log.data_json` (`withTextField`, the shape every read answers); 21: every character
 * of a recall document is indexed, a long one in overlapping rows (`recall-chunks`); 22:
 * `session_log.recall_rows` marks the events of several rows of a recall index (and
 * `session_log_by_recall_rows` lists them), so a query's words are found across an event's rows; 23:
 * `erasures.requested_by_json`, who ordered each erasure (the record's `requestedBy`), so `GET
 * /v1/erasures` shows it also for erasures projected before (the rebuild reads it from the log); 24:
 * the word index holds a boundary between a word and a symbol SQLite's Unicode tables took for a
 * word character, after a combining mark with no letter before it and before a keycap
 * (`glueBoundaries`: `👍🏽kiwi` is `👍🏽` `kiwi`, `100₽` is `100` `₽`, `᾽kiwi` and `kiwi1️⃣` hold
 * `kiwi`); 25: a session's summarizer totals leave out the extractive summarizer's passes (it calls
 * no endpoint; each counted 1 call); a store opened
 * with another version is dropped and rebuilt from the log.
 */
export const READ_MODEL_SCHEMA_VERSION = 25;

/**
 * Every table the read models own, in drop order, but the tenants' recall indexes (found with
 * `recallIndexTablesIn`, dropped first).
 */
export const READ_MODEL_TABLES = [
  RECALL_TENANTS_TABLE,
  'compactions',
  'erasures',
  'window_entries',
  'session_log',
  'sessions',
  'projector_checkpoints',
  'read_model_rebuild',
] as const;

/** Tables of earlier versions no longer made (`recall_fts`, `recall_trigram`: one index of every tenant, until version 10), dropped by a reset. */
export const RETIRED_READ_MODEL_TABLES = ['recall_fts', 'recall_trigram'] as const;

/** Creates every read-model table (idempotent: `IF NOT EXISTS`). */
export const READ_MODEL_DDL = `
CREATE TABLE IF NOT EXISTS sessions (
  session_key    TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL,
  session_id     TEXT NOT NULL,
  user_id        TEXT,
  revision       INTEGER NOT NULL,
  last_position  INTEGER NOT NULL,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  event_count              INTEGER NOT NULL DEFAULT 0,
  compaction_count         INTEGER NOT NULL DEFAULT 0,
  failed_compaction_count  INTEGER NOT NULL DEFAULT 0,
  noop_compaction_count    INTEGER NOT NULL DEFAULT 0,
  ${SUMMARIZER_SPEND_DDL}
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_by_id ON sessions (tenant_id, session_id);
CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (tenant_id, user_id);
CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions (tenant_id, last_position);

CREATE TABLE IF NOT EXISTS window_entries (
  session_key      TEXT NOT NULL,
  event_id         TEXT NOT NULL,
  revision         INTEGER NOT NULL,
  first_revision   INTEGER NOT NULL,
  anchor_revision  INTEGER NOT NULL,
  is_summary       INTEGER NOT NULL,
  compaction_id    TEXT,
  event_json       TEXT NOT NULL,
  costs_json       TEXT NOT NULL,
  created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS window_entries_by_id ON window_entries (session_key, event_id);

CREATE TABLE IF NOT EXISTS session_log (
  position       INTEGER PRIMARY KEY,
  session_key    TEXT NOT NULL,
  revision       INTEGER NOT NULL,
  store_event_id TEXT NOT NULL,
  type           TEXT NOT NULL,
  event_id       TEXT,
  kind           TEXT,
  compaction_id  TEXT,
  archived       INTEGER,
  archived_by    TEXT,
  data_json      TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  recorded_at    TEXT NOT NULL,
  recall_rows    INTEGER
);
CREATE INDEX IF NOT EXISTS session_log_by_recall_rows ON session_log (position) WHERE recall_rows IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS session_log_by_revision ON session_log (session_key, revision);
CREATE INDEX IF NOT EXISTS session_log_by_compaction ON session_log (session_key, compaction_id) WHERE compaction_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS session_log_policies ON session_log (session_key, revision) WHERE type = 'AutoCompactionPolicySet';
CREATE INDEX IF NOT EXISTS session_log_by_archive ON session_log (archived_by, session_key, position) WHERE archived_by IS NOT NULL;

${RECALL_TENANTS_DDL}

CREATE TABLE IF NOT EXISTS compactions (
  session_key        TEXT NOT NULL,
  compaction_id      TEXT NOT NULL,
  outcome            TEXT NOT NULL,
  revision           INTEGER NOT NULL,
  position           INTEGER NOT NULL,
  at                 TEXT NOT NULL,
  data_json          TEXT NOT NULL,
  archived_ids_json  TEXT NOT NULL,
  summary_json       TEXT,
  PRIMARY KEY (session_key, compaction_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS compactions_by_revision ON compactions (session_key, revision);

CREATE TABLE IF NOT EXISTS erasures (
  position        INTEGER PRIMARY KEY,
  tenant_id       TEXT NOT NULL,
  session_id      TEXT NOT NULL,
  erased_at       TEXT NOT NULL,
  erased_events   INTEGER NOT NULL,
  first_revision  INTEGER,
  last_revision   INTEGER,
  requested_by_json TEXT
);
CREATE INDEX IF NOT EXISTS erasures_by_tenant ON erasures (tenant_id, position);
CREATE INDEX IF NOT EXISTS erasures_by_session ON erasures (tenant_id, session_id, position);

CREATE TABLE IF NOT EXISTS projector_checkpoints (
  projector  TEXT PRIMARY KEY,
  position   INTEGER NOT NULL,
  event      TEXT
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS read_model_rebuild (
  only        INTEGER PRIMARY KEY CHECK (only = 1),
  reason      TEXT NOT NULL,
  started_at  TEXT NOT NULL
);
`;
