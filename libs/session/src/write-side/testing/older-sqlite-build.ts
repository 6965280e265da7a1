import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { SESSION_ERASED, erasureStream } from '../../events/erasure-events';
import { sessionKey, sessionStream } from '../../events/session-stream-events';

/** An event as a test has an older build write it: its type and data (JSON-serializable). */
export interface OlderBuildEvent {
  type: string;
  data: unknown;
}

/**
 * What a build before e92296e (2026-11-30, e.g. 5117fe6) writes to the SQLite event store, for
 * tests of logs such a build wrote after a rollback. It knows no `deleted_streams`: a stream whose
 * row is gone (erased, by any build) is written again from revision 0; its erasure deletes the
 * stream's events and row, leaves `deleted_streams` as it is, and appends a record without
 * `lastPosition` or `lastRevision` under a random id. Writes through `db` (the store's connection,
 * or another one to its file while no store has it open).
 */
export class OlderSqliteBuild {
  constructor(private readonly db: Database.Database) {}

  /** Appends `events` to session `sessionId` of `tenantId`; returns the revision of the last one (bigint). */
  appendToSession(tenantId: string, sessionId: string, events: readonly OlderBuildEvent[]): bigint {
    return this.append(sessionStream(sessionKey(tenantId, sessionId)), events);
  }

  /** Erases session `sessionId` of `tenantId` as that build did; returns how many events it deleted. */
  eraseSession(tenantId: string, sessionId: string): number {
    const stream = sessionStream(sessionKey(tenantId, sessionId));
    const erasedEvents = this.db.transaction(() => {
      const { changes } = this.db.prepare('DELETE FROM events WHERE stream = ?').run(stream);
      this.db.prepare('DELETE FROM streams WHERE stream = ?').run(stream);
      return changes;
    })();
    this.append(erasureStream(tenantId), [{ type: SESSION_ERASED, data: { sessionId, erasedEvents, erasedAt: new Date().toISOString() } }]);
    return erasedEvents;
  }

  private append(stream: string, events: readonly OlderBuildEvent[]): bigint {
    return this.db.transaction(() => {
      const row = this.db.prepare('SELECT revision FROM streams WHERE stream = ?').safeIntegers(true).get(stream) as { revision: bigint } | undefined;
      let revision = row ? row.revision : -1n;
      const insert = this.db.prepare('INSERT INTO events (stream, revision, id, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, NULL, ?)');
      for (const e of events) insert.run(stream, ++revision, randomUUID(), e.type, JSON.stringify(e.data), Date.now());
      this.db
        .prepare('INSERT INTO streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision')
        .run(stream, revision);
      return revision;
    })();
  }
}
