/**
 * The audit side of the query API: the tenant's sessions, one session's summary and policy, its
 * compaction history (paginated, public item shape) and the before/after window of one decision.
 * Reads the read models; the diff reads the log (time travel, DESIGN §5: `compactionWindows`).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { EventStore } from '@lib/event-store';
import { sessionKey, sessionStream, type EstimatorName } from '../events/session-stream-events';
import { CompactionNotFoundError } from '../errors';
import { EVENT_STORE } from '../tokens';
import { ReadModelStore } from '../read-side/read-model-store';
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
   * @throws InvalidQueryError (400) on a bad cursor; InvalidRequestError (400
   * `position_out_of_range`) for a position past the log's end; ProjectionBehindError (503).
   */
  async sessions(query: SessionListQuery, minPosition?: bigint): Promise<{ sessions: SessionSummaryAnswer[]; nextCursor?: string }> {
    await this.reads.waitFor(minPosition, { tenantId: query.tenantId });
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
   * @throws InvalidQueryError (400) on a bad cursor; CursorOfAnotherReleaseError (400
   *   `cursor_expired`); InvalidRequestError (400 `position_out_of_range`); ProjectionBehindError (503).
   */
  async erasures(query: { tenantId: string; limit?: number; cursor?: string }, minPosition?: bigint): Promise<ErasureListAnswer> {
    await this.reads.waitFor(minPosition, { tenantId: query.tenantId });
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
   * A page of the compaction history, oldest first.
   * @throws SessionNotFoundError (404; with `erasedAt` for an erased id, `SessionReads.notFound`), ProjectionBehindError (503), InvalidQueryError (400) on a bad cursor.
   */
  async compactions(tenantId: string, sessionId: string, page: { limit?: number; cursor?: string; minPosition?: bigint }): Promise<CompactionHistoryPage> {
    await this.reads.waitFor(page.minPosition, { tenantId, sessionId });
    const records = pageCompactions(this.readModels, tenantId, sessionId, page.limit, page.cursor);
    if (!records) throw await this.reads.notFound(tenantId, sessionId);
    const answer: CompactionHistoryPage = { sessionId, compactions: records.compactions.map(compactionHistoryItem) };
    if (records.nextCursor) answer.nextCursor = records.nextCursor;
    return answer;
  }

  /** One compaction decision. @throws SessionNotFoundError, CompactionNotFoundError (404), ProjectionBehindError (503). */
  async compaction(tenantId: string, sessionId: string, compactionId: string, minPosition?: bigint): Promise<CompactionHistoryItem> {
    await this.reads.waitFor(minPosition, { tenantId, sessionId });
    return compactionHistoryItem(await this.record(tenantId, sessionId, compactionId));
  }

  /**
   * The window just before the compaction's first decision event and just after its last one,
   * read from the log from the compaction decision before it (`compactionWindows`), and the
   * events archived on arrival attributed to it later.
   * @throws SessionNotFoundError, CompactionNotFoundError (404), ProjectionBehindError (503).
   */
  async diff(tenantId: string, sessionId: string, compactionId: string, minPosition?: bigint): Promise<CompactionDiff> {
    await this.reads.waitFor(minPosition, { tenantId, sessionId });
    const head = getCompactionDiffHead(this.readModels, tenantId, sessionId, compactionId) ?? (await this.notFound(tenantId, sessionId, compactionId));
    const { revision, firstRevision, estimator, recordedAt, archivedOnArrival } = head;
    const { before, after } = await compactionWindows(this.store, sessionStream(sessionKey(tenantId, sessionId)), firstRevision, revision);
    return await diffWindows({ sessionId, compactionId, estimator, recordedAt }, before, after, archivedOnArrivalItems(archivedOnArrival));
  }

  private async record(tenantId: string, sessionId: string, compactionId: string) {
    return getCompaction(this.readModels, tenantId, sessionId, compactionId) ?? (await this.notFound(tenantId, sessionId, compactionId));
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
