/**
 * The audit routes: `GET /v1/sessions` (the tenant's sessions), `GET /v1/sessions/:sessionId`,
 * its policy, its compaction history (paginated) and the before/after window of one compaction.
 * Thin: validation here, reads in {@link SessionHistoryReads}.
 */
import { Controller, Get, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { SessionHistoryReads } from '@lib/session';
import { API_KEY_HEADER_SCHEME, ApiKeyGuard, Tenant } from '../auth/api-key.guard';
import { checkSessionId } from '../commands/session-command-requests';
import { validateQuery } from './validate';
import { ApiQueryParams } from './openapi-schemas';
import { compactionListQuery, minPositionQuery, sessionListQuery, sessionQuery } from './history-query-schemas';
import { revisionOf } from './request-schemas';
import { sendJsonBytes } from './json-bytes-answer';
import { routeErrors } from './error-codes';
import {
  ApiAnswer,
  CompactionDiffSchema,
  CompactionHistoryItemSchema,
  CompactionHistoryPageSchema,
  SessionListSchema,
  SessionPolicySchema,
  SessionSummarySchema,
} from './response-schemas';

/** The codes a read of one session may answer. */
const SESSION_READ_ERRORS = routeErrors(['any', 'v1', 'sessionPath', 'read'], ['session_not_found']);
/** The codes a read of one compaction may answer. */
const COMPACTION_READ_ERRORS = routeErrors(['any', 'v1', 'sessionPath', 'read'], ['session_not_found', 'compaction_not_found']);

/** The audit routes under `/v1/sessions`, scoped to the caller's tenant. */
@ApiTags('sessions')
@ApiBearerAuth()
@ApiSecurity(API_KEY_HEADER_SCHEME)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class SessionHistoryController {
  constructor(private readonly reads: SessionHistoryReads) {}

  @Get()
  @ApiOperation({ summary: "The tenant's sessions, newest activity first (keyset-paginated)" })
  @ApiQueryParams(sessionListQuery)
  @ApiAnswer(SessionListSchema, { errors: routeErrors(['any', 'v1', 'read'], ['invalid_query', 'cursor_expired']) })
  list(@Tenant() tenant: string, @Query() query: Record<string, unknown>): Promise<z.output<typeof SessionListSchema>> {
    const q = validateQuery(sessionListQuery, query, { cursor: 'invalid_query' });
    return this.reads.sessions(
      {
        tenantId: tenant,
        userId: q.userId,
        updatedSince: q.updatedSince,
        updatedBefore: q.updatedBefore,
        estimator: q.estimator ?? 'cl100k_base',
        limit: q.limit !== undefined ? Number(q.limit) : undefined,
        cursor: q.cursor,
      },
      revisionOf(q.minPosition),
    );
  }

  @Get(':sessionId')
  @ApiOperation({ summary: 'One session: revision, event count, active window size, compaction count, policy, last activity' })
  @ApiQueryParams(sessionQuery)
  @ApiAnswer(SessionSummarySchema, { errors: SESSION_READ_ERRORS })
  async session(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<z.output<typeof SessionSummarySchema>> {
    checkSessionId(sessionId);
    const q = validateQuery(sessionQuery, query);
    return this.reads.session(tenant, sessionId, q.estimator ?? 'cl100k_base', revisionOf(q.minPosition));
  }

  @Get(':sessionId/policy')
  @ApiOperation({
    summary: "The session's auto-compaction policy (strategy, trigger and estimator null when none is set); PUT it back as it is to set it again",
  })
  @ApiQueryParams(minPositionQuery)
  @ApiAnswer(SessionPolicySchema, { errors: SESSION_READ_ERRORS })
  async policy(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<z.output<typeof SessionPolicySchema>> {
    checkSessionId(sessionId);
    const q = validateQuery(minPositionQuery, query);
    return this.reads.policy(tenant, sessionId, revisionOf(q.minPosition));
  }

  @Get(':sessionId/compactions')
  @ApiOperation({ summary: 'The compaction history of the session, oldest first (keyset-paginated)' })
  @ApiQueryParams(compactionListQuery)
  @ApiAnswer(CompactionHistoryPageSchema, {
    errors: routeErrors(['any', 'v1', 'sessionPath', 'read'], ['session_not_found', 'invalid_query', 'cursor_expired']),
  })
  async compactions(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<z.output<typeof CompactionHistoryPageSchema>> {
    checkSessionId(sessionId);
    const q = validateQuery(compactionListQuery, query, { cursor: 'invalid_query' });
    return this.reads.compactions(tenant, sessionId, {
      limit: q.limit !== undefined ? Number(q.limit) : undefined,
      cursor: q.cursor,
      minPosition: revisionOf(q.minPosition),
    });
  }

  @Get(':sessionId/compactions/:compactionId')
  @ApiOperation({ summary: 'One compaction decision' })
  @ApiQueryParams(minPositionQuery)
  @ApiAnswer(CompactionHistoryItemSchema, { errors: COMPACTION_READ_ERRORS })
  async compaction(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Param('compactionId') compactionId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<z.output<typeof CompactionHistoryItemSchema>> {
    checkSessionId(sessionId);
    const q = validateQuery(minPositionQuery, query);
    return this.reads.compaction(tenant, sessionId, compactionId, revisionOf(q.minPosition));
  }

  @Get(':sessionId/compactions/:compactionId/diff')
  @ApiOperation({ summary: 'The active window just before and just after one compaction, computed from the log' })
  @ApiQueryParams(minPositionQuery)
  @ApiAnswer(CompactionDiffSchema, { errors: COMPACTION_READ_ERRORS })
  async diff(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Param('compactionId') compactionId: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    checkSessionId(sessionId);
    const q = validateQuery(minPositionQuery, query);
    // Two windows of a long session: serialized giving the event loop turns (json-bytes-answer.ts).
    const answer: z.output<typeof CompactionDiffSchema> = await this.reads.diff(tenant, sessionId, compactionId, revisionOf(q.minPosition));
    return sendJsonBytes(reply, answer);
  }
}
