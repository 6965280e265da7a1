/** `GET /health` (liveness with store and projector state) and `GET /metrics` (Prometheus text). */
import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { EventStore } from '@lib/event-store';
import { AutoCompactionScheduler, EVENT_STORE, SessionProjector } from '@lib/session';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';
import { eventStoreKind } from '../config/event-store-config';
import { ServiceMetrics } from './metrics';

/** `GET /health` and `GET /metrics` (no API key needed). */
@ApiTags('operations')
@Controller()
export class HealthController {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projector: SessionProjector,
    private readonly scheduler: AutoCompactionScheduler,
    private readonly metrics: ServiceMetrics,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  @Get('health')
  @ApiOperation({ summary: 'Liveness with store and projector state; 503 when the store does not answer' })
  async health(@Res() res: Response): Promise<void> {
    const projector = this.projector.state();
    let head: bigint | null = null;
    let storeError: string | null = null;
    try {
      head = await this.store.headPosition();
    } catch (err) {
      storeError = (err as Error).message;
    }
    const body = {
      status: storeError ? 'unavailable' : 'ok',
      store: { kind: eventStoreKind(this.config), headPosition: head?.toString() ?? null, error: storeError },
      projector: {
        running: projector.running,
        checkpoint: projector.checkpoint.toString(),
        lag: head !== null ? (head > projector.checkpoint ? 'behind' : 'caught-up') : 'unknown',
        lastError: projector.lastError,
      },
      autoCompactionsInProgress: this.scheduler.inProgress,
      mode: this.config.apiKeys.size === 0 ? 'open (no API keys configured)' : 'api-keys',
    };
    res.status(storeError ? 503 : 200).json(body);
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  @ApiOperation({ summary: 'Prometheus metrics' })
  async prometheus(): Promise<string> {
    this.metrics.projectorCheckpoint.set(Number(this.projector.checkpoint()));
    this.metrics.autoCompactionsRunning.set(this.scheduler.inProgress);
    try {
      this.metrics.storeHead.set(Number(await this.store.headPosition()));
    } catch {
      // the health endpoint reports the store's state
    }
    return this.metrics.registry.metrics();
  }
}
