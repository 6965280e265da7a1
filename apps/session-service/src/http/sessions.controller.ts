/**
 * `/v1/sessions/:sessionId/...`: append events (native or OpenAI messages), compact, set the
 * auto-compaction policy, read the window (now or at a past revision) and the full log (the
 * audit routes are in `SessionHistoryController`). Thin: validation in
 * `../commands/session-command-requests` (shared with the NATS transport), decisions in the command handlers, reads in
 * {@link SessionReads}.
 */
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RouteConfig } from '@nestjs/platform-fastify';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiSecurity, ApiBody, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Inject } from '@nestjs/common';
import {
  EraseSessionCommand,
  type AppendSessionEventsResult,
  type CompactionAnswer,
  type EraseAnswer,
  type PolicyAnswer,
  type SetCompactionPolicyCommand,
} from '@lib/session';
import { API_KEY_HEADER_SCHEME, ApiKeyGuard, Requester, Tenant } from '../auth/api-key.guard';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';
import { requestSchemas, revisionOf, type RequestSchemas } from './request-schemas';
import { validateQuery } from './validate';
import { BodyFields, ForeignBodyFields, WritesTakeNoQueryGuard } from './writes-take-no-query.guard';
import { WriteRequestIdGuard } from './write-request-id.guard';
import { POLICY_FOREIGN_FIELDS } from '../commands/misplaced-field';
import { sendJsonBytes } from './json-bytes-answer';
import { SessionReads, type RequestedBy } from '@lib/session';
import { ApiQueryParams, openApiSchema } from './openapi-schemas';
import { routeErrors } from './error-codes';
import {
  ApiAnswer,
  AppendResultSchema,
  CompactionAnswerSchema,
  EraseAnswerSchema,
  LogPageSchema,
  SessionPolicyAnswerSchema,
  WindowSchema,
} from './response-schemas';
import {
  appendEventsCommandFrom,
  appendMessagesCommandFrom,
  eventsRequestPath,
  messagesRequestPath,
  withRequestPaths,
  checkSessionId,
  compactCommandFrom,
  policyCommandFrom,
} from '../commands/session-command-requests';
import { warmUpValidation } from '../commands/warm-up-validation';
import { admittedOverHttp, SESSION_LIFE_CONFIG, type SessionLifeRole } from '../commands/write-admissions';

/** The codes both append routes may answer (`/messages` adds `invalid_message`). */
const APPEND_ERRORS = routeErrors(
  ['any', 'v1', 'sessionPath', 'body', 'write'],
  [
    'invalid_request',
    'wrong_expected_revision',
    'duplicate_event_id',
    'user_id_conflict',
    'unknown_tool_call',
    'tool_call_conflict',
    'counting_timeout',
    'counting_too_costly',
    'request_expired',
    'session_erased',
  ],
);

/** The request schemas at documentation limits (query schemas do not depend on limits). */
const DOC_SCHEMAS = requestSchemas({ maxEventsPerRequest: 1000, maxTextLength: 1_000_000 });

/** The `/v1/sessions/:sessionId` routes, scoped to the caller's tenant. */
@ApiTags('sessions')
@ApiBearerAuth()
@ApiSecurity(API_KEY_HEADER_SCHEME)
// Every write route is here: the second guard refuses their query parameters (e.g. ?dryRun=true, which belongs in the
// body: @BodyFields names a route's body fields, so such a parameter is told so). The third refuses their unusable
// X-Request-Id (the resend's and the audit's key), which a read has replaced by a made-up id.
@UseGuards(ApiKeyGuard, WritesTakeNoQueryGuard, WriteRequestIdGuard)
@Controller('v1/sessions/:sessionId')
export class SessionsController {
  private readonly schemas: RequestSchemas;
  /** `WRITE_DEADLINE_MS`: a write not started that long after its request arrived is never written. */
  private readonly writeDeadlineMs: number;

  constructor(
    private readonly commandBus: CommandBus,
    private readonly reads: SessionReads,
    @Inject(SERVICE_CONFIG) config: ServiceConfig,
  ) {
    this.schemas = requestSchemas(config);
    this.writeDeadlineMs = config.writeDeadlineMs;
    warmUpValidation(this.schemas);
  }

  // The two append routes return the command's promise as it is (not from an async method, which would wrap it in a
  // second promise resolved a few microtask turns later); a request that fails validation throws, which Nest answers alike.
  @Post('events')
  @RouteConfig({ [SESSION_LIFE_CONFIG]: 'write' satisfies SessionLifeRole })
  @ApiOperation({ summary: 'Append native session events (user, assistant, tool, system, summary)' })
  @ApiParam({ name: 'sessionId' })
  @ApiBody({ schema: openApiSchema('appendEvents') })
  @BodyFields(DOC_SCHEMAS.appendEvents)
  @ApiAnswer(AppendResultSchema, { status: 201, errors: APPEND_ERRORS })
  appendEvents(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ): Promise<AppendSessionEventsResult> {
    const command = admittedOverHttp(appendEventsCommandFrom(this.schemas, tenant, sessionId, body), req.raw, this.writeDeadlineMs);
    return withRequestPaths(() => this.commandBus.execute(command), eventsRequestPath);
  }

  @Post('messages')
  @RouteConfig({ [SESSION_LIFE_CONFIG]: 'write' satisfies SessionLifeRole })
  @ApiOperation({ summary: 'Append OpenAI chat messages (system, user, assistant with tool_calls, tool with tool_call_id)' })
  @ApiBody({ schema: openApiSchema('appendMessages') })
  @BodyFields(DOC_SCHEMAS.appendMessages)
  @ApiAnswer(AppendResultSchema, { status: 201, errors: [...APPEND_ERRORS, 'invalid_message'] })
  appendMessages(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ): Promise<AppendSessionEventsResult> {
    const command = admittedOverHttp(appendMessagesCommandFrom(this.schemas, tenant, sessionId, body), req.raw, this.writeDeadlineMs);
    return withRequestPaths(() => this.commandBus.execute(command), messagesRequestPath);
  }

  @Post('compactions')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Compact the session with a strategy (optionally gated by a trigger), or without one by the session's stored policy (its strategy, trigger and estimator); dryRun appends nothing",
  })
  @ApiBody({ schema: openApiSchema('compact') })
  @BodyFields(DOC_SCHEMAS.compact)
  @ApiAnswer(CompactionAnswerSchema, {
    errors: routeErrors(['any', 'v1', 'sessionPath', 'body', 'write'], ['invalid_parameter', 'session_not_found', 'counting_timeout', 'counting_too_costly']),
  })
  async compact(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Body() body: unknown,
    @Requester() requestedBy: RequestedBy,
  ): Promise<CompactionAnswer> {
    return this.commandBus.execute(compactCommandFrom(this.schemas, tenant, sessionId, body, { requestedBy }));
  }

  @Put('policy')
  @RouteConfig({ [SESSION_LIFE_CONFIG]: 'write' satisfies SessionLifeRole })
  @ApiOperation({
    summary:
      "Set the session's auto-compaction policy (strategy null clears it); accepts and answers the shape GET …/policy answers (its read-only revision ignored); optional expectedRevision is the precondition, as on appends",
  })
  @ApiBody({ schema: openApiSchema('policy') })
  @BodyFields(DOC_SCHEMAS.policy)
  @ForeignBodyFields(POLICY_FOREIGN_FIELDS)
  @ApiAnswer(SessionPolicyAnswerSchema, {
    errors: routeErrors(
      ['any', 'v1', 'sessionPath', 'body', 'write'],
      ['invalid_parameter', 'session_not_found', 'wrong_expected_revision', 'request_expired', 'session_erased'],
    ),
  })
  async setPolicy(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Body() body: unknown,
    @Requester() requestedBy: RequestedBy,
    @Req() req: FastifyRequest,
  ): Promise<PolicyAnswer> {
    const command = admittedOverHttp(policyCommandFrom(this.schemas, tenant, sessionId, body, { requestedBy }), req.raw, this.writeDeadlineMs);
    return this.commandBus.execute<SetCompactionPolicyCommand, PolicyAnswer>(command);
  }

  @Get('window')
  @ApiOperation({ summary: 'The active window (what to send to the model next), now, at a past revision or at a past time' })
  @ApiQueryParams(DOC_SCHEMAS.windowQuery)
  @ApiAnswer(WindowSchema, { errors: routeErrors(['any', 'v1', 'sessionPath', 'read'], ['session_not_found', 'revision_out_of_range', 'time_out_of_range']) })
  async window(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    checkSessionId(sessionId);
    const q = validateQuery(this.schemas.windowQuery, query);
    // The projected window's bytes are built from the stored JSON (no parse + stringify of a large event);
    // the other answers (OpenAI format, time travel) are serialized giving the event loop turns.
    const answer = await this.reads.windowJson(tenant, sessionId, {
      atRevision: revisionOf(q.atRevision),
      atTime: q.atTime,
      minPosition: revisionOf(q.minPosition),
      format: q.format ?? 'events',
      estimator: q.estimator ?? 'cl100k_base',
    });
    return sendJsonBytes(reply, answer);
  }

  @Get('events')
  @ApiOperation({ summary: 'The full log: conversation events with their archived flag, and decision events' })
  @ApiQueryParams(DOC_SCHEMAS.logQuery)
  @ApiAnswer(LogPageSchema, { errors: routeErrors(['any', 'v1', 'sessionPath', 'read'], ['session_not_found']) })
  async log(
    @Tenant() tenant: string,
    @Param('sessionId') sessionId: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    checkSessionId(sessionId);
    const q = validateQuery(this.schemas.logQuery, query);
    const answer = await this.reads.logJson(
      tenant,
      sessionId,
      revisionOf(q.fromRevision) ?? 0n,
      q.limit !== undefined ? Number(q.limit) : 100,
      revisionOf(q.minPosition),
    );
    return sendJsonBytes(reply, answer);
  }

  @Delete()
  @RouteConfig({ [SESSION_LIFE_CONFIG]: 'erasure' satisfies SessionLifeRole })
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Erase the session: its content leaves the store and every read model (the deletion is recorded without content); sent again after it finished, it answers as it did, writing nothing (with the same client-chosen X-Request-Id and API key, also after the session was written again; without one, it erases the life written since); 404 for a session never written',
  })
  @ApiAnswer(EraseAnswerSchema, { errors: routeErrors(['any', 'v1', 'sessionPath', 'write'], ['session_not_found', 'erasure_interrupted', 'request_expired']) })
  async erase(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Requester() requestedBy: RequestedBy, @Req() req: FastifyRequest) {
    checkSessionId(sessionId);
    const command = admittedOverHttp(new EraseSessionCommand(tenant, sessionId, requestedBy), req.raw, this.writeDeadlineMs);
    return this.commandBus.execute<EraseSessionCommand, EraseAnswer>(command);
  }
}
