/**
 * `GET /v1/erasures`: the caller's tenant's erasures, newest first, without content (who, when,
 * how many events, which revisions), from the `erasures` read model. Thin: validation here, the
 * read in {@link SessionHistoryReads}.
 */
import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { z } from 'zod';
import { SessionHistoryReads } from '@lib/session';
import { API_KEY_HEADER_SCHEME, ApiKeyGuard, Tenant } from '../auth/api-key.guard';
import { validateQuery } from './validate';
import { ApiQueryParams } from './openapi-schemas';
import { erasureListQuery } from './history-query-schemas';
import { revisionOf } from './request-schemas';
import { routeErrors } from './error-codes';
import { ApiAnswer, ErasureListSchema } from './response-schemas';

/** The erasure list, scoped to the caller's tenant. */
@ApiTags('sessions')
@ApiBearerAuth()
@ApiSecurity(API_KEY_HEADER_SCHEME)
@UseGuards(ApiKeyGuard)
@Controller('v1/erasures')
export class ErasuresController {
  constructor(private readonly reads: SessionHistoryReads) {}

  @Get()
  @ApiOperation({
    summary: "The tenant's erasures, newest first (keyset-paginated): each erased session life's id, time, event count and revisions, never its content",
  })
  @ApiQueryParams(erasureListQuery)
  @ApiAnswer(ErasureListSchema, { errors: routeErrors(['any', 'v1', 'read'], ['invalid_query', 'cursor_expired']) })
  list(@Tenant() tenant: string, @Query() query: Record<string, unknown>): Promise<z.output<typeof ErasureListSchema>> {
    const q = validateQuery(erasureListQuery, query, { cursor: 'invalid_query' });
    return this.reads.erasures({ tenantId: tenant, limit: q.limit !== undefined ? Number(q.limit) : undefined, cursor: q.cursor }, revisionOf(q.minPosition));
  }
}
