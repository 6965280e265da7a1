/** Records every HTTP request's duration in {@link ServiceMetrics} (compaction outcomes: `CompactionMetricsHandler`). */
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { tap, type Observable } from 'rxjs';
import { toApiError } from '../http/api-error.filter';
import { ServiceMetrics } from './metrics';

/** Global interceptor feeding {@link ServiceMetrics}. */
@Injectable()
export class HttpMetricsInterceptor implements NestInterceptor {
  constructor(private readonly metrics: ServiceMetrics) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const started = process.hrtime.bigint();
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const route = (req.route as { path?: string } | undefined)?.path ?? 'unknown';
    const observe = (status: number) =>
      this.metrics.httpDuration.observe({ method: req.method, route, status: String(status) }, Number(process.hrtime.bigint() - started) / 1e9);
    return next.handle().pipe(
      tap({
        complete: () => observe(http.getResponse<Response>().statusCode),
        error: (err: unknown) => observe(toApiError(err).status),
      }),
    );
  }
}
