/** `GET /v1/recall`: full-text search over every event ever appended, archived included (DESIGN §5). */
import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity, ApiOperation, ApiTags } from '@nestjs/swagger';
import { compactionIdAsStored, InvalidRequestError, SessionReads } from '@lib/session';
import { API_KEY_HEADER_SCHEME, ApiKeyGuard, Tenant } from '../auth/api-key.guard';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';
import { requestSchemas, revisionOf, type RequestSchemas } from './request-schemas';
import { validateQuery } from './validate';
import { ApiQueryParams } from './openapi-schemas';
import { routeErrors } from './error-codes';
import { ApiAnswer, RecallPageSchema } from './response-schemas';

/** `GET /v1/recall`, scoped to the caller's tenant. */
@ApiTags('recall')
@ApiBearerAuth()
@ApiSecurity(API_KEY_HEADER_SCHEME)
@UseGuards(ApiKeyGuard)
@Controller('v1/recall')
export class RecallController {
  private readonly schemas: RequestSchemas;

  constructor(
    private readonly reads: SessionReads,
    @Inject(SERVICE_CONFIG) config: ServiceConfig,
  ) {
    this.schemas = requestSchemas(config);
  }

  /** @throws InvalidRequestError (400) for a parameter {@link RequestSchemas.recallQuery} refuses, and for `kind` (the filter is `type`). */
  @Get()
  @ApiOperation({ summary: 'Search recall: ranked (BM25) hits with snippets; each says whether it is archived and by which compaction' })
  @ApiQueryParams(requestSchemas({ maxEventsPerRequest: 1, maxTextLength: 1 }).recallQuery)
  @ApiAnswer(RecallPageSchema, { errors: routeErrors(['any', 'v1', 'read'], ['invalid_query', 'cursor_expired', 'invalid_session_id']) })
  search(@Tenant() tenant: string, @Query() query: Record<string, unknown>) {
    // DESIGN §5 calls the event-kind filter "kind" in prose; its parameter is `type`, as an event's field is.
    if (query !== null && typeof query === 'object' && Object.hasOwn(query, 'kind'))
      throw new InvalidRequestError('kind', 'kind: unknown query parameter "kind": the event kind filter is type (e.g. type=tool)', 'validation_failed');
    const q = validateQuery(this.schemas.recallQuery, query, { q: 'invalid_query', cursor: 'invalid_query', sessionId: 'invalid_session_id' });
    return this.reads.recall(
      {
        tenantId: tenant,
        q: q.q,
        sessionId: q.sessionId,
        userId: q.userId,
        type: q.type,
        archived: q.archived,
        // Compaction ids are stored in lower case; UUIDs are case-insensitive (the compaction routes' rule too).
        compactionId: q.compactionId === undefined ? undefined : compactionIdAsStored(q.compactionId),
        from: q.from,
        to: q.to,
        limit: q.limit !== undefined ? Number(q.limit) : undefined,
        cursor: q.cursor,
      },
      revisionOf(q.minPosition),
    );
  }
}
