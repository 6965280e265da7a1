import type Database from 'better-sqlite3';
import type { RecordedEvent } from '@lib/event-store';
import type { SessionEvent } from '@lib/compaction';
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
import { toIsoTime } from './iso-time';
import { MalformedEventError } from './malformed-event-error';
import { recallDocument } from './recall-document';

/** Tenant of sessions whose first event carries no `metadata.tenantId`. */
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
 * A session whose stream restarts (an event with a revision not after the last one projected,
 * which happens when a deleted stream is appended to again) is erased first, so the read models
 * hold only the live stream, as a rebuild would.
 */
export class SessionReadModelWriter {
  private readonly stmts;

  constructor(private readonly db: Database.Database) {
    const s = (sql: string) => db.prepare(sql);
    this.stmts = {
      session: s('SELECT revision FROM sessions WHERE session_id = ?').safeIntegers(true),
      insertSession: s(
        'INSERT INTO sessions (session_id, tenant_id, user_id, revision, last_position, created_at, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?)',
      ),
      updateSession: s('UPDATE sessions SET revision = ?, last_position = ?, updated_at = ? WHERE session_id = ?'),
      setUser: s('UPDATE sessions SET user_id = ? WHERE session_id = ? AND user_id IS NULL'),
      insertLog: s(
        `INSERT INTO session_log (position, session_id, revision, store_event_id, type, event_id, kind, compaction_id, archived, archived_by, data_json, created_at, recorded_at)
         VALUES (@position, @sessionId, @revision, @storeEventId, @type, @eventId, @kind, @compactionId, @archived, NULL, @dataJson, @createdAt, @recordedAt)`,
      ),
      archiveLog: s('UPDATE session_log SET archived = 1, archived_by = ? WHERE session_id = ? AND event_id = ? AND archived = 0'),
      upsertWindow: s(
        `INSERT OR REPLACE INTO window_entries (session_id, event_id, revision, anchor_revision, is_summary, compaction_id, event_json, costs_json, created_at)
         VALUES (@sessionId, @eventId, @revision, @anchorRevision, @isSummary, @compactionId, @eventJson, @costsJson, @createdAt)`,
      ),
      deleteWindow: s('DELETE FROM window_entries WHERE session_id = ? AND event_id = ?'),
      windowAnchor: s('SELECT anchor_revision AS anchor FROM window_entries WHERE session_id = ? AND event_id = ?').safeIntegers(true),
      lastRevisionOf: s('SELECT revision FROM session_log WHERE session_id = ? AND event_id = ? ORDER BY revision DESC LIMIT 1').safeIntegers(true),
      insertFts: s('INSERT INTO recall_fts (rowid, body) VALUES (?, ?)'),
      decisionsOf: s('SELECT type, data_json FROM session_log WHERE session_id = ? AND compaction_id = ? AND type IN (?, ?) ORDER BY revision'),
      upsertCompaction: s(
        `INSERT OR REPLACE INTO compactions (session_id, compaction_id, outcome, revision, position, at, data_json, archived_ids_json, summary_json)
         VALUES (@sessionId, @compactionId, @outcome, @revision, @position, @at, @dataJson, @archivedIdsJson, @summaryJson)`,
      ),
      eraseFts: s('DELETE FROM recall_fts WHERE rowid IN (SELECT position FROM session_log WHERE session_id = ?)'),
      eraseLog: s('DELETE FROM session_log WHERE session_id = ?'),
      eraseWindow: s('DELETE FROM window_entries WHERE session_id = ?'),
      eraseCompactions: s('DELETE FROM compactions WHERE session_id = ?'),
      eraseSession: s('DELETE FROM sessions WHERE session_id = ?'),
    };
  }

  /**
   * Applies one event. Events of streams not named `session-…` are ignored (returns false).
   * @throws MalformedEventError when a payload lacks a field the projection needs.
   */
  apply(recorded: RecordedEvent): boolean {
    if (!recorded.streamId.startsWith(SESSION_STREAM_PREFIX)) return false;
    const sessionId = recorded.streamId.slice(SESSION_STREAM_PREFIX.length);
    const recordedAt = toIsoTime(recorded.created);
    this.touchSession(sessionId, recorded, recordedAt);

    const log = {
      position: recorded.position,
      sessionId,
      revision: recorded.revision,
      storeEventId: recorded.id,
      type: recorded.type,
      eventId: null as string | null,
      kind: null as string | null,
      compactionId: null as string | null,
      archived: null as number | null,
      dataJson: JSON.stringify(recorded.data ?? null),
      createdAt: recordedAt,
      recordedAt,
    };
    const fail = (reason: string) => new MalformedEventError(recorded.streamId, recorded.position, reason);

    switch (recorded.type) {
      case CONVERSATION_EVENT: {
        const data = recorded.data as ConversationEventData | null;
        const event = data?.event as SessionEvent | undefined;
        if (!event || typeof event.id !== 'string' || typeof event.type !== 'string') throw fail('data.event.id and data.event.type are required');
        if (!data!.costs || typeof data!.costs !== 'object') throw fail('data.costs is required');
        Object.assign(log, { eventId: event.id, kind: event.type, archived: 0, createdAt: toIsoTime(String(data!.createdAt ?? recordedAt)) });
        this.stmts.insertLog.run(log);
        this.stmts.upsertWindow.run({
          sessionId,
          eventId: event.id,
          revision: recorded.revision,
          anchorRevision: recorded.revision,
          isSummary: event.type === 'summary' ? 1 : 0,
          compactionId: null,
          eventJson: JSON.stringify(event),
          costsJson: JSON.stringify(data!.costs),
          createdAt: String(data!.createdAt ?? recordedAt),
        });
        this.index(recorded.position, recallDocument(event));
        if (typeof data!.userId === 'string' && data!.userId) this.stmts.setUser.run(data!.userId, sessionId);
        break;
      }
      case EVENTS_ARCHIVED: {
        const data = recorded.data as EventsArchivedData | null;
        if (!data || typeof data.compactionId !== 'string' || !Array.isArray(data.archivedIds)) throw fail('data.compactionId and data.archivedIds are required');
        log.compactionId = data.compactionId;
        this.stmts.insertLog.run(log);
        for (const id of data.archivedIds) {
          this.stmts.deleteWindow.run(sessionId, id);
          this.stmts.archiveLog.run(data.compactionId, sessionId, id);
        }
        break;
      }
      case SUMMARY_INSERTED: {
        const data = recorded.data as SummaryInsertedData | null;
        if (!data || typeof data.compactionId !== 'string' || typeof data.summaryId !== 'string') throw fail('data.compactionId and data.summaryId are required');
        const anchor = this.anchorOf(sessionId, data.insertBeforeId) ?? recorded.revision;
        const event: SessionEvent = { id: data.summaryId, type: 'summary', shadowPrompt: data.shadowPrompt, text: data.text };
        Object.assign(log, {
          eventId: data.summaryId,
          kind: 'summary',
          compactionId: data.compactionId,
          archived: 0,
          createdAt: toIsoTime(String(data.createdAt ?? recordedAt)),
        });
        this.stmts.insertLog.run(log);
        this.stmts.upsertWindow.run({
          sessionId,
          eventId: data.summaryId,
          revision: recorded.revision,
          anchorRevision: anchor,
          isSummary: 1,
          compactionId: data.compactionId,
          eventJson: JSON.stringify(event),
          costsJson: JSON.stringify(data.costs),
          createdAt: String(data.createdAt ?? recordedAt),
        });
        this.index(recorded.position, recallDocument(event));
        break;
      }
      case COMPACTION_COMPLETED:
      case COMPACTION_FAILED: {
        const data = recorded.data as CompactionCompletedData | CompactionFailedData | null;
        if (!data || typeof data.compactionId !== 'string') throw fail('data.compactionId is required');
        log.compactionId = data.compactionId;
        this.stmts.insertLog.run(log);
        this.recordCompaction(sessionId, recorded, data, recordedAt);
        break;
      }
      default:
        this.stmts.insertLog.run(log);
        break;
    }
    return true;
  }

  /** Deletes every row of `sessionId` from every read model (erasure). Call inside a transaction. */
  eraseSession(sessionId: string): void {
    this.stmts.eraseFts.run(sessionId);
    this.stmts.eraseLog.run(sessionId);
    this.stmts.eraseWindow.run(sessionId);
    this.stmts.eraseCompactions.run(sessionId);
    this.stmts.eraseSession.run(sessionId);
  }

  private touchSession(sessionId: string, recorded: RecordedEvent, recordedAt: string): void {
    let row = this.stmts.session.get(sessionId) as { revision: bigint } | undefined;
    if (row && recorded.revision <= row.revision) {
      this.eraseSession(sessionId);
      row = undefined;
    }
    if (row) {
      this.stmts.updateSession.run(recorded.revision, recorded.position, recordedAt, sessionId);
    } else {
      this.stmts.insertSession.run(sessionId, tenantOf(recorded.metadata), recorded.revision, recorded.position, recordedAt, recordedAt);
    }
  }

  /** Same lookup as the fold: the active entry's anchor, else the id's last revision, else undefined. */
  private anchorOf(sessionId: string, eventId: unknown): bigint | undefined {
    if (typeof eventId !== 'string') return undefined;
    const active = this.stmts.windowAnchor.get(sessionId, eventId) as { anchor: bigint } | undefined;
    if (active) return active.anchor;
    const seen = this.stmts.lastRevisionOf.get(sessionId, eventId) as { revision: bigint } | undefined;
    return seen?.revision;
  }

  private index(position: bigint, body: string): void {
    if (body.trim() !== '') this.stmts.insertFts.run(position, body);
  }

  private recordCompaction(sessionId: string, recorded: RecordedEvent, data: CompactionCompletedData | CompactionFailedData, recordedAt: string): void {
    const archivedIds: string[] = [];
    let summary: SummaryInsertedData | null = null;
    const decisions = this.stmts.decisionsOf.all(sessionId, data.compactionId, EVENTS_ARCHIVED, SUMMARY_INSERTED) as Array<{ type: string; data_json: string }>;
    for (const decision of decisions) {
      if (decision.type === EVENTS_ARCHIVED) archivedIds.push(...(JSON.parse(decision.data_json) as EventsArchivedData).archivedIds);
      else summary = JSON.parse(decision.data_json) as SummaryInsertedData;
    }
    const failed = recorded.type === COMPACTION_FAILED;
    const at = failed ? (data as CompactionFailedData).failedAt : (data as CompactionCompletedData).completedAt;
    this.stmts.upsertCompaction.run({
      sessionId,
      compactionId: data.compactionId,
      outcome: failed ? 'failed' : String((data as CompactionCompletedData).outcome ?? 'compacted'),
      revision: recorded.revision,
      position: recorded.position,
      at: typeof at === 'string' ? toIsoTime(at) : recordedAt,
      dataJson: JSON.stringify(data),
      archivedIdsJson: JSON.stringify(archivedIds),
      summaryJson: summary ? JSON.stringify(summary) : null,
    });
  }
}

/** `metadata.tenantId` when it is a non-empty string, else {@link DEFAULT_TENANT_ID}. */
export function tenantOf(metadata: unknown): string {
  const tenantId = (metadata as { tenantId?: unknown } | null | undefined)?.tenantId;
  return typeof tenantId === 'string' && tenantId !== '' ? tenantId : DEFAULT_TENANT_ID;
}
