import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@lib/event-store';
import { withTextField, type SessionEvent } from '@lib/compaction';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  SESSION_STREAM_PREFIX,
  SUMMARY_INSERTED,
  type CompactionCompletedData,
  type CompactionFailedData,
  type ConversationEventData,
  type EventsArchivedData,
  type SummaryInsertedData,
} from '../events/session-stream-events';
import { ALL_ROWS, type ErasedRows, type SessionErasedData } from '../events/erasure-events';
import { requestedByOf } from '../events/requested-by';
import { summaryAnchorRevision, type AnchorLookup } from '../domain/summary-anchor';
import { toIsoTime } from './iso-time';
import { utcExactTime, utcMillisTime } from '../domain/utc-time-text';
import { MalformedEventError } from './malformed-event-error';
import { RECALL_WORD_CHUNK_LENGTH, recallDocument } from './recall-document';
import { hasUnspacedScript, RECALL_TRIGRAM_CHUNK_LENGTH } from './unspaced-script';
import { RECALL_SEVERAL_TRIGRAM_ROWS, RECALL_SEVERAL_WORD_ROWS, recallChunks, recallRowid } from './recall-chunks';
import { wordIndexText } from './script-boundary';
import { createdTenantRecallIndexTables, tenantRecallIndexTables, type RecallIndexConnection } from './recall-index-tables';
import { MAX_CACHED_STATEMENTS } from './read-model-store';
import { SessionSummaryCounts } from './session-summary-counts';
import { eraseSessionRecallRows } from './recall-erasure';
import { objectJson } from './object-json';

/** Tenant of sessions whose stream key and metadata name none. */
export const DEFAULT_TENANT_ID = 'default';

/**
 * Writes the rows of one session-stream event into every read model (see `./read-model-schema`).
 * It never opens a transaction itself: the projector calls {@link apply} inside the transaction
 * that also moves the checkpoint.
 *
 * The active window follows `evolveSessionWindow` (`../domain/session-window`) exactly: a
 * conversation event (re)enters the window at its own revision; `EventsArchived` removes ids;
 * a summary enters anchored at the anchor of the event it was inserted before (or that event's
 * revision when it is no longer active, or its own revision when the id is unknown).
 *
 * Archived flags of the log: archiving an id marks every row of that id not archived yet. Such
 * rows exist only while the id is active, and lie between its entry's `first_revision` and
 * `revision` (an id appended again while active keeps its `first_revision`), so an archive finds
 * them by revision, without an index by client id.
 *
 * A session whose stream restarts (an event with a revision not after the last one projected,
 * which happened when a store reused a deleted stream's revisions) is erased first, so the read
 * models hold only the live stream, as a rebuild would. Stores now continue a deleted stream's
 * revisions (`EventStore.deleteStream`): there the erasure record's last revision tells the erased
 * events from those of the session written again ({@link SessionReadModelWriter.eraseSession}).
 */
export class SessionReadModelWriter {
  private readonly stmts;
  /** The session summary's counts on the `sessions` rows. */
  private readonly counts: SessionSummaryCounts;
  /** Statements naming a tenant's recall tables, prepared once per SQL text (at most {@link MAX_CACHED_STATEMENTS}, then the cache starts over). */
  private readonly statements = new Map<string, Database.Statement>();
  /** The connection as `recall-index-tables` uses it, statements from {@link statements}. */
  private readonly cached: RecallIndexConnection = {
    prepare: (sql) => {
      let statement = this.statements.get(sql);
      if (!statement) {
        if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
        statement = this.db.prepare(sql);
        this.statements.set(sql, statement);
      }
      return statement;
    },
    exec: (sql) => this.db.exec(sql),
  };

  constructor(private readonly db: Database.Database) {
    this.counts = new SessionSummaryCounts(db);
    const s = (sql: string) => db.prepare(sql);
    this.stmts = {
      session: s('SELECT revision, tenant_id AS tenantId FROM sessions WHERE session_key = ?').safeIntegers(true),
      tenantOf: s('SELECT tenant_id AS tenantId FROM sessions WHERE session_key = ?'),
      keyOf: s('SELECT session_key AS key FROM sessions WHERE tenant_id = ? AND session_id = ?'),
      countLogBefore: s('SELECT count(*) AS n FROM session_log WHERE session_key = ? AND position < ?'),
      logFrom: s(
        'SELECT position, revision, store_event_id AS id, type, data_json AS data, recorded_at AS recordedAt FROM session_log WHERE session_key = ? AND position >= ? ORDER BY position',
      ).safeIntegers(true),
      countLogUpToRevision: s('SELECT count(*) AS n FROM session_log WHERE session_key = ? AND revision <= ?'),
      logAfterRevision: s(
        'SELECT position, revision, store_event_id AS id, type, data_json AS data, recorded_at AS recordedAt FROM session_log WHERE session_key = ? AND revision > ? ORDER BY position',
      ).safeIntegers(true),
      insertSession: s(
        'INSERT INTO sessions (session_key, tenant_id, session_id, user_id, revision, last_position, created_at, updated_at, event_count) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)',
      ),
      // `event_count` moves with the row (one statement per event, not two): see SessionSummaryCounts.
      updateSession: s('UPDATE sessions SET revision = ?, last_position = ?, updated_at = ?, event_count = event_count + ? WHERE session_key = ?'),
      setUser: s('UPDATE sessions SET user_id = ? WHERE session_key = ? AND user_id IS NULL'),
      insertLog: s(
        `INSERT INTO session_log (position, session_key, revision, store_event_id, type, event_id, kind, compaction_id, archived, archived_by, data_json, created_at, recorded_at)
         VALUES (@position, @sessionKey, @revision, @storeEventId, @type, @eventId, @kind, @compactionId, @archived, NULL, @dataJson, @createdAt, @recordedAt)`,
      ),
      archiveLog: s(
        'UPDATE session_log SET archived = 1, archived_by = ? WHERE session_key = ? AND revision BETWEEN ? AND ? AND event_id = ? AND archived = 0',
      ),
      // An id appended again while active keeps its first_revision: its earlier rows are still not archived.
      upsertWindow: s(
        `INSERT INTO window_entries (session_key, event_id, revision, first_revision, anchor_revision, is_summary, compaction_id, event_json, costs_json, created_at)
         VALUES (@sessionKey, @eventId, @revision, @revision, @anchorRevision, @isSummary, @compactionId, @eventJson, @costsJson, @createdAt)
         ON CONFLICT (session_key, event_id) DO UPDATE SET revision = excluded.revision, anchor_revision = excluded.anchor_revision,
           is_summary = excluded.is_summary, compaction_id = excluded.compaction_id, event_json = excluded.event_json,
           costs_json = excluded.costs_json, created_at = excluded.created_at`,
      ),
      deleteWindow: s('DELETE FROM window_entries WHERE session_key = ? AND event_id = ? RETURNING first_revision AS first, revision AS last').safeIntegers(
        true,
      ),
      windowAnchor: s('SELECT anchor_revision AS anchor FROM window_entries WHERE session_key = ? AND event_id = ?').safeIntegers(true),
      decisionsOf: s('SELECT type, data_json FROM session_log WHERE session_key = ? AND compaction_id = ? AND type IN (?, ?) ORDER BY revision'),
      upsertCompaction: s(
        `INSERT OR REPLACE INTO compactions (session_key, compaction_id, outcome, revision, position, at, data_json, archived_ids_json, summary_json)
         VALUES (@sessionKey, @compactionId, @outcome, @revision, @position, @at, @dataJson, @archivedIdsJson, @summaryJson)`,
      ),
      eraseLog: s('DELETE FROM session_log WHERE session_key = ?'),
      eraseWindow: s('DELETE FROM window_entries WHERE session_key = ?'),
      eraseCompactions: s('DELETE FROM compactions WHERE session_key = ?'),
      eraseSession: s('DELETE FROM sessions WHERE session_key = ?'),
      lifeBefore: s('SELECT max(last_revision) AS last FROM erasures WHERE tenant_id = ? AND session_id = ? AND last_revision < ?').safeIntegers(true),
      insertErasure: s(
        `INSERT OR REPLACE INTO erasures (position, tenant_id, session_id, erased_at, erased_events, first_revision, last_revision, requested_by_json)
         VALUES (@position, @tenantId, @sessionId, @erasedAt, @erasedEvents, @firstRevision, @lastRevision, @requestedByJson)`,
      ),
    };
  }

  /**
   * Keeps the erasure record `recorded` (a `SessionErased` of tenant `tenantId`'s erasure stream)
   * as a row of `erasures`, without content: session id, `erasedAt`, `erasedEvents` and the life it
   * closes (`lastRevision`; `firstRevision`, the revision after the session id's previous erased
   * life's last, 0 for its first; both null for a record without `lastRevision`). Idempotent
   * (keyed by the record's position). Call inside the projector's transaction, in log order. A
   * record without `erasedAt` (none is written so) gets the time the store recorded it, one without
   * `erasedEvents` 0: the erasure it records is applied anyway, and its row never stops the projector.
   * Who ordered it (`requestedBy`, its known fields only, see `requestedByOf`) is kept as JSON text,
   * NULL for a record without it.
   * @throws MalformedEventError when the record names no `sessionId`; SyntaxError when
   *   `lastRevision` is not a decimal integer (as `erasedRowsOf` does for its erasure).
   */
  recordErasure(tenantId: string, recorded: RecordedEvent): void {
    const data = recorded.data as Partial<SessionErasedData> | null;
    if (typeof data?.sessionId !== 'string') throw new MalformedEventError(recorded.streamId, recorded.position, 'data.sessionId is required');
    const last = data.lastRevision === undefined ? null : BigInt(data.lastRevision);
    const requestedBy = requestedByOf(data.requestedBy);
    const before = last === null ? undefined : (this.stmts.lifeBefore.get(tenantId, data.sessionId, last) as { last: bigint | null } | undefined);
    this.stmts.insertErasure.run({
      position: recorded.position,
      tenantId,
      sessionId: data.sessionId,
      erasedAt: typeof data.erasedAt === 'string' ? data.erasedAt : toIsoTime(recorded.created),
      erasedEvents: typeof data.erasedEvents === 'number' ? data.erasedEvents : 0,
      firstRevision: last === null ? null : before?.last == null ? 0n : before.last + 1n,
      lastRevision: last,
      requestedByJson: requestedBy && JSON.stringify(requestedBy),
    });
  }

  /**
   * Applies one event. Events of streams not named `session-…` are ignored (returns false).
   * @throws MalformedEventError when a payload lacks a field the projection needs.
   */
  apply(recorded: RecordedEvent): boolean {
    if (!recorded.streamId.startsWith(SESSION_STREAM_PREFIX)) return false;
    const sessionKey = recorded.streamId.slice(SESSION_STREAM_PREFIX.length);
    const recordedAt = toIsoTime(recorded.created);
    const recordedExact = exactOfRecordedAt(recorded.created, recordedAt);
    const tenantId = this.touchSession(sessionKey, recorded, recordedAt);

    const log = {
      position: recorded.position,
      sessionKey,
      revision: recorded.revision,
      storeEventId: recorded.id,
      type: recorded.type,
      eventId: null as string | null,
      kind: null as string | null,
      compactionId: null as string | null,
      archived: null as number | null,
      // A conversation event's data is serialised below from its payload's and costs' JSON (written on their own too).
      dataJson: recorded.type === CONVERSATION_EVENT ? '' : JSON.stringify(recorded.data ?? null),
      createdAt: recordedExact,
      recordedAt,
    };
    const fail = (reason: string) => new MalformedEventError(recorded.streamId, recorded.position, reason);

    switch (recorded.type) {
      case CONVERSATION_EVENT: {
        const data = recorded.data as ConversationEventData | null;
        const stored = data?.event;
        if (!stored || typeof stored.id !== 'string' || typeof stored.type !== 'string') throw fail('data.event.id and data.event.type are required');
        // The event in the one shape every read answers, in the window and in the log (an assistant stored without text: text null).
        const event = withTextField(stored);
        if (!data.costs || typeof data.costs !== 'object') throw fail('data.costs is required');
        const eventJson = JSON.stringify(event);
        const costsJson = JSON.stringify(data.costs);
        const dataJson = objectJson(data, { event: eventJson, costs: costsJson });
        Object.assign(log, { eventId: event.id, kind: event.type, archived: 0, dataJson, createdAt: clientTimeOr(data.createdAt, recordedExact) });
        this.stmts.insertLog.run(log);
        this.stmts.upsertWindow.run({
          sessionKey,
          eventId: event.id,
          revision: recorded.revision,
          anchorRevision: recorded.revision,
          isSummary: event.type === 'summary' ? 1 : 0,
          compactionId: null,
          eventJson,
          costsJson,
          createdAt: data.createdAt == null ? recordedAt : utcMillisTime(String(data.createdAt)),
        });
        this.index(tenantId, recorded.position, recallDocument(event));
        if (typeof data.userId === 'string' && data.userId) this.stmts.setUser.run(data.userId, sessionKey);
        break;
      }
      case EVENTS_ARCHIVED: {
        const data = recorded.data as EventsArchivedData | null;
        if (!data || typeof data.compactionId !== 'string' || !Array.isArray(data.archivedIds))
          throw fail('data.compactionId and data.archivedIds are required');
        log.compactionId = data.compactionId;
        this.stmts.insertLog.run(log);
        for (const id of data.archivedIds) {
          // The id's rows not archived yet are those of its active entry, from its first to its last revision.
          const entry = this.stmts.deleteWindow.get(sessionKey, id) as { first: bigint; last: bigint } | undefined;
          if (entry) this.stmts.archiveLog.run(data.compactionId, sessionKey, entry.first, entry.last, id);
        }
        break;
      }
      case SUMMARY_INSERTED: {
        const data = recorded.data as SummaryInsertedData | null;
        if (!data || typeof data.compactionId !== 'string' || typeof data.summaryId !== 'string')
          throw fail('data.compactionId and data.summaryId are required');
        const anchor = summaryAnchorRevision(data, this.anchorLookup(sessionKey), recorded.revision);
        const event: SessionEvent = { id: data.summaryId, type: 'summary', shadowPrompt: data.shadowPrompt, text: data.text };
        Object.assign(log, {
          eventId: data.summaryId,
          kind: 'summary',
          compactionId: data.compactionId,
          archived: 0,
          createdAt: clientTimeOr(data.createdAt, recordedExact),
        });
        this.stmts.insertLog.run(log);
        this.stmts.upsertWindow.run({
          sessionKey,
          eventId: data.summaryId,
          revision: recorded.revision,
          anchorRevision: anchor,
          isSummary: 1,
          compactionId: data.compactionId,
          eventJson: JSON.stringify(event),
          costsJson: JSON.stringify(data.costs),
          createdAt: data.createdAt == null ? recordedAt : utcMillisTime(String(data.createdAt)),
        });
        this.index(tenantId, recorded.position, recallDocument(event));
        break;
      }
      case COMPACTION_COMPLETED:
      case COMPACTION_FAILED: {
        const data = recorded.data as CompactionCompletedData | CompactionFailedData | null;
        if (!data || typeof data.compactionId !== 'string') throw fail('data.compactionId is required');
        log.compactionId = data.compactionId;
        this.stmts.insertLog.run(log);
        this.recordCompaction(sessionKey, recorded, data, recordedAt);
        break;
      }
      default:
        this.stmts.insertLog.run(log);
        break;
    }
    return true;
  }

  /**
   * Deletes the rows of the session `sessionId` of `tenantId` from every read model (erasure):
   * those `rows` names (see {@link ErasedRows}; default all of them). With a bound (the life an
   * erasure record closes, by revision; or, for records without `lastRevision`, a position), only
   * what the events within it made: when the session was written again after its deletion and
   * those later events were projected before the record, the session is erased and its later
   * events (kept in `session_log` with their stored data) applied again, so the rows (log, window,
   * recall index, compactions, the sessions list's row) equal what a rebuild from the log gives.
   * Call inside a transaction. Returns false when nothing was erased.
   */
  eraseSession(tenantId: string, sessionId: string, rows: ErasedRows = ALL_ROWS): boolean {
    let erased = false;
    for (const { key } of this.stmts.keyOf.all(tenantId, sessionId) as Array<{ key: string }>) {
      if (rows.kind === 'all') {
        this.eraseSessionKey(key);
        erased = true;
        continue;
      }
      const within =
        rows.kind === 'upToRevision' ? this.stmts.countLogUpToRevision.get(key, rows.lastRevision) : this.stmts.countLogBefore.get(key, rows.before);
      if ((within as { n: number }).n === 0) continue;
      const later = (
        rows.kind === 'upToRevision' ? this.stmts.logAfterRevision.all(key, rows.lastRevision) : this.stmts.logFrom.all(key, rows.before)
      ) as LoggedEvent[];
      this.eraseSessionKey(key);
      erased = true;
      const streamId = `${SESSION_STREAM_PREFIX}${key}`;
      for (const e of later) {
        const data: unknown = JSON.parse(e.data);
        this.apply({
          streamId,
          revision: e.revision,
          position: e.position,
          id: e.id,
          type: e.type,
          data,
          metadata: { tenantId, sessionId },
          created: new Date(e.recordedAt),
        });
      }
    }
    return erased;
  }

  private eraseSessionKey(sessionKey: string): void {
    const session = this.stmts.tenantOf.get(sessionKey) as { tenantId: string } | undefined;
    const tables = session && tenantRecallIndexTables(this.cached, session.tenantId);
    // Every chunk of each of the session's events, by the cheaper way for its share of each index (see `recall-erasure`).
    if (tables) for (const kind of ['words', 'trigrams'] as const) eraseSessionRecallRows(this.cached, tables[kind], kind, sessionKey);
    this.stmts.eraseLog.run(sessionKey);
    this.stmts.eraseWindow.run(sessionKey);
    this.stmts.eraseCompactions.run(sessionKey);
    this.stmts.eraseSession.run(sessionKey);
  }

  /**
   * Creates or moves the session's `sessions` row, counting `recorded` in its `event_count` when
   * it is a conversation event (the count SessionSummaryCounts documents); returns its tenant.
   */
  private touchSession(sessionKey: string, recorded: RecordedEvent, recordedAt: string): string {
    const counted = recorded.type === CONVERSATION_EVENT ? 1 : 0;
    let row = this.stmts.session.get(sessionKey) as { revision: bigint; tenantId: string } | undefined;
    if (row && recorded.revision <= row.revision) {
      this.eraseSessionKey(sessionKey);
      row = undefined;
    }
    if (row) {
      this.stmts.updateSession.run(recorded.revision, recorded.position, recordedAt, counted, sessionKey);
      return row.tenantId;
    }
    const { tenantId, sessionId } = sessionIdentity(sessionKey, recorded.metadata);
    this.stmts.insertSession.run(sessionKey, tenantId, sessionId, recorded.revision, recorded.position, recordedAt, recordedAt, counted);
    return tenantId;
  }

  /** The read models' answers to the summary-anchor rule's lookups (`summaryAnchorRevision`). */
  private anchorLookup(sessionKey: string): AnchorLookup {
    return {
      activeAnchor: (id) => (this.stmts.windowAnchor.get(sessionKey, id) as { anchor: bigint } | undefined)?.anchor,
    };
  }

  /**
   * Indexes `body`, the recall document of the event at `position`, in the recall indexes of
   * `tenantId` (made on its first document): its chunks (`recall-chunks`) of at most
   * {@link RECALL_WORD_CHUNK_LENGTH} code units in the word index, and those of at most
   * {@link RECALL_TRIGRAM_CHUNK_LENGTH} holding an unspaced script or emoji in the trigram index.
   */
  private index(tenantId: string, position: bigint, body: string): void {
    if (body.trim() === '') return;
    const tables = createdTenantRecallIndexTables(this.cached, tenantId);
    const words = this.cached.prepare(`INSERT INTO ${tables.words} (rowid, body) VALUES (?, ?)`);
    const wordChunks = recallChunks(body, RECALL_WORD_CHUNK_LENGTH);
    wordChunks.forEach((chunk, k) => words.run(recallRowid(position, k), wordIndexText(chunk)));
    let trigramRows = 0;
    if (hasUnspacedScript(body)) {
      const trigrams = this.cached.prepare(`INSERT INTO ${tables.trigrams} (rowid, body) VALUES (?, ?)`);
      recallChunks(body, RECALL_TRIGRAM_CHUNK_LENGTH).forEach((chunk, k) => {
        if (!hasUnspacedScript(chunk)) return;
        trigrams.run(recallRowid(position, k), chunk);
        trigramRows++;
      });
    }
    // Events of several rows in an index are listed (rare), so recall finds their words across rows.
    const several = (wordChunks.length > 1 ? RECALL_SEVERAL_WORD_ROWS : 0) | (trigramRows > 1 ? RECALL_SEVERAL_TRIGRAM_ROWS : 0);
    if (several !== 0) this.cached.prepare('UPDATE session_log SET recall_rows = ? WHERE position = ?').run(several, position);
  }

  private recordCompaction(sessionKey: string, recorded: RecordedEvent, data: CompactionCompletedData | CompactionFailedData, recordedAt: string): void {
    const archivedIds: string[] = [];
    let summary: SummaryInsertedData | null = null;
    const decisions = this.stmts.decisionsOf.all(sessionKey, data.compactionId, EVENTS_ARCHIVED, SUMMARY_INSERTED) as Array<{
      type: string;
      data_json: string;
    }>;
    for (const decision of decisions) {
      if (decision.type === EVENTS_ARCHIVED) archivedIds.push(...(JSON.parse(decision.data_json) as EventsArchivedData).archivedIds);
      else summary = JSON.parse(decision.data_json) as SummaryInsertedData;
    }
    const failed = recorded.type === COMPACTION_FAILED;
    const at = failed ? (data as CompactionFailedData).failedAt : (data as CompactionCompletedData).completedAt;
    const outcome = failed ? 'failed' : String((data as CompactionCompletedData).outcome ?? 'compacted');
    this.counts.compactionRecorded(sessionKey, data.compactionId, outcome, data, summary);
    this.stmts.upsertCompaction.run({
      sessionKey,
      compactionId: data.compactionId,
      outcome,
      revision: recorded.revision,
      position: recorded.position,
      at: typeof at === 'string' ? toIsoTime(at) : recordedAt,
      dataJson: JSON.stringify(data),
      archivedIdsJson: JSON.stringify(archivedIds),
      summaryJson: summary ? JSON.stringify(summary) : null,
    });
  }
}

/** A `session_log` row as {@link SessionReadModelWriter.eraseSession} applies it again. */
interface LoggedEvent {
  position: bigint;
  revision: bigint;
  id: string;
  type: string;
  data: string;
  recordedAt: string;
}

/**
 * The `session_log.created_at` of an event: `createdAt` (a client's time, any number of fraction
 * digits, those past the ninth ignored) as {@link utcExactTime} text (9 fraction digits), else
 * `recordedExact` (the recorded time already in that form, {@link exactOfRecordedAt}), so that
 * recall's `from`/`to` compare it exactly as text.
 */
function clientTimeOr(createdAt: string | undefined, recordedExact: string): string {
  return createdAt == null ? recordedExact : utcExactTime(String(createdAt));
}

/**
 * {@link utcExactTime} of `recordedAt`, the text {@link toIsoTime} made of `created`: for a `Date`
 * of a four-digit year that text is `Date.toISOString`'s `YYYY-MM-DDTHH:mm:ss.sssZ`, whose exact
 * form is its first 23 characters and six zeros (no parse: this runs for every projected event);
 * any other text goes through {@link utcExactTime}.
 */
export function exactOfRecordedAt(created: Date | string, recordedAt: string): string {
  return created instanceof Date && recordedAt.length === 24 ? `${recordedAt.slice(0, 23)}000000Z` : utcExactTime(recordedAt);
}

/**
 * The public identity of a session stream: `metadata.tenantId` / `metadata.sessionId`
 * (`SessionEventMetadata`) when present; otherwise parsed from the stream key
 * `<tenantId>.<sessionId>` (tenant ids hold no dot); a key without a dot is a session of
 * {@link DEFAULT_TENANT_ID}.
 */
export function sessionIdentity(sessionKey: string, metadata: unknown): { tenantId: string; sessionId: string } {
  const meta = (metadata ?? {}) as { tenantId?: unknown; sessionId?: unknown };
  const dot = sessionKey.indexOf('.');
  const parsedTenant = dot > 0 ? sessionKey.slice(0, dot) : DEFAULT_TENANT_ID;
  const tenantId = typeof meta.tenantId === 'string' && meta.tenantId !== '' ? meta.tenantId : parsedTenant;
  let sessionId: string;
  if (typeof meta.sessionId === 'string' && meta.sessionId !== '') sessionId = meta.sessionId;
  else if (sessionKey.startsWith(`${tenantId}.`)) sessionId = sessionKey.slice(tenantId.length + 1);
  else sessionId = dot > 0 ? sessionKey.slice(dot + 1) : sessionKey;
  return { tenantId, sessionId };
}
