/**
 * `GET /health` (liveness with store, projector and NATS transport state), `GET /health/ready` (readiness: the read
 * models have caught up with the log once, and the store answers) and `GET /metrics` (Prometheus text).
 */
import { Controller, Get, Header, Inject, Logger, Optional, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { z } from 'zod';
import { ApiAnswer, ApiErrorAnswers, HealthSchema, ReadinessSchema } from '../http/response-schemas';
import { routeErrors } from '../http/error-codes';
import { STORE_UNAVAILABLE_HEADERS, storeUnavailable, toApiError, type ApiErrorBody } from '../http/api-error.filter';
import { EventStoreCorruptError, type EventStore } from '@lib/event-store';
import { AutoCompactionScheduler, EVENT_STORE, SessionClaims, SessionProjector, SessionReads } from '@lib/session';
import { NATS_TRANSPORT, SERVICE_CONFIG } from '../config/tokens';
import type { NatsTransport } from '../nats/nats-transport';
import type { ServiceConfig } from '../config/service-config';
import { eventStoreKind } from '../config/event-store-config';
import { ServiceMetrics } from './metrics';
import { HealthTransitions } from './health-transitions';
import { markExpectedAnswer } from './request-log-level';
import { SummarizerFailureLog } from './summarizer-failure-log';
import { StoreWriteHealth } from './store-write-health';
import { ReadModelsDamage } from './read-models-damage';
import { BoundedHead } from './bounded-head';
import { ErasureOnDisk } from './erasure-on-disk';

/**
 * Whether a follower of the log that has read it up to `readTo` (bigint: its checkpoint, or the
 * readable head it skipped to past a log tail of deleted events, see `headToSkipTo`) is behind the
 * store's head `head` (null: the store did not answer).
 */
function lagOf(readTo: bigint, head: bigint | null): 'behind' | 'caught-up' | 'unknown' {
  if (head === null) return 'unknown';
  return head > readTo ? 'behind' : 'caught-up';
}

/**
 * `GET /health`, `GET /health/ready` and `GET /metrics`: operations routes, never rate-limited (a
 * probe or a scraper must not be answered 429 on a busy instance) and open without an API key
 * (probes and scrapers rarely send one; no route shows content, only counts and states). Restrict
 * them at the network level if they must not be reachable.
 *
 * A load balancer probes `/health` every few seconds: each answer's request line is at debug
 * (without pino-http's made-up error on a 503), and a change of answer (200 → 503 and back) logs
 * one line at warn ({@link HealthTransitions}). `/health/ready` answers' lines are at debug too.
 */
@ApiTags('operations')
@SkipThrottle()
@Controller()
export class HealthController {
  private readonly logger = new Logger('Health');
  private readonly transitions = new HealthTransitions();
  /** The store's head for `/health` and `/metrics`: one read at a time, each waited for at most HEAD_ANSWER_MS. */
  private readonly head: BoundedHead;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projector: SessionProjector,
    private readonly scheduler: AutoCompactionScheduler,
    private readonly claims: SessionClaims,
    private readonly metrics: ServiceMetrics,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly reads: SessionReads,
    private readonly failures: SummarizerFailureLog,
    private readonly writes: StoreWriteHealth,
    private readonly damage: ReadModelsDamage,
    private readonly erasure: ErasureOnDisk,
    @Optional() @Inject(NATS_TRANSPORT) private readonly nats: NatsTransport | null = null,
  ) {
    this.head = new BoundedHead(() => this.store.headPosition());
  }

  /** The NATS transport's part of `/health` (null without NATS_URL); `head` is the store's head when it answered. */
  private natsHealth(head: bigint | null): z.output<typeof HealthSchema>['nats'] {
    if (!this.nats) return null;
    const { connection, since, error, decisionFeed: feed, commandsRetrying, commandsStalled, commandsUnstored, commandConsumer } = this.nats.state();
    return {
      connection,
      since,
      error,
      decisionFeed: feed && {
        checkpoint: feed.checkpoint.toString(),
        skippedTo: feed.skippedTo.toString(),
        // Caught up also when only deleted events of an interrupted erasure lie past its checkpoint: the feed skipped them.
        lag: lagOf(feed.skippedTo, head),
        lastError: feed.lastError,
        lastErrorAt: feed.lastErrorAt,
        anotherLog: feed.anotherLog && {
          foundPosition: feed.anotherLog.foundPosition.toString(),
          headPosition: feed.anotherLog.headPosition.toString(),
          resumedAfter: feed.anotherLog.resumedAfter.toString(),
          problem: feed.anotherLog.problem,
          at: feed.anotherLog.at,
        },
      },
      commandsRetrying,
      commandsStalled,
      commandsUnstored,
      commandConsumer: commandConsumer && {
        pending: commandConsumer.pending,
        idleSeconds: commandConsumer.idleSeconds,
        stuck: commandConsumer.stuck,
        recreated: commandConsumer.recreated,
        lastRecreatedAt: commandConsumer.lastRecreatedAt,
      },
    };
  }

  /**
   * Liveness (a Kubernetes `livenessProbe`): 200 whenever the process answers, within kubelet's default 1 s
   * probe timeout whatever the store does (its head waited for at most HEAD_ANSWER_MS, {@link BoundedHead}), with the store's,
   * projector's and NATS connection's state in the body (`status: "unavailable"` and
   * `store.error` while the store does not answer; `status: "degraded"` and `store.lastWriteError`
   * while it answers reads but the last write failed, {@link StoreWriteHealth}). Never 503 for the
   * store: restarting the process does not bring a store back (`status: "degraded"` also while the projector's last batch
   * failed, `projector.lastError`: it retries; `status: "unavailable"` also once a
   * read, a command, the projector or the decisions feed found the read models damaged, with `readModels.damaged` saying to restart, {@link ReadModelsDamage},
   * and while the projector cannot write them because their disk is full, with `readModels.full` saying where), and a process restarted during a
   * store outage cannot serve reads until the store answers (its start-up catch-up reads the log),
   * while a running one keeps serving them from its read models. Alert on `event_store_up` and
   * `event_store_writable` in `/metrics`. Also says which build answers (`version`, `commit`: `config.build`) and
   * whether `/v1` needs an API key (`mode`), which `/ui` reads before asking for one.
   */
  @Get('health')
  @ApiOperation({
    summary:
      'Liveness: 200 while the process answers, with the build running (version, commit), whether /v1 needs an API key (mode) and the store and projector state (status "unavailable" and store.error while the store does not answer, readModels.full while the read models cannot be written because their disk is full, or readModels.damaged once a read, a command, the projector or the decisions feed found the read models damaged; "degraded" and store.lastWriteError while the store answers reads but the last write failed: never a 503)',
  })
  @ApiAnswer(HealthSchema, { errors: routeErrors(['any']) })
  async health(@Res({ passthrough: true }) res: { status(code: number): unknown; raw?: object }): Promise<z.output<typeof HealthSchema>> {
    const projector = this.projector.state();
    let head: bigint | null = null;
    let storeError: string | null = null;
    let refusedForGood = false;
    try {
      head = await this.head.head();
    } catch (err) {
      storeError = (err as Error).message;
      refusedForGood = err instanceof EventStoreCorruptError;
    }
    const lastWriteError = this.writes.lastWriteError();
    const damaged = this.damage.damaged();
    const nats = this.natsHealth(head);
    const body: z.output<typeof HealthSchema> = {
      status:
        storeError || projector.offLog || damaged || projector.readModelsFull
          ? 'unavailable'
          : // The projector failing (it retries): reads needing later positions wait meanwhile (newcomer ncops67 F1: "ok" while it could not follow).
            lastWriteError || projector.lastError !== null || nats?.commandConsumer?.stuck
            ? 'degraded'
            : 'ok',
      // Which build answers (build-identity.ts): a rolling upgrade's replicas told apart.
      version: this.config.build.version,
      commit: this.config.build.commit,
      store: { kind: eventStoreKind(this.config), headPosition: head?.toString() ?? null, error: storeError, lastWriteError },
      projector: {
        running: projector.running,
        checkpoint: projector.checkpoint.toString(),
        lag: lagOf(projector.checkpoint, head),
        lastError: projector.lastError,
      },
      readModels: { damaged, full: projector.readModelsFull },
      erasure: this.erasure.state(),
      autoCompactionsInProgress: this.scheduler.inProgress,
      autoCompactionsBackingOff: this.scheduler.backingOff,
      summarizer: { lastFailure: this.failures.lastFailure() },
      mode: this.config.apiKeys.size === 0 ? 'open (no API keys configured)' : 'api-keys',
      // Shown, never a reason for 503: HTTP commands and reads keep working while NATS is away (a stuck command consumer makes it degraded).
      nats,
    };
    res.status(200);
    // The raw Node response (Fastify's reply holds it), where pino-http looks for the mark.
    markExpectedAnswer(res.raw ?? res, 'debug');
    const change = this.transitions.observe(storeError, Date.now(), refusedForGood);
    if (change) this.logger.warn(change);
    return body;
  }

  /**
   * Readiness, for a readiness probe (Kubernetes `readinessProbe`, a load balancer's health check):
   * 200 once the read models have caught up with the log's head since this process started (the
   * rule reads wait for: `SessionReads.ready`) and while the store answers; otherwise 503 with the
   * error body reads would answer: `projection_behind` (with `catchingUpTo` and `checkpoint`) while
   * catching up, `store_unavailable` while the store does not answer, `read_models_damaged` once a
   * read, a command, the projector or the decisions feed found the read models damaged ({@link ReadModelsDamage}: until a restart),
   * `store_corrupt` once the event store's file is found damaged or replaced (every write refused until a restart), and
   * `store_unavailable` naming the file while the read models cannot be written for want of space (`readModels.full`).
   * Never waits longer than `/health`'s bounded read of the head.
   */
  @Get('health/ready')
  @ApiOperation({
    summary:
      'Readiness: 200 once the read models have caught up with the log since this process started and the store answers; 503 projection_behind or store_unavailable until then, store_unavailable while the read models cannot be written because their disk is full (readModels.full), read_models_damaged once a read, a command, the projector or the decisions feed found the read models damaged (until a restart), store_corrupt once the event store file was found damaged or replaced (until a restart)',
  })
  // Not ready: the read models are still catching up with the log (projection_behind), or the store does not answer or
  // holds another log than the read models were projected from (read_models_off_log: reads and writes are refused until they are
  // rebuilt), or a read, a command, the projector or the decisions feed found the read models damaged (read_models_damaged: a restart rebuilds them).
  @ApiAnswer(ReadinessSchema, {
    errors: routeErrors(['any'], ['projection_behind', 'store_unavailable', 'store_corrupt', 'read_models_off_log', 'read_models_damaged']),
  })
  async ready(
    @Res({ passthrough: true }) res: { status(code: number): unknown; header(name: string, value: string): unknown; raw?: object },
  ): Promise<z.output<typeof ReadinessSchema> | ApiErrorBody> {
    // A probe every few seconds: its request line at debug, whatever it answers (without pino-http's made-up error on a 503).
    markExpectedAnswer(res.raw ?? res, 'debug');
    // Read models of another log (a store restored under this replica): no read can be served until they are rebuilt.
    const projector = this.projector.state();
    const offLog = this.projector.readModelsOffLog();
    if (offLog !== null) {
      res.status(503);
      return { code: 'read_models_off_log', message: `not ready: ${offLog}; reads answer 503 read_models_off_log and writes 503 store_unavailable until then` };
    }
    // Damaged read models: reads meeting the damage answer 503 until the restart that rebuilds them.
    const damaged = this.damage.damaged();
    if (damaged) {
      res.status(503);
      return { code: 'read_models_damaged', message: `not ready: ${damaged.problem}` };
    }
    // The store's file damaged or replaced: every write is refused until a restart (ncrecheck70 F5: ready stayed 200). A store that
    // does not answer (an outage) leaves readiness to the reads' own check below: writes answer 503 themselves meanwhile.
    const refused = await this.head.head().then(
      () => null,
      (err: unknown) => (err instanceof EventStoreCorruptError ? err : null),
    );
    if (refused) {
      res.status(503);
      const { body } = toApiError(refused);
      return { ...body, message: `not ready: ${body.message}` };
    }
    // The read models' disk is full: writes are refused and reads needing a later position answer 503 until space is freed.
    if (projector.readModelsFull) {
      res.status(503);
      for (const [name, value] of Object.entries(STORE_UNAVAILABLE_HEADERS)) res.header(name, value);
      return storeUnavailable(false, `not ready: ${projector.readModelsFull}`);
    }
    try {
      await this.reads.ready();
    } catch (err) {
      const { status, body, headers } = toApiError(err);
      if (status !== 503) throw err;
      res.status(503);
      for (const [name, value] of Object.entries(headers ?? {})) res.header(name, value);
      return body;
    }
    return { status: 'ready', projector: { checkpoint: this.projector.checkpoint().toString() } };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  @ApiOperation({ summary: 'Prometheus metrics' })
  @ApiProduces('text/plain')
  @ApiResponse({ status: 200, description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } })
  @ApiErrorAnswers(routeErrors(['any']))
  async prometheus(): Promise<string> {
    this.metrics.projectorCheckpoint.set(Number(this.projector.checkpoint()));
    this.metrics.autoCompactionsRunning.set(this.scheduler.inProgress);
    this.metrics.autoCompactionsWaitingForClaim.set(this.scheduler.waitingForClaim);
    this.metrics.compactionCommandsWaitingForClaim.set(this.claims.commandsWaiting);
    this.metrics.storeWritable.set(this.writes.lastWriteError() === null ? 1 : 0);
    this.metrics.readModelsDamaged.set(this.damage.damaged() === null ? 0 : 1);
    this.metrics.readModelsFull.set(this.projector.readModelsFull() === null ? 0 : 1);
    this.metrics.autoCompactionsBackingOff.set(this.scheduler.backingOff);
    if (this.nats) {
      const { connection, decisionFeed, commandsRetrying, commandsStalled, commandsUnstored, commandConsumer } = this.nats.state();
      this.metrics.natsConnected.set(connection === 'connected' ? 1 : 0);
      this.metrics.natsCommandsPending.set(commandConsumer?.pending ?? 0);
      this.metrics.natsCommandsPendingIdle.set(commandConsumer?.idleSeconds ?? 0);
      this.metrics.natsCommandConsumerStuck.set(commandConsumer?.stuck ? 1 : 0);
      this.metrics.natsCommandsRetrying.set(commandsRetrying);
      this.metrics.natsCommandsStalled.set(commandsStalled);
      this.metrics.natsCommandsUnstored.set(commandsUnstored);
      if (decisionFeed) {
        this.metrics.decisionFeedCheckpoint.set(Number(decisionFeed.checkpoint));
        this.metrics.decisionFeedPaused.set(decisionFeed.lastError === null ? 0 : 1);
      }
    }
    try {
      this.metrics.storeHead.set(Number(await this.head.head()));
      this.metrics.storeUp.set(1);
    } catch {
      // the health endpoint reports the store's error
      this.metrics.storeUp.set(0);
    }
    return this.metrics.registry.metrics();
  }
}
