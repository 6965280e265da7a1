/**
 * The audit side of the query API: the tenant's sessions, one session's summary and policy, its
 * compaction history (paginated, public item shape) and the before/after window of one decision.
 * Reads the read models; the diff reads the log (time travel, DESIGN §5: `compactionWindows`).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { EventStore, RecordedEvent } from '@lib/event-store';
import { sessionKey, sessionStream, type EstimatorName } from '../events/session-stream-events';
import { CompactionNotFoundError } from '../errors';
import { compactionIdAsStored } from '../domain/compaction-id-case';
import { EVENT_STORE } from '../tokens';
import { ReadModelStore } from '../read-side/read-model-store';
import { decodeKeysetCursor, keysetCursorPastEnd } from '../read-side/keyset-cursor';
import { findSession } from '../read-side/queries/session-row';
import { lastPolicyEventOf } from '../read-side/queries/session-policy-query';
import { policyAnswer, type PolicyAnswer } from '../domain/policy-answer';
import {
  getSessionSummary,
  listSessionSummaries,
  type SessionListQuery,
  type SessionSummary,
  type SessionSummaryPage,
} from '../read-side/queries/session-summary-query';
import { getCompaction, getCompactionDiffHead, pageCompactions } from '../read-side/queries/compaction-history-query';
import { listErasures, type ErasureRecordRow } from '../read-side/queries/erasure-query';
import { archivedOnArrivalItems, compactionHistoryItem, type CompactionHistoryItem } from '../read-side/queries/compaction-history-item';
import { diffWindows, type CompactionDiff } from './compaction-diff';
import { compactionWindows } from './compaction-windows';
import { jsonSafe } from './json-safe';
import { SessionReads } from './session-reads';

/** A {@link SessionSummary} with bigints as decimal strings. */
export type SessionSummaryAnswer = Omit<SessionSummary, 'revision' | 'lastPosition'> & { revision: string; lastPosition: string };

/** A page of the tenant's erasures as the API answers it (`ErasurePage` with bigints as decimal strings). */
export interface ErasureListAnswer {
  erasures: Array<
    Omit<ErasureRecordRow, 'firstRevision' | 'lastRevision' | 'position'> & { firstRevision: string | null; lastRevision: string | null; position: string }
  >;
  nextCursor?: string;
}

/** A page of the compaction history as the API answers it. */
export interface CompactionHistoryPage {
  sessionId: string;
  compactions: CompactionHistoryItem[];
  /** Present when more decisions follow: pass it as `cursor`. */
  nextCursor?: string;
}

/** Query service of the audit routes; every method scopes to `tenantId` (another tenant's session → 404). */
@Injectable()
export class SessionHistoryReads {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly reads: SessionReads,
  ) {}

  /**
   * The tenant's sessions, newest activity first, once the read models include `minPosition` (a
   * global log position) or, without it, this process's acknowledged writes (and have caught up
   * with the log once since start: see SessionReads.waitFor).
   * A cursor is followed as {@link listCursorPosition} says.
   * @throws InvalidQueryError (400) on a bad cursor, one past the log's end included; InvalidRequestError (400
   * `position_out_of_range`) for a position past the log's end; ProjectionBehindError (503).
   */
  async sessions(query: SessionListQuery, minPosition?: bigint): Promise<{ sessions: SessionSummaryAnswer[]; nextCursor?: string }> {
    await this.reads.waitFor(minPosition, { tenantId: query.tenantId });
    await this.listCursorPosition('sessions', query.cursor);
    return jsonSafe(listSessionSummaries(this.readModels, query)) as { sessions: SessionSummaryAnswer[]; nextCursor?: string } & SessionSummaryPage;
  }

  /**
   * One session's summary. A session id written again after an erasure answers its current life.
   * @throws SessionNotFoundError (404; with `erasedAt` when the id's latest erasure is recorded),
   *   ProjectionBehindError (503).
   */
  async session(tenantId: string, sessionId: string, estimator: EstimatorName, minPosition?: bigint): Promise<SessionSummaryAnswer> {
    await this.reads.waitFor(minPosition, { tenantId, sessionId });
    const summary = getSessionSummary(this.readModels, tenantId, sessionId, estimator);
    if (!summary) throw await this.reads.notFound(tenantId, sessionId);
    return jsonSafe(summary) as SessionSummaryAnswer;
  }

  /**
   * The tenant's erasures, newest first (keyset-paginated), once the read models include
   * `minPosition` (or this process's acknowledged writes): what is left of each erased session
   * life, without content. Revisions and positions as decimal strings.
   * A cursor is followed as {@link listCursorPosition} says.
   * @throws InvalidQueryError (400) on a bad cursor, one past the log's end included; CursorOfAnotherReleaseError (400
   *   `cursor_expired`); InvalidRequestError (400 `position_out_of_range`); ProjectionBehindError (503).
   */
  async erasures(query: { tenantId: string; limit?: number; cursor?: string }, minPosition?: bigint): Promise<ErasureListAnswer> {
    await this.reads.waitFor(minPosition, { tenantId: query.tenantId });
    await this.listCursorPosition('erasures', query.cursor);
    return jsonSafe(listErasures(this.readModels, query)) as ErasureListAnswer;
  }

  /**
   * The auto-compaction policy in force, as `PUT …/policy` answers it ({@link policyAnswer}: strategy,
   * trigger and estimator null when none is). @throws SessionNotFoundError (404; with `erasedAt` for an erased id, `SessionReads.notFound`), ProjectionBehindError (503).
   */
  async policy(tenantId: string, sessionId: string, minPosition?: bigint): Promise<PolicyAnswer> {
    await this.reads.waitFor(minPosition, { tenantId, sessionId });
    const session = findSession(this.readModels, tenantId, sessionId);
    if (!session) throw await this.reads.notFound(tenantId, sessionId);
    return policyAnswer(sessionId, lastPolicyEventOf(this.readModels, session.sessionKey), session.revision);
  }

  /**
   * The check of a session-list or erasures cursor (`cursor`, undefined for a first page): its key,
   * the global position of the last item of the page that made it, is followed as
   * `SessionReads.reachCursorPosition` says: waited for when these read models have not applied it
   * yet (another replica made the cursor), refused when it is past the log's head.
   * @throws InvalidQueryError (400 `invalid_query`) on a bad cursor (`decodeKeysetCursor`) or one
   *   past the log's head (`keysetCursorPastEnd`); CursorOfAnotherReleaseError (400 `cursor_expired`);
   *   ProjectionBehindError (503).
   */
  private async listCursorPosition(list: 'sessions' | 'erasures', cursor: string | undefined): Promise<void> {
    if (cursor === undefined) return;
    const position = decodeKeysetCursor(list, cursor);
    await this.reads.reachCursorPosition(position, (head) => keysetCursorPastEnd(list, position, head));
  }

  /**
   * A page of the compaction history, oldest first. A cursor is followed as {@link compactionCursorRevision} says.
   * @throws SessionNotFoundError (404; with `erasedAt` for an erased id, `SessionReads.notFound`),
   *   ProjectionBehindError (503), InvalidQueryError (400) on a bad cursor, one past the session's
   *   last revision included.
   */
  async compactions(tenantId: string, sessionId: string, page: { limit?: number; cursor?: string; minPosition?: bigint }): Promise<CompactionHistoryPage> {
    await this.reads.waitFor(page.minPosition, { tenantId, sessionId });
    if (page.cursor !== undefined) await this.compactionCursorRevision(tenantId, sessionId, decodeKeysetCursor('compactions', page.cursor, sessionId));
    const records = pageCompactions(this.readModels, tenantId, sessionId, page.limit, page.cursor);
    if (!records) throw await this.reads.notFound(tenantId, sessionId);
    const answer: CompactionHistoryPage = { sessionId, compactions: records.compactions.map(compactionHistoryItem) };
    if (records.nextCursor) answer.nextCursor = records.nextCursor;
    return answer;
  }

  /**
   * One compaction decision; `compactionId` in any letter case (UUIDs are case-insensitive:
   * `compactionIdAsStored`), the answer's `compactionId` as stored (lower case).
   * @throws SessionNotFoundError, CompactionNotFoundError (404, naming the id as sent), ProjectionBehindError (503).
   */
  async compaction(tenantId: string, sessionId: string, compactionId: string, minPosition?: bigint): Promise<CompactionHistoryItem> {
    await this.reads.waitFor(minPosition, { tenantId, sessionId });
    return compactionHistoryItem(await this.record(tenantId, sessionId, compactionId));
  }

  /**
   * The window just before the compaction's first decision event and just after its last one,
   * read from the log from the compaction decision before it (`compactionWindows`), and the
   * events archived on arrival attributed to it later. `compactionId` in any letter case, as
   * {@link compaction} takes it; the answer's `compactionId` as stored (lower case).
   * @throws SessionNotFoundError, CompactionNotFoundError (404, naming the id as sent), ProjectionBehindError (503).
   */
  async diff(tenantId: string, sessionId: string, compactionId: string, minPosition?: bigint): Promise<CompactionDiff> {
    await this.reads.waitFor(minPosition, { tenantId, sessionId });
    const stored = compactionIdAsStored(compactionId);
    const head = getCompactionDiffHead(this.readModels, tenantId, sessionId, stored) ?? (await this.notFound(tenantId, sessionId, compactionId));
    const { revision, firstRevision, estimator, recordedAt, archivedOnArrival } = head;
    const { before, after } = await compactionWindows(this.store, sessionStream(sessionKey(tenantId, sessionId)), firstRevision, revision);
    return await diffWindows({ sessionId, compactionId: stored, estimator, recordedAt }, before, after, archivedOnArrivalItems(archivedOnArrival));
  }

  /**
   * The check of a compaction-history cursor's key `after` (bigint: the revision of the last
   * decision of the page that made it). These read models hold the session at `after` or later
   * (every cursor this replica made): nothing read. Otherwise (the session, or its events up to
   * `after`, not applied here yet: another replica made the cursor; or a forged cursor) the store
   * says which: its first event of the session at or after `after`, when there is one, is waited
   * for as a `minPosition` (the page is then the one that replica would answer); when there is
   * none, `after` is past the session's last revision: no page made the cursor. Revisions are
   * never reused (a session written again after an erasure continues after its erased ones), so a
   * cursor a page made is never past it. When the store does not answer, the page is answered from
   * these read models as before (an unreachable store does not stop reads).
   * @throws InvalidQueryError (400 `invalid_query`, `keysetCursorPastEnd`) when `after` is past the
   *   session's last revision; SessionNotFoundError (404, `SessionReads.notFound`) when the store
   *   holds no event of the session (erased); what `SessionReads.waitFor` throws.
   */
  private async compactionCursorRevision(tenantId: string, sessionId: string, after: bigint): Promise<void> {
    const session = findSession(this.readModels, tenantId, sessionId);
    if (session && after <= session.revision) return;
    const stream = sessionStream(sessionKey(tenantId, sessionId));
    let next: RecordedEvent | undefined;
    let last: bigint | null;
    try {
      [next] = await this.store.readStream(stream, { fromRevision: after, maxCount: 1 });
      last = next ? next.revision : await this.store.streamRevision(stream);
    } catch {
      return;
    }
    if (next) return this.reads.waitFor(next.position, { tenantId, sessionId });
    if (last === null) throw await this.reads.notFound(tenantId, sessionId);
    throw keysetCursorPastEnd('compactions', after, last);
  }

  /** The record of compaction `compactionId` (any letter case, `compactionIdAsStored`). @throws what {@link notFound} throws when there is none. */
  private async record(tenantId: string, sessionId: string, compactionId: string) {
    return getCompaction(this.readModels, tenantId, sessionId, compactionIdAsStored(compactionId)) ?? (await this.notFound(tenantId, sessionId, compactionId));
  }

  /**
   * @throws SessionNotFoundError (404, `SessionReads.notFound`: true however far the read models lag) when the session is unknown (or
   *   another tenant's, or erased), else CompactionNotFoundError (404).
   */
  private async notFound(tenantId: string, sessionId: string, compactionId: string): Promise<never> {
    if (!findSession(this.readModels, tenantId, sessionId)) throw await this.reads.notFound(tenantId, sessionId);
    throw new CompactionNotFoundError(sessionId, compactionId);
  }
}
