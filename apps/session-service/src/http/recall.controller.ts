/** `GET /v1/recall`: full-text search over every event ever appended, archived included (DESIGN §5). */
import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { SessionReads } from '@lib/session';
import { ApiKeyGuard, Tenant } from '../auth/api-key.guard';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';
import { requestSchemas, type RequestSchemas } from './request-schemas';
import { validate } from './validate';

/** `GET /v1/recall`, scoped to the caller's tenant. */
@ApiTags('recall')
@ApiBearerAuth()
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

  @Get()
  @ApiOperation({ summary: 'Search recall: ranked (BM25) hits with snippets; each says whether it is archived and by which compaction' })
  @ApiQuery({ name: 'q', required: true, description: 'words to find (all must occur)' })
  @ApiQuery({ name: 'sessionId', required: false })
  @ApiQuery({ name: 'userId', required: false })
  @ApiQuery({ name: 'type', required: false, enum: ['user', 'assistant', 'tool', 'system', 'summary'] })
  @ApiQuery({ name: 'archived', required: false, enum: ['true', 'false'] })
  @ApiQuery({ name: 'compactionId', required: false })
  @ApiQuery({ name: 'from', required: false, description: 'ISO-8601, inclusive' })
  @ApiQuery({ name: 'to', required: false, description: 'ISO-8601, exclusive' })
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 20' })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  search(@Tenant() tenant: string, @Query() query: Record<string, unknown>) {
    const q = validate(this.schemas.recallQuery, query);
    return this.reads.recall({
      tenantId: tenant,
      q: q.q,
      sessionId: q.sessionId,
      userId: q.userId,
      type: q.type,
      archived: q.archived === undefined ? undefined : q.archived === 'true',
      compactionId: q.compactionId,
      from: q.from,
      to: q.to,
      limit: q.limit !== undefined ? Number(q.limit) : undefined,
      cursor: q.cursor,
    });
  }
}
