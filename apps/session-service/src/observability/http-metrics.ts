/**
 * Counts every HTTP answer in {@link ServiceMetrics} (`http_request_duration_seconds`, by method,
 * route pattern, status and tenant, {@link tenantLabel}), including the ones no controller gives: 404 for unknown routes
 * (route `unknown`), 405 for a known path asked with another method (its route pattern), 413/415/400 from reading the body, 429 from the rate limit, 401 from the key
 * check. Compaction outcomes are counted by `CompactionMetricsHandler`.
 */
import type { FastifyInstance } from 'fastify';
import { NO_TENANT_LABEL, type ServiceMetrics } from './metrics';
import { unroutedRoutePattern } from '../http/framework-answers';
import type { TenantRequest } from '../auth/api-key.guard';

/**
 * The `tenant` label of an answered request: the tenant its configured key resolved to
 * (`request.tenantId`, set only from `API_KEYS`' tenants, or `default` in open mode), else
 * {@link NO_TENANT_LABEL}. Never taken from the request's own text, so the label's values are the
 * operator's tenants plus two: bounded, and naming no content.
 */
export function tenantLabel(request: Pick<TenantRequest, 'tenantId'>): string {
  return request.tenantId ?? NO_TENANT_LABEL;
}

/** Adds an `onResponse` hook to `app` that observes each answer's duration (seconds, from Fastify's clock). */
export function countAnswers(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpDuration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? unroutedRoutePattern(request) ?? 'unknown',
        status: String(reply.statusCode),
        tenant: tenantLabel(request as TenantRequest),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
