/**
 * Counts every HTTP answer in {@link ServiceMetrics} (`http_request_duration_seconds`, by method,
 * route pattern and status), including the ones no controller gives: 404 for unknown routes
 * (route `unknown`), 405 for a known path asked with another method (its route pattern), 413/415/400 from reading the body, 429 from the rate limit, 401 from the key
 * check. Compaction outcomes are counted by `CompactionMetricsHandler`.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceMetrics } from './metrics';
import { unroutedRoutePattern } from '../http/framework-answers';

/** Adds an `onResponse` hook to `app` that observes each answer's duration (seconds, from Fastify's clock). */
export function countAnswers(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? unroutedRoutePattern(request) ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
