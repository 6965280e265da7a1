/**
 * `/v1/sessions/:sessionId/...`: append events (native or OpenAI messages), compact, set the
 * auto-compaction policy, read the window (now or at a past revision) and the full log (the
 * audit routes are in `SessionHistoryController`). Thin: validation here, decisions in the command handlers, reads in
 * {@link SessionReads}.
 */
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Inject } from '@nestjs/common';
import { parseStrategy, parseTrigger, InvalidParameterError, type Strategy, type Trigger } from '@lib/compaction';
import type { ExpectedRevision } from '@lib/event-store';
import {
  AppendSessionEventsCommand,
  CompactSessionCommand,
  EraseSessionCommand,
  InvalidRequestError,
  SetCompactionPolicyCommand,
  assignClientId,
  openAiMessagesToEvents,
  type AppendSessionEventsResult,
  type CompactionAnswer,
  type EstimatorName,
  type EventToAppend,
} from '@lib/session';
import { ApiKeyGuard, Tenant } from '../auth/api-key.guard';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';
import { requestSchemas, SESSION_ID_PATTERN, type RequestSchemas } from './request-schemas';
import { validate } from './validate';
import { SessionReads } from '@lib/session';
import { ApiQueryParams, openApiSchema } from './openapi-schemas';
import { ApiAnswer, AppendResultSchema, CompactionAnswerSchema, EraseAnswerSchema, LogPageSchema, PolicyAnswerSchema, WindowSchema } from './response-schemas';

/** The request schemas at documentation limits (query schemas do not depend on limits). */
const DOC_SCHEMAS = requestSchemas({ maxEventsPerRequest: 1000, maxTextLength: 1_000_000 });

/** Validates a session id path parameter. @throws InvalidRequestError (400). */
export function checkSessionId(sessionId: string): string {
  if (!SESSION_ID_PATTERN.test(sessionId)) {
    throw new InvalidRequestError('sessionId', 'sessionId: use 1 to 128 letters, digits or _ - : @ .', 'invalid_session_id');
  }
  return sessionId;
}

function toExpectedRevision(value: string | number | undefined): ExpectedRevision {
  if (value === undefined) return 'any';
  if (value === 'any' || value === 'no_stream' || value === 'stream_exists') return value;
  return BigInt(value);
}

/** Field names of the native event shape → the OpenAI message shape, for error messages. */
const OPENAI_FIELD_NAMES: Array<[RegExp, string]> = [
  [/\.text\b/g, '.content'],
  [/\.toolCalls\[(\d+)\]\.(name|arguments)/g, '.tool_calls[$1].function.$2'],
  [/\.toolCalls/g, '.tool_calls'],
  [/\.responses\[\d+\]\.data/g, '.content'],
  [/\.responses\[\d+\]\.toolCallId/g, '.tool_call_id'],
];

/** Runs `check` on a converted message; a validation error is re-issued in the OpenAI shape's terms (400 `invalid_message`). */
function asMessageError<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    const rename = (s: string) => OPENAI_FIELD_NAMES.reduce((acc, [from, to]) => acc.replace(from, to), s);
    throw new InvalidRequestError(rename(err.parameter), rename(err.message).replace('send null when the event has no text', 'send some text'), 'invalid_message');
  }
}

/** Parses a strategy, naming parameters as `strategy.<name>`. @throws InvalidRequestError (400 `invalid_parameter`). */
export function strategyFrom(input: unknown): Strategy {
  try {
    return parseStrategy(input);
  } catch (err) {
    throw asParameterError(err, 'strategy');
  }
}

/** Parses an optional trigger, naming parameters as `trigger.<name>`. @throws InvalidRequestError (400). */
export function triggerFrom(input: unknown): Trigger | null {
  if (input === undefined || input === null) return null;
  try {
    return parseTrigger(input);
  } catch (err) {
    throw asParameterError(err, 'trigger');
  }
}

function asParameterError(err: unknown, prefix: string): unknown {
  if (!(err instanceof InvalidParameterError)) return err;
  const parameter = err.parameter.startsWith(prefix) ? err.parameter : `${prefix}.${err.parameter}`;
  return new InvalidRequestError(parameter, err.message.includes(parameter) ? err.message : `${parameter}: ${err.message}`, 'invalid_parameter');
}

/** The `/v1/sessions/:sessionId` routes, scoped to the caller's tenant. */
@ApiTags('sessions')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId')
export class SessionsController {
  private readonly schemas: RequestSchemas;

  constructor(
    private readonly commandBus: CommandBus,
    private readonly reads: SessionReads,
    @Inject(SERVICE_CONFIG) config: ServiceConfig,
  ) {
    this.schemas = requestSchemas(config);
  }

  @Post('events')
  @ApiOperation({ summary: 'Append native session events (user, assistant, tool, system, summary)' })
  @ApiParam({ name: 'sessionId' })
  @ApiBody({ schema: openApiSchema('appendEvents') })
  @ApiAnswer(AppendResultSchema, { status: 201, errors: [400, 401, 409, 413, 415, 429, 503] })
  async appendEvents(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Body() body: unknown): Promise<AppendSessionEventsResult> {
    checkSessionId(sessionId);
    const input = validate(this.schemas.appendEvents, body);
    const events: EventToAppend[] = input.events.map((e, i) => {
      const { id, createdAt, metadata, ...rest } = e;
      return { event: { ...rest, id: id ?? assignClientId() } as EventToAppend['event'], createdAt, metadata, field: `events[${i}]` };
    });
    return this.commandBus.execute(new AppendSessionEventsCommand(tenant, sessionId, events, toExpectedRevision(input.expectedRevision), input.userId));
  }

  @Post('messages')
  @ApiOperation({ summary: 'Append OpenAI chat messages (system, user, assistant with tool_calls, tool with tool_call_id)' })
  @ApiBody({ schema: openApiSchema('appendMessages') })
  @ApiAnswer(AppendResultSchema, { status: 201, errors: [400, 401, 409, 413, 415, 422, 429, 503] })
  async appendMessages(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Body() body: unknown): Promise<AppendSessionEventsResult> {
    checkSessionId(sessionId);
    const input = validate(this.schemas.appendMessages, body);
    const knownCallNames = await this.reads.knownCallNames(tenant, sessionId);
    const parsed = openAiMessagesToEvents(input.messages, { knownCallNames, assignId: () => assignClientId() });
    const events: EventToAppend[] = parsed.map((event, i) => {
      const checked = asMessageError(() => validate(this.schemas.nativeEvent, event, `messages[${i}]`));
      return { event: { ...checked, id: event.id } as EventToAppend['event'], field: `messages[${i}]` };
    });
    return this.commandBus.execute(new AppendSessionEventsCommand(tenant, sessionId, events, toExpectedRevision(input.expectedRevision), input.userId));
  }

  @Post('compactions')
  @HttpCode(200)
  @ApiOperation({ summary: 'Compact the session with a strategy (optionally gated by a trigger; dryRun appends nothing)' })
  @ApiBody({ schema: openApiSchema('compact') })
  @ApiAnswer(CompactionAnswerSchema, { errors: [400, 401, 404, 413, 415, 429, 503] })
  async compact(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Body() body: unknown): Promise<CompactionAnswer> {
    checkSessionId(sessionId);
    const input = validate(this.schemas.compact, body);
    const strategy = strategyFrom(input.strategy);
    const trigger = triggerFrom(input.trigger);
    const estimator: EstimatorName = input.estimator ?? 'cl100k_base';
    return this.commandBus.execute(new CompactSessionCommand(tenant, sessionId, strategy, trigger, estimator, input.dryRun ?? false));
  }

  @Put('policy')
  @ApiOperation({ summary: "Set the session's auto-compaction policy (strategy null clears it)" })
  @ApiBody({ schema: openApiSchema('policy') })
  @ApiAnswer(PolicyAnswerSchema, { errors: [400, 401, 404, 413, 415, 429, 503] })
  async setPolicy(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Body() body: unknown) {
    checkSessionId(sessionId);
    const input = validate(this.schemas.policy, body);
    const strategy = input.strategy === null ? null : strategyFrom(input.strategy);
    const trigger = triggerFrom(input.trigger);
    return this.commandBus.execute(new SetCompactionPolicyCommand(tenant, sessionId, strategy, trigger, input.estimator ?? 'cl100k_base'));
  }

  @Get('window')
  @ApiOperation({ summary: 'The active window (what to send to the model next), now or at a past revision' })
  @ApiQueryParams(DOC_SCHEMAS.windowQuery)
  @ApiAnswer(WindowSchema)
  async window(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Query() query: Record<string, unknown>) {
    checkSessionId(sessionId);
    const q = validate(this.schemas.windowQuery, query);
    return this.reads.window(tenant, sessionId, {
      atRevision: q.atRevision !== undefined ? BigInt(q.atRevision) : undefined,
      minPosition: q.minPosition !== undefined ? BigInt(q.minPosition) : undefined,
      format: q.format ?? 'events',
      estimator: q.estimator ?? 'cl100k_base',
    });
  }

  @Get('events')
  @ApiOperation({ summary: 'The full log: conversation events with their archived flag, and decision events' })
  @ApiQueryParams(DOC_SCHEMAS.logQuery)
  @ApiAnswer(LogPageSchema)
  async log(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Query() query: Record<string, unknown>) {
    checkSessionId(sessionId);
    const q = validate(this.schemas.logQuery, query);
    return this.reads.log(tenant, sessionId, q.fromRevision !== undefined ? BigInt(q.fromRevision) : 0n, q.limit !== undefined ? Number(q.limit) : 100);
  }

  @Delete()
  @HttpCode(200)
  @ApiOperation({ summary: "Erase the session: its content leaves the store and every read model (the deletion is recorded without content)" })
  @ApiAnswer(EraseAnswerSchema)
  async erase(@Tenant() tenant: string, @Param('sessionId') sessionId: string, @Query() query: Record<string, unknown>) {
    checkSessionId(sessionId);
    validate(this.schemas.noQuery, query);
    return this.commandBus.execute(new EraseSessionCommand(tenant, sessionId));
  }
}
