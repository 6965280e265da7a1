/**
 * Prometheus metrics (prom-client) on a registry of our own, served at `GET /metrics`.
 */
import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolConnections } from '@lib/event-store';
import type { BuildIdentity } from '../config/build-identity';

/**
 * Buckets (seconds) of the duration histograms, HTTP requests and NATS commands alike: 1 ms to
 * 2.5 s for ordinary answers, then 5 s (reads wait up to MAX_WAIT_MS, 5 s by default), 10 s, 30 s
 * (counting's timeout), 60 s (REQUEST_TIMEOUT_MS's default) and 120 s (NATS commands held and
 * retried in place while the store is away), then +Inf.
 */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Where a metric declared with {@link counter}, {@link gauge} or {@link histogram} is registered: the service's registry, or none yet (`null`: registered later, as the NATS metrics are). */
type Registered = Registry | null;

/** A counter named `name` with `help` and `labelNames` (none by default), registered in `registry` unless null. */
function counter<T extends string = string>(registry: Registered, name: string, help: string, labelNames: readonly T[] = []): Counter<T> {
  return new Counter({ name, help, labelNames, registers: registry ? [registry] : [] });
}

/** A gauge named `name` with `help` and `labelNames` (none by default), registered in `registry` unless null. */
function gauge<T extends string = string>(registry: Registered, name: string, help: string, labelNames: readonly T[] = []): Gauge<T> {
  return new Gauge({ name, help, labelNames, registers: registry ? [registry] : [] });
}

/** A histogram of durations in seconds ({@link DURATION_BUCKETS}) named `name` with `help` and `labelNames`, registered in `registry` unless null. */
function histogram<T extends string = string>(registry: Registered, name: string, help: string, labelNames: readonly T[] = []): Histogram<T> {
  return new Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers: registry ? [registry] : [] });
}

/**
 * The name of the build-info gauge: the conventional `<program>_build_info` (as `prometheus_build_info`,
 * `node_exporter_build_info`). The service's other metrics carry no common prefix (`compactions_total`,
 * `event_store_up`); this one is named after the program, `session-service`, so that it is told apart
 * from other programs' build info where their series meet (a federation, a shared dashboard).
 */
export const BUILD_INFO_METRIC = 'session_service_build_info';

/** The `tenant` label of an HTTP answer no tenant was resolved for (no key, an unknown one, `/health`, an answer given before the key check). */
export const NO_TENANT_LABEL = 'none';

/** The service's Prometheus registry and its metrics (durations in seconds). */
@Injectable()
export class ServiceMetrics {
  readonly registry = new Registry();
  /** HTTP requests by method, route, status and tenant (`http-metrics.ts`' `tenantLabel`: a configured tenant, `default` in open mode, `none` when unresolved); seconds. */
  readonly httpDuration = histogram(
    this.registry,
    'http_request_duration_seconds',
    "HTTP request duration in seconds, by method, route pattern, status and tenant (the API key's tenant; default in open mode; none without a resolved tenant)",
    ['method', 'route', 'status', 'tenant'],
  );
  /** Projector checkpoint (global position). */
  readonly projectorCheckpoint = gauge(this.registry, 'projector_checkpoint_position', 'Last global position applied by the projector');
  /** Store head position. */
  readonly storeHead = gauge(this.registry, 'event_store_head_position', 'Global position of the last event in the store');
  /** 1 when the store answered its head read at this scrape, 0 when it did not (what to alert on: `/health` stays 200). */
  readonly storeUp = gauge(
    this.registry,
    'event_store_up',
    'Whether the event store answered at this scrape: 1 yes, 0 no (writes answer 503 store_unavailable meanwhile)',
  );
  /**
   * 0 while the last write to the store failed (503 `store_unavailable`: e.g. a SQLite file locked by
   * another process, a read-only PostgreSQL), 1 otherwise; back to 1 at the next write that succeeds.
   * Reads may answer meanwhile (`event_store_up` 1): alert on both.
   */
  readonly storeWritable = gauge(
    this.registry,
    'event_store_writable',
    'Whether the last write to the event store succeeded: 0 while writes fail (503 store_unavailable; reads may still answer, see event_store_up), 1 otherwise',
  );
  /** Writes (appends, stream deletions) the store failed (503 `store_unavailable`), by the cause's `code` (`writeFailureCode` in store-write-health.ts); not those refused up front while the read models' disk is full. */
  readonly storeWriteFailures = counter(
    this.registry,
    'event_store_write_failures_total',
    "Writes to the event store that failed (answered 503 store_unavailable), by the cause's code (e.g. SQLITE_BUSY, ECONNREFUSED, a PostgreSQL SQLSTATE; unavailable when none, outcome_unknown when the answer was lost); writes refused without trying the store while read_models_full is 1 are not counted",
    ['code'],
  );
  /** 1 once a read, a command, the projector or the decisions feed found the read models damaged (503 `read_models_damaged`) until the restart that rebuilds them, else 0. */
  readonly readModelsDamaged = gauge(
    this.registry,
    'read_models_damaged',
    'Whether a read, a command, the projector or the decisions feed found the read models file damaged (reads answer 503 read_models_damaged): 1 until the service is restarted, which rebuilds them from the log; else 0',
  );
  /** 1 while the projector cannot write the read models because their disk is full (`/health`'s `readModels.full`), else 0. */
  readonly readModelsFull = gauge(
    this.registry,
    'read_models_full',
    'Whether the projector cannot write the read models because their disk is full (writes answer 503 store_unavailable, reads needing a later position 503 projection_behind at once): 1 until a batch commits once space is freed, else 0',
  );
  /** With NATS_URL: 1 while the NATS connection is up, 0 while it is lost (reconnecting) or closed; absent without NATS_URL. */
  readonly natsConnected = gauge(null, 'nats_connected', 'With NATS_URL: 1 while the NATS connection is up, 0 while it is lost (reconnecting) or closed');
  /** With NATS_URL: the last global position the decisions feed handled. */
  readonly decisionFeedCheckpoint = gauge(
    null,
    'nats_decision_feed_checkpoint_position',
    'With NATS_URL: last global position handled by the NATS decisions feed',
  );
  /** With NATS_URL: 1 while the decisions feed is paused (a publish failed; it retries), else 0. */
  readonly decisionFeedPaused = gauge(
    null,
    'nats_decision_feed_paused',
    'With NATS_URL: 1 while the NATS decisions feed is paused (a publish failed; it retries), else 0',
  );
  /** With NATS_URL: commands held and retried in place because the service cannot do them now (503 `store_unavailable`, `counting_timeout`). */
  readonly natsCommandsRetrying = gauge(
    null,
    'nats_commands_retrying',
    "With NATS_URL: NATS commands held and retried in place because the service cannot do them now (503 store_unavailable, counting_timeout); their sessions' later commands wait behind them",
  );
  /** With NATS_URL: commands applied and answered live but left for redelivery because the results stream did not store their answer. */
  readonly natsCommandsUnstored = gauge(
    null,
    'nats_commands_unstored',
    'With NATS_URL: NATS commands applied and answered live but left for redelivery because the results stream did not store their answer (full, missing): redelivered 1 s, 2 s, ... up to 60 s apart; see /health nats.error',
  );
  /** With NATS_URL: commands held that have waited 3 ack waits or more behind an earlier command of their session still in the command stream. */
  readonly natsCommandsStalled = gauge(
    null,
    'nats_commands_stalled',
    'With NATS_URL: NATS commands held that have waited 3 ack waits or more behind an earlier command of their session still in the command stream (each logged once at warn); an earlier command whose answer is published already is removed from the stream',
  );
  /** With NATS_URL: commands in the command stream the durable consumer has not delivered yet (its `num_pending`), at this replica's last check of it. */
  readonly natsCommandsPending = gauge(
    null,
    'nats_commands_pending',
    "With NATS_URL: NATS commands in the command stream not yet delivered to any replica (the durable consumer's num_pending), as this replica's last check of the consumer found them (every NATS_CONSUMER_STUCK_MS / 5, 1 to 10 s)",
  );
  /** With NATS_URL: while commands are pending, seconds the durable consumer has delivered none (0 when none is pending). */
  readonly natsCommandsPendingIdle = gauge(
    null,
    'nats_commands_pending_idle_seconds',
    "With NATS_URL: while NATS commands are pending, seconds the durable command consumer has delivered none (to any replica), as this replica's checks found; 0 when none is pending. With a replica asking for commands, past NATS_CONSUMER_STUCK_MS the consumer is taken as stuck (nats_command_consumer_stuck) and re-created",
  );
  /** With NATS_URL: 1 while this replica finds the durable command consumer stuck (commands pending, none delivered for NATS_CONSUMER_STUCK_MS), else 0. */
  readonly natsCommandConsumerStuck = gauge(
    null,
    'nats_command_consumer_stuck',
    'With NATS_URL: 1 while this replica finds the durable command consumer stuck (commands pending, none delivered for NATS_CONSUMER_STUCK_MS while the replica asked for them; /health nats.commandConsumer.stuck says what was done), until it is seen delivering again; else 0',
  );
  /** With NATS_URL: times this replica re-created the durable command consumer because it was stuck. */
  readonly natsCommandConsumerRecreations = counter(
    null,
    'nats_command_consumer_recreations_total',
    'With NATS_URL: times this replica deleted and re-created the durable command consumer because it was stuck',
  );
  /**
   * With NATS_URL: NATS commands this replica handled, once per delivery it started, by `kind`
   * (`append`, `messages`, `compact`, `policy`; `unknown` for a subject naming none), `outcome`
   * (`HandledCommand` in nats-command-consumer.ts: `ok`, `rejected`, `failed`, `requeued`) and `code`
   * (the error code of `rejected` and `failed`, else empty).
   */
  readonly natsCommands = counter(
    null,
    'nats_commands_total',
    'With NATS_URL: NATS commands handled, by kind (unknown: the subject names none), outcome (ok: answered and acknowledged; rejected: a 4xx, terminated; failed: a 5xx after 5 attempts, terminated; requeued: left for redelivery) and code (the error code of rejected and failed, else empty)',
    ['kind', 'outcome', 'code'],
  );
  /** With NATS_URL: those of `nats_commands_total` JetStream delivered before (a replica crashed or stopped, the ack wait passed, or one was requeued), by `kind`. */
  readonly natsCommandsRedelivered = counter(
    null,
    'nats_commands_redelivered_total',
    'With NATS_URL: NATS commands handled that JetStream had delivered before (Delivery-Count over 1: a replica crashed or stopped, the ack wait passed, or the command was requeued), by kind',
    ['kind'],
  );
  /** With NATS_URL: the time from the start of a command's handling to its answer (retries in place included), by `kind` and `outcome`; seconds. */
  readonly natsCommandDuration = histogram(
    null,
    'nats_command_duration_seconds',
    "With NATS_URL: NATS command duration in seconds, from the start of its handling (after its session's earlier commands) to its answer, retries in place included, by kind and outcome",
    ['kind', 'outcome'],
  );
  /**
   * Conversation events this replica appended (HTTP and NATS), by `type` (`user`, `assistant`,
   * `tool`, `system`, `summary`); a retry writes nothing and counts nothing. An import's progress.
   */
  readonly eventsAppended = counter(
    this.registry,
    'events_appended_total',
    'Conversation events this replica appended (HTTP and NATS), by type (user, assistant, tool, system, summary); retries that wrote nothing are not counted',
    ['type'],
  );
  /** Auto-compactions in progress. */
  readonly autoCompactionsRunning = gauge(this.registry, 'auto_compactions_in_progress', 'Sessions with an automatic compaction running');
  /** Sessions in auto-compaction backoff (failed compactions in a row at `AUTO_COMPACTION_MAX_FAILURES` or over), as this replica knows them. */
  readonly autoCompactionsBackingOff = gauge(
    this.registry,
    'auto_compactions_backing_off',
    'Sessions whose automatic compaction backs off after AUTO_COMPACTION_MAX_FAILURES or more failed compactions in a row (as this replica saw them)',
  );
  /** Compaction passes answered (commanded and automatic; not dry runs, nor answers replaying an earlier decision) by origin, outcome and noop reason (empty unless `noop`). */
  readonly compactions = counter(
    this.registry,
    'compactions_total',
    'Compaction passes answered (not dry runs), by origin (command, auto), outcome and reason (a noop: its reason; a failure: its failureKind; empty otherwise)',
    ['origin', 'outcome', 'reason'],
  );
  /** Dry runs answered (previews: nothing written), by the outcome the pass would have had and noop reason. */
  readonly compactionDryRuns = counter(
    this.registry,
    'compaction_dry_runs_total',
    'Compaction dry runs answered (nothing written), by the outcome the pass would have had and noop reason',
    ['outcome', 'reason'],
  );
  /**
   * Summarizer (model) calls made by compaction passes, by origin, the outcome the pass answered
   * (`error` when its command ended in an error, e.g. the session erased meanwhile) and `reply`:
   * `used` (in the summary of the decision written), `failed` (the calls of a pass that recorded a
   * failure: no summary was written from them) or `discarded` (the pass was planned again, met
   * another pass's decision, or wrote nothing); see `SummarizerReplyLabel`.
   */
  readonly summarizerCalls = counter(
    this.registry,
    'summarizer_calls_total',
    'Summarizer calls made by compaction passes (HTTP requests that reached the model endpoint, retries included; the extractive summarizer counts one per summary), by origin, the outcome the pass answered (error: the command failed) and reply (used: in the summary of the decision written; failed: calls of a pass that recorded a failure, no summary written from them; discarded: replies the pass did not use)',
    ['origin', 'outcome', 'reply'],
  );
  /** Tokens the summarizer endpoint reported for those calls, by origin, outcome, reply and `type` (`prompt`, `completion`). */
  readonly summarizerTokens = counter(
    this.registry,
    'summarizer_tokens_total',
    'Tokens the summarizer endpoint reported for the calls of summarizer_calls_total, by origin, outcome, reply (used, failed, discarded) and type (prompt, completion)',
    ['origin', 'outcome', 'reply', 'type'],
  );
  /** Of `summarizer_calls_total`, the calls that were an HTTP retry of a failed attempt, by origin, outcome and reply. */
  readonly summarizerRetries = counter(
    this.registry,
    'summarizer_retries_total',
    'Of summarizer_calls_total, the calls that were a retry of a failed HTTP attempt (SUMMARIZER_MAX_RETRIES), by origin, outcome and reply',
    ['origin', 'outcome', 'reply'],
  );
  /** Of `summarizer_calls_total`, the calls whose token usage the endpoint did not report (their tokens are unknown, not in `summarizer_tokens_total`). */
  readonly summarizerUnreportedUsageCalls = counter(
    this.registry,
    'summarizer_unreported_usage_calls_total',
    'Of summarizer_calls_total, the calls whose token usage the endpoint did not report (a failed attempt, or a reply without readable usage): their tokens are unknown and not in summarizer_tokens_total; by origin, outcome and reply',
    ['origin', 'outcome', 'reply'],
  );
  /** Automatic passes deferred because the window has not grown enough since a pass that left the trigger firing (DESIGN §3.5). */
  readonly autoCompactionsDeferred = counter(
    this.registry,
    'auto_compactions_deferred_total',
    'Automatic compactions skipped until the window grows (the last automatic pass left the trigger firing)',
  );

  /**
   * Automatic passes this replica put off because another replica held the session's claim
   * (PostgreSQL, SQLite; once per wait: the session is looked at again until the claim is free, then
   * compacted here only when its trigger still fires).
   */
  readonly autoCompactionsClaimedElsewhere = counter(
    this.registry,
    'auto_compactions_claimed_elsewhere_total',
    'Automatic compactions this replica did not start because another replica was compacting the session (PostgreSQL or SQLite claim); the session is looked at again when that pass ends',
  );
  /** Sessions whose automatic pass waits now because another replica holds the session's claim. */
  readonly autoCompactionsWaitingForClaim = gauge(
    this.registry,
    'auto_compactions_waiting_for_claim',
    'Sessions whose automatic compaction waits because another replica is compacting them (PostgreSQL or SQLite claim)',
  );
  /** Commanded compactions (HTTP, NATS) waiting now for their session's claim, held by another pass (PostgreSQL, SQLite). */
  readonly compactionCommandsWaitingForClaim = gauge(
    this.registry,
    'compaction_commands_waiting_for_claim',
    'Compaction commands (HTTP, NATS) waiting because another pass is compacting their session (PostgreSQL or SQLite claim); each then decides on the session that pass left',
  );

  /** Registers the NATS metrics (once NATS_URL is known to be set: without it they are not served at all, rather than a misleading 0). */
  registerNatsMetrics(): void {
    if (this.registry.getSingleMetric('nats_connected')) return;
    for (const metric of [
      this.natsConnected,
      this.decisionFeedCheckpoint,
      this.decisionFeedPaused,
      this.natsCommandsRetrying,
      this.natsCommandsStalled,
      this.natsCommandsUnstored,
      this.natsCommandsPending,
      this.natsCommandsPendingIdle,
      this.natsCommandConsumerStuck,
      this.natsCommandConsumerRecreations,
      this.natsCommands,
      this.natsCommandsRedelivered,
      this.natsCommandDuration,
    ])
      this.registry.registerMetric(metric);
  }

  /**
   * Serves {@link BUILD_INFO_METRIC}`{version, commit, node_version} 1`: which build runs (`version` of the
   * service's package.json, the commit it was built from, `unknown` when neither `BUILD_COMMIT` nor a checkout's
   * `.git` says, and Node.js's `process.version`). Its value is always 1: join it onto other series by instance,
   * e.g. `… * on(instance) group_left(version, commit) session_service_build_info`. Called once.
   */
  registerBuildInfo(build: BuildIdentity): void {
    if (this.registry.getSingleMetric(BUILD_INFO_METRIC)) return;
    gauge(
      this.registry,
      BUILD_INFO_METRIC,
      "Which build of the session service runs, always 1: version (package.json), commit (BUILD_COMMIT, else the checkout's .git HEAD, else unknown) and node_version",
      ['version', 'commit', 'node_version'],
    ).set({ version: build.version, commit: build.commit, node_version: build.nodeVersion }, 1);
  }

  /**
   * Serves `event_store_pool_connections{state="total"|"idle"|"waiting"}`, read from `read` at each
   * scrape (the PostgreSQL store's pool: connections open or opening, idle ones, requests waiting
   * for one). Called once, only for a store with a pool (PostgreSQL): without one the gauge is
   * absent rather than a misleading 0.
   */
  registerPoolConnections(read: () => PoolConnections): void {
    if (this.registry.getSingleMetric('event_store_pool_connections')) return;
    new Gauge({
      name: 'event_store_pool_connections',
      help: 'PostgreSQL: connections of the event store pool by state (total: open or opening, at most DATABASE_POOL_SIZE; idle: of those, unused; waiting: requests queued for a connection)',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const { total, idle, waiting } = read();
        this.set({ state: 'total' }, total);
        this.set({ state: 'idle' }, idle);
        this.set({ state: 'waiting' }, waiting);
      },
    });
  }

  /**
   * Serves `summarizer_rate_limit_pause_seconds`, read from `remainingMs` at each scrape: the
   * seconds left of the pause the model endpoint's last HTTP 429 set (0: none; no call is sent to
   * it meanwhile, see `EndpointPause`). Called once, only for a summarizer that pauses (the model
   * summarizer): without one the gauge is absent rather than a misleading 0.
   */
  registerSummarizerPause(remainingMs: () => number): void {
    if (this.registry.getSingleMetric('summarizer_rate_limit_pause_seconds')) return;
    new Gauge({
      name: 'summarizer_rate_limit_pause_seconds',
      help: 'Seconds left of the pause the model endpoint set by answering HTTP 429 (rate limited): until then no summarizer call is sent to it, every compaction pass waits (or fails at once, no call made, when it is longer than a call waits); 0 when none',
      registers: [this.registry],
      collect() {
        this.set(remainingMs() / 1000);
      },
    });
  }

  /**
   * Serves `session_state_cache_bytes` (the estimated heap bytes of the write side's cached session
   * states, bounded by `SESSION_CACHE_MAX_MB`, see `estimatedStateBytes`) and
   * `session_state_cache_sessions` (how many are cached, at most 2,000), read from `read` at each
   * scrape. Called once.
   */
  registerSessionStateCache(read: () => { bytes: number; sessions: number }): void {
    if (this.registry.getSingleMetric('session_state_cache_bytes')) return;
    new Gauge({
      name: 'session_state_cache_bytes',
      help: "Estimated heap bytes of the write side's cached session states (each keeps its active events whole); SESSION_CACHE_MAX_MB bounds it, the least recently used going first",
      registers: [this.registry],
      collect() {
        this.set(read().bytes);
      },
    });
    new Gauge({
      name: 'session_state_cache_sessions',
      help: 'Session states the write side holds in memory (at most 2,000, fewer when SESSION_CACHE_MAX_MB is reached); a command on another loads its active window from the store',
      registers: [this.registry],
      collect() {
        this.set(read().sessions);
      },
    });
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
