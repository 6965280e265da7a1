/**
 * The NATS JetStream transport (issue 15), present only when `NATS_URL` is set: it connects,
 * creates the streams and the shared consumer when missing, then consumes commands
 * ({@link NatsCommandConsumer}) and publishes the decisions feed ({@link DecisionFeedPublisher}).
 *
 * At start it tries each server once. A server that is not there (refused, timed out,
 * unreachable: `isNatsServerUnavailable`) does not stop the start: one warn line names `NATS_URL`
 * (credentials masked) and says the service retries, HTTP serves, `/health` shows the connection
 * `connecting` with the error, and the client keeps trying (its own `waitOnFirstConnect`, every
 * `reconnectTimeWait`, 2 s); once a server answers, the streams, the consumer and the feed start
 * as they would have at start, with one line. What only a change of configuration fixes — a host
 * that does not resolve, credentials refused, `tls://` against a server without TLS, JetStream
 * not enabled — ends the start (`natsConnectError`); found only when a server that was down at
 * start comes up, it is logged (error) and shown in `/health` (`closed` with the error), HTTP
 * still serving: restart once it is fixed. `tls://` servers require TLS (`natsUrlRequiresTls`).
 *
 * Once connected: the client pings every `NATS_PING_INTERVAL_MS` and takes the connection as lost
 * when {@link NATS_MAX_PINGS_OUT} pings are unanswered at the next (a frozen or partitioned server);
 * after every reconnect, and when the consumer or the feed meets a stream or the consumer missing,
 * whatever the server lost (an empty store) is created again ({@link NatsTransport.ensureAgain}).
 * Every `NATS_CONSUMER_STUCK_MS` / 5 (1–10 s) it reads the command consumer's info
 * ({@link StuckConsumerGuard}): a consumer that delivers nothing while commands are pending is
 * reported (`/health` degraded, `/metrics`, one error line) and re-created, and commands the
 * consumer recorded acknowledged that the stream still holds are removed (`removeLeftovers`).
 *
 * Nothing at start waits for the event store: a replica started while it does not answer (a
 * PostgreSQL outage or failover) starts with its feed paused and retrying, and holds the commands
 * it takes until the store answers (as it does during any outage), like a replica without NATS.
 * At shutdown it stops pulling, gives the commands pulled but not started (and those waiting for
 * the store) back to JetStream, finishes and acknowledges the started ones, and drains the
 * connection — before the store closes; a connection still being waited for is given up.
 *
 * Client: `@nats-io/transport-node` + `@nats-io/jetstream` (the maintained NATS.js v3 packages).
 * Nest's NATS microservice transport speaks core NATS request/reply only (no JetStream streams,
 * durable consumers, acknowledgements or message-id de-duplication), which this transport needs.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type ConsumerInfo, type JetStreamManager } from '@nats-io/jetstream';
import { COMMAND_EVENT_STORE, EVENT_STORE, ReadModelStore } from '@lib/session';
import type { EventStore } from '@lib/event-store';
import { SERVICE_CONFIG } from '../config/tokens';
import { natsUrlRequiresTls, type ServiceConfig } from '../config/service-config';
import { natsConnectionTarget } from '../config/nats-credentials';
import { requestSchemas } from '../http/request-schemas';
import { OPEN_MODE_TENANT } from '../auth/api-key.guard';
import { ServiceMetrics } from '../observability/metrics';
import { ReadModelsDamage } from '../observability/read-models-damage';
import { countNatsCommands } from '../observability/nats-command-metrics';
import { natsNames, type NatsNames } from './nats-names';
import { ackWaitLine, ensureStreams, isMissingStreamError, settleMsFor, STREAM_SETTLE_MS, type EnsureCause } from './nats-streams';
import { StuckConsumerGuard, type StuckConsumerState } from './stuck-consumer';
import { NatsCommandExecutor } from './nats-command-executor';
import { DEFAULT_RETRY_BACKOFF, NatsCommandConsumer, UNSTORED_REDELIVERY } from './nats-command-consumer';
import { isNatsServerUnavailable, natsConnectError, natsSetUpError } from './nats-connect-error';
import { natsServersShown } from './nats-servers-shown';
import { DecisionFeedPublisher, type DecisionFeedState } from './decision-feed-publisher';
import { HandledErasures } from './handled-erasures';

/**
 * The NATS connection's state: `connecting` before the first connection (at start, or waiting for
 * a server that was down then); `connected`; `reconnecting` (the server went away: the client tries
 * again, forever, with commands and decisions waiting); `closed` (shut down, or given up: see `error`).
 */
export type NatsConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'closed';

/**
 * How long (ms) one attempt at a NATS server may take, from the TCP connection to the server's greeting and the
 * client's handshake: a server that accepts connections but does not answer as NATS (frozen, or another service's
 * port) held the start this long per attempt (the client's default, 20 s: newcomer ncops65 F4 saw HTTP listen
 * after 25.8 s, nothing logged). A NATS server answers within milliseconds, TLS included.
 */
export const NATS_CONNECT_TIMEOUT_MS = 5000;

/** How long (ms) the client waits between two attempts at a server (the client's default `reconnectTimeWait`, plus up to 100 ms of jitter). */
export const NATS_RETRY_WAIT_MS = 2000;

/**
 * Pings left unanswered before the client takes the connection as lost (at the next ping, so
 * `NATS_PING_INTERVAL_MS` × 2 to 3 after the server stopped answering).
 */
export const NATS_MAX_PINGS_OUT = 2;

/** How long (ms) to wait before trying again to re-create streams that could not be re-created. */
export const ENSURE_RETRY_MS = 5000;

/** The transport's state for `/health` and `/metrics`: the connection's and the decisions feed's (null before it starts). */
export interface NatsTransportState {
  connection: NatsConnectionState;
  /** ISO-8601 time the connection entered its state. */
  since: string;
  /**
   * Why the connection is not up, null while it is (or at shutdown): while `connecting`, why the
   * start's attempt failed (the client keeps trying); while `closed`, why the transport gave up
   * (a misconfiguration found once a server answered, e.g. credentials refused). While `connected`,
   * a stream or the command consumer missing on the server (`NATS stream or consumer missing on the
   * server: …`) until it is re-created; else, while commands are left for redelivery because their
   * answers cannot be stored on the results stream (`commandsUnstored`), why (`NATS results stream
   * <name> did not store answers: …`); else, while the decisions feed is paused because the
   * decisions stream is full, `NATS decisions stream <name> is full: the decisions feed is paused at position <n> …`.
   */
  error: string | null;
  decisionFeed: DecisionFeedState | null;
  /**
   * Commands this replica holds and retries in place because the service cannot do them now (a 503
   * such as `store_unavailable`: see `TRANSIENT_CODES`); their sessions' later commands wait behind them. 0 before the consumer starts.
   */
  commandsRetrying: number;
  /**
   * Commands this replica holds that have waited 3 ack waits or more behind an earlier command of
   * their session still in the command stream (each logged once at warn): see `OrderWaits`. 0 before the consumer starts.
   */
  commandsStalled: number;
  /**
   * Commands this replica applied (or looked up) and answered live, then left for redelivery
   * because the results stream did not store their answer (full, missing, NATS lost): redelivered
   * 1 s, 2 s, … up to 60 s apart (`UNSTORED_REDELIVERY`), each redelivery answering again live. 0 before the consumer starts.
   */
  commandsUnstored: number;
  /**
   * The durable command consumer as this replica's periodic checks of its info find it
   * (stuck-consumer.ts): commands pending (never delivered), how long it has delivered none while
   * some are pending, and, while it is found stuck, what was found and done. Null before the consumer starts.
   */
  commandConsumer: StuckConsumerState | null;
}

/** A promise of a number and the function that resolves it (the first call wins). */
function abandonment(): { promise: Promise<number>; resolve: (afterMs: number) => void } {
  let resolve: (afterMs: number) => void = () => undefined;
  const promise = new Promise<number>((r) => (resolve = r));
  return { promise, resolve };
}

/** See the module doc. */
@Injectable()
export class NatsTransport implements OnApplicationBootstrap, OnApplicationShutdown {
  private nc: NatsConnection | null = null;
  private consumer: NatsCommandConsumer | null = null;
  /** Checks the command consumer's info: a stuck consumer is reported and re-created (null before the consumer starts). */
  private stuckGuard: StuckConsumerGuard | null = null;
  private feed: DecisionFeedPublisher | null = null;
  private readonly logger = new Logger('Nats');
  private connection: NatsConnectionState = 'connecting';
  private since = new Date().toISOString();
  private error: string | null = null;
  /** Set when the shutdown starts: a connection still being waited for is given up. */
  private stopping = false;
  /** The wait for a server that was down at start, and the set-up after it (null when the start connected). */
  private waiting: Promise<void> | null = null;
  private jsm: JetStreamManager | null = null;
  /** A re-creation of the streams under way ({@link ensureAgain}), else null. */
  private ensuring: Promise<void> | null = null;
  /** The retry of a failed re-creation, when one is scheduled. */
  private ensureRetry: NodeJS.Timeout | null = null;
  /** Resolved by {@link stopDraining} with the time (ms) the shutdown waited for the orderly stop. */
  private readonly drainAbandoned = abandonment();
  /** What {@link stopDraining} was given, once it was called (null before). */
  private abandonedAfterMs: number | null = null;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly commandBus: CommandBus,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    // The commands' store: a redelivery's check of the log is part of its command (a failure is a failed write, /health).
    @Inject(COMMAND_EVENT_STORE) private readonly commandStore: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly metrics: ServiceMetrics,
    private readonly damage: ReadModelsDamage,
  ) {
    metrics.registerNatsMetrics();
  }

  /**
   * Connects and starts the transport; when no server is there (see the module doc), logs one warn
   * line and returns, the client waiting for one in the background.
   * @throws what `natsConnectError` makes of a failed connection other than a server not there
   *   (naming NATS_URL: a ConfigurationError when the host does not resolve; an Error when the
   *   credentials are refused, or TLS is required but not offered); what `natsSetUpError` makes of
   *   the server refusing the streams (JetStream not enabled, a name taken); a ConfigurationError
   *   (`natsConnectionTarget`) for credentials in NATS_URL and in NATS_USER/NATS_PASSWORD both, or
   *   different on two servers. Never the event store's errors (see the module doc).
   */
  async onApplicationBootstrap(): Promise<void> {
    const natsUrl = this.config.natsUrl!;
    // Credentials given twice or differently are refused by name (ConfigurationError), not as a failed connection.
    const options = this.connectOptions();
    let nc: NatsConnection;
    try {
      // Each server once: what is wrong is told now, before the service listens.
      nc = await connect(options);
    } catch (err) {
      const refusal = natsConnectError(err, natsUrl);
      if (!isNatsServerUnavailable(err)) throw refusal;
      this.error = refusal.message;
      this.logger.warn(
        `${refusal.message} (every ${NATS_RETRY_WAIT_MS / 1000} s); HTTP serves meanwhile, NATS commands wait in their stream and decisions are published once connected`,
      );
      this.waiting = this.connectOnceAnswered();
      return;
    }
    try {
      await this.startOn(nc);
    } catch (err) {
      await nc.close();
      throw natsSetUpError(err, natsUrl);
    }
  }

  /**
   * The client's options: `NATS_URL`'s servers, credentials, TLS required for `tls://`, reconnecting
   * forever once connected; with `waitOnFirstConnect`, also trying until a first server answers.
   * Every attempt is given up once the shutdown has started (the client's `reconnectToServer`
   * handler throws: the pending connect rejects, an open connection being re-established closes).
   */
  private connectOptions(waitOnFirstConnect = false): ConnectionOptions {
    const config = this.config;
    const { servers, credentials } = natsConnectionTarget(config.natsUrl!, config);
    return {
      ...credentials,
      servers,
      name: 'session-memory-compaction',
      maxReconnectAttempts: -1,
      reconnectTimeWait: NATS_RETRY_WAIT_MS,
      timeout: NATS_CONNECT_TIMEOUT_MS,
      // A server that stops answering without closing the connection (a partition, a frozen host) is lost after 2–3 intervals.
      pingInterval: config.natsPingIntervalMs,
      maxPingOut: NATS_MAX_PINGS_OUT,
      waitOnFirstConnect,
      reconnectToServer: () => {
        if (this.stopping) throw new Error('the service is shutting down');
        return null;
      },
      // An object, even empty, makes the client refuse a server that does not offer TLS.
      ...(natsUrlRequiresTls(config.natsUrl!) ? { tls: {} } : {}),
    };
  }

  /** Waits (the client's own retries) for a server that was down at start, then starts the transport on it; a misconfiguration found then closes it (see the module doc). */
  private async connectOnceAnswered(): Promise<void> {
    const natsUrl = this.config.natsUrl!;
    const waitingSince = Date.parse(this.since);
    let nc: NatsConnection;
    try {
      nc = await connect(this.connectOptions(true));
    } catch (err) {
      if (!this.stopping) this.giveUp(natsConnectError(err, natsUrl));
      return;
    }
    if (this.stopping) return nc.close();
    try {
      await this.startOn(nc);
    } catch (err) {
      await nc.close();
      if (!this.stopping) this.giveUp(natsSetUpError(err, natsUrl));
      return;
    }
    this.logger.log(
      `NATS connected (server ${nc.getServer()}) after ${Date.now() - waitingSince} ms: commands are consumed and decisions published (${natsServersShown(natsUrl)})`,
    );
  }

  /** The transport gives up (a misconfiguration found after the start): one error line, `/health` shows it closed with the error. */
  private giveUp(refusal: Error): void {
    this.error = refusal.message;
    this.enter('closed');
    this.logger.error(`NATS transport stopped: ${refusal.message}; HTTP keeps serving; restart the service once this is fixed`);
  }

  /** Creates the streams and the consumer on `nc`, then starts the decisions feed and the command consumer. */
  private async startOn(nc: NatsConnection): Promise<void> {
    const config = this.config;
    const names = natsNames(config.natsPrefix);
    this.nc = nc;
    this.error = null;
    this.enter('connected');
    void this.watch(nc);
    const jsm = await jetstreamManager(nc);
    this.jsm = jsm;
    const ackWait = ackWaitLine(names.commandConsumer, await ensureStreams(jsm, names, config.natsAckWaitMs, { settleMs: settleMsFor('start') }));
    if (ackWait) this.logger.warn(ackWait);
    const js = jetstream(nc);
    const openMode = config.apiKeys.size === 0;
    const tenants = openMode ? new Set([OPEN_MODE_TENANT]) : new Set(config.apiKeys.values());
    const executor = new NatsCommandExecutor(this.commandBus, this.store, requestSchemas(config), {
      prefix: names.prefix,
      tenants,
      maxBodyBytes: config.maxBodyBytes,
      openMode,
      replyPrefixes: config.natsReplyPrefixes,
      damage: this.damage,
      commandStore: this.commandStore,
      writeDeadlineMs: config.writeDeadlineMs,
    });
    // The feed's handled erasure records, checked by the consumer after each answer is stored.
    const erasures = new HandledErasures();
    this.feed = new DecisionFeedPublisher(
      this.store,
      this.readModels,
      nc,
      js,
      jsm,
      names,
      erasures,
      this.damage,
      () => void this.ensureAgain(`the decisions feed found ${names.decisionStream} missing`, 'met-missing'),
    );
    await this.feed.start();
    this.consumer = new NatsCommandConsumer(
      nc,
      js,
      jsm,
      executor,
      names,
      config.natsConcurrency,
      config.natsAckWaitMs,
      config.natsEraseHandledCommands,
      DEFAULT_RETRY_BACKOFF,
      config.natsReplyPrefixes,
      countNatsCommands(this.metrics),
      erasures,
    );
    this.consumer.onMissing = (what) =>
      void this.ensureAgain(`the command consumer found ${/^[a-z_]+$/.test(what) ? what.replace(/_/g, ' ') : what}`, 'met-missing');
    // No start-up line here: main.ts prints the one NATS line with its summary.
    await this.consumer.start();
    const consumer = this.consumer;
    this.stuckGuard = new StuckConsumerGuard({
      stream: names.commandStream,
      consumer: names.commandConsumer,
      stuckAfterMs: config.natsConsumerStuckMs,
      readInfo: () => {
        // While the connection is lost the server's view is unknown (the quiet time counts again once back).
        if (this.connection !== 'connected' || this.ensuring) return Promise.reject(new Error('NATS not connected, or streams being re-created'));
        return jsm.consumers.info(names.commandStream, names.commandConsumer);
      },
      askingSince: () => consumer.askingSince(),
      recreate: (seen) => this.recreateStuckConsumer(jsm, seen),
      onChecked: async (info) => void (await consumer.removeLeftovers(info.ack_floor.stream_seq)),
      onRecreated: () => this.metrics.natsCommandConsumerRecreations.inc(),
      log: this.logger,
    });
    this.stuckGuard.start();
  }

  /**
   * Re-creates the command consumer the stuck-consumer guard found stuck (stuck-consumer.ts), the
   * remedy that worked (newcomer ncnatsops F1): after a random wait of up to 1 s (replicas finding it
   * stuck at the same check do not all act at once), reads its info again and, only when the server
   * still has the consumer `seen` shows (same `created`) and it has delivered nothing since (same
   * `delivered.consumer_seq`), deletes it, waits {@link STREAM_SETTLE_MS} (as for a consumer met
   * missing), creates it again with `seen`'s configuration (unless another replica did meanwhile)
   * and pulls again at once. A consumer another replica re-created, or one delivering again, is left
   * alone (false). One at a time with the re-creation of missing streams ({@link ensureAgain}, which
   * the pull's `409 Consumer Deleted` joins).
   * @throws the server's error when the deletion or the creation fails (e.g. the NATS user may not delete the consumer).
   */
  private async recreateStuckConsumer(jsm: JetStreamManager, seen: ConsumerInfo): Promise<boolean> {
    const names = natsNames(this.config.natsPrefix);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 1000));
    if (this.ensuring || this.stopping || this.connection !== 'connected') return false;
    let recreated = false;
    const run = (async () => {
      let now: ConsumerInfo;
      try {
        now = await jsm.consumers.info(names.commandStream, names.commandConsumer);
      } catch (err) {
        // Deleted by another replica (or gone with its stream): re-created by whoever meets it missing.
        if (isMissingStreamError(err)) return;
        throw err;
      }
      if (String(now.created) !== String(seen.created) || now.delivered.consumer_seq !== seen.delivered.consumer_seq) return;
      await jsm.consumers.delete(names.commandStream, names.commandConsumer);
      await new Promise((resolve) => setTimeout(resolve, STREAM_SETTLE_MS));
      try {
        await jsm.consumers.info(names.commandStream, names.commandConsumer);
      } catch {
        await jsm.consumers.add(names.commandStream, { ...seen.config });
      }
      recreated = true;
      await this.consumer?.resubscribe().catch((err: Error) => this.logger.warn(`NATS command consumer: pulling again failed: ${err.message}`));
    })();
    this.ensuring = run.catch(() => undefined).finally(() => (this.ensuring = null));
    await run;
    return recreated;
  }

  /**
   * Creates again whichever stream or the command consumer the server no longer has (an empty store
   * after a lost volume, a `nats stream rm`): after every reconnect, and when the consumer or the feed
   * meets one missing (`why` says which; `cause` sets the settle wait before re-creating, see
   * `settleMsFor`: met missing while running, a deletion may still be removing the old stream's files).
   * When something was re-created: one warn line naming it, and the consumer pulls again at once. When the server refuses (e.g. no JetStream): `error`
   * (in `/health`) says so, one error line, and it is tried again after {@link ENSURE_RETRY_MS}.
   * One at a time: a call while one runs joins it. Never throws.
   */
  private ensureAgain(why: string, cause: Exclude<EnsureCause, 'start'>): Promise<void> {
    if (this.ensuring) return this.ensuring;
    if (!this.jsm || this.stopping || this.connection !== 'connected') return Promise.resolve();
    this.ensuring = this.recreate(this.jsm, why, cause).finally(() => (this.ensuring = null));
    return this.ensuring;
  }

  private async recreate(jsm: JetStreamManager, why: string, cause: Exclude<EnsureCause, 'start'>): Promise<void> {
    const names = natsNames(this.config.natsPrefix);
    try {
      const check = await ensureStreams(jsm, names, this.config.natsAckWaitMs, { settleMs: settleMsFor(cause) });
      if (check.created.length > 0) {
        // While they were being re-created, /health says so.
        this.error = `NATS stream or consumer missing on the server: ${check.created.join(', ')} (${why}); re-creating`;
        this.logger.warn(
          `NATS ${check.created.join(', ')} missing on the server ${this.nc?.getServer() ?? ''} (${why}): re-created; ${recreatedConsequences(check.created, names)}`,
        );
        // Should it fail, the consumer's next pull reaches it all the same (within 5 s of a failed pull, PULL_EXPIRES_MS of an open one).
        await this.consumer?.resubscribe().catch((err: Error) => this.logger.warn(`NATS command consumer: pulling again failed: ${err.message}`));
      }
      if (this.error?.startsWith('NATS stream or consumer missing')) this.error = null;
    } catch (err) {
      if (this.stopping) return;
      const text = `NATS stream or consumer missing on the server and not re-created (${why}): ${(err as Error).message}; tried again every ${ENSURE_RETRY_MS / 1000} s`;
      if (this.error !== text) this.logger.error(text);
      this.error = text;
      if (!this.ensureRetry) {
        this.ensureRetry = setTimeout(() => {
          this.ensureRetry = null;
          void this.ensureAgain(why, cause);
        }, ENSURE_RETRY_MS);
        this.ensureRetry.unref();
      }
    }
  }

  /** The connection's and the decisions feed's state (see {@link NatsTransportState}). */
  state(): NatsTransportState {
    const unstored = this.consumer?.unstoredAnswers ?? { count: 0, lastError: null };
    const names = natsNames(this.config.natsPrefix);
    const unstoredError =
      unstored.lastError === null
        ? null
        : `NATS results stream ${names.resultStream} did not store answers: ${unstored.lastError}; ${unstored.count} command(s) applied and answered live, left for redelivery (up to ${UNSTORED_REDELIVERY.maxMs / 1000} s apart) until it does`;
    const feed = this.feed?.state() ?? null;
    // A full decisions stream pauses the feed for as long as it stays full: said where the results stream's is (newcomer ncnats73 F3).
    const feedFullError = feed?.streamFull
      ? `NATS decisions stream ${names.decisionStream} is full: the decisions feed is paused at position ${feed.checkpoint} until it has room (nats.decisionFeed.lastError says what to do)`
      : null;
    return {
      connection: this.connection,
      since: this.since,
      error: this.error ?? unstoredError ?? feedFullError,
      decisionFeed: feed,
      commandsRetrying: this.consumer?.retrying ?? 0,
      commandsStalled: this.consumer?.stalled ?? 0,
      commandsUnstored: unstored.count,
      commandConsumer: this.stuckGuard?.state() ?? null,
    };
  }

  private enter(connection: NatsConnectionState): void {
    if (connection === this.connection) return;
    this.connection = connection;
    this.since = new Date().toISOString();
  }

  /** Follows the client's status events: one warn line when the connection is lost, one line when it is back. */
  private async watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' && this.connection === 'connected') {
        this.enter('reconnecting');
        this.logger.warn(`NATS connection lost (server ${status.server}): reconnecting; HTTP keeps serving, NATS commands and decisions wait`);
      } else if (status.type === 'reconnect') {
        const downMs = Date.now() - Date.parse(this.since);
        this.enter('connected');
        this.logger.log(`NATS connection back (server ${status.server}) after ${downMs} ms`);
        // What the consumer delivered while away is unknown: its quiet time counts again from now.
        this.stuckGuard?.reset();
        // The server may be back without its streams (an empty store): re-created if so.
        void this.ensureAgain('after a reconnect', 'reconnect');
      } else if (status.type === 'close') this.enter('closed');
    }
    // Closed by the client itself (not by the shutdown): e.g. the credentials refused when reconnecting.
    const closedBy = await nc.closed();
    if (closedBy instanceof Error && !this.stopping) this.giveUp(natsConnectError(closedBy, this.config.natsUrl!));
    this.enter('closed');
  }

  /**
   * Stops the consumer and the feed, then drains the connection. While the connection is lost, nothing
   * can be flushed, given back or drained (each would wait for the server for ever): the connection is
   * closed first, the commands this replica holds unacknowledged are redelivered after `NATS_ACK_WAIT_MS`.
   */
  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.ensureRetry) clearTimeout(this.ensureRetry);
    // Half of SHUTDOWN_TIMEOUT_MS had passed before this stop began (what stopped before it took that long: a
    // request or a model call still running), so the orderly stop is not waited for: its line says so, not that NATS was slow.
    const reachedBefore = this.abandonedAfterMs !== null;
    const orderly = this.stopInOrder();
    // A server that does not answer (frozen, a partition the client's pings have not noticed yet) holds the
    // orderly stop for ever: at half of SHUTDOWN_TIMEOUT_MS (stopDraining) the connection is closed without it.
    const abandonedAfterMs = await Promise.race([orderly.then(() => null), this.drainAbandoned.promise]);
    if (abandonedAfterMs === null) return;
    orderly.catch(() => undefined);
    if (this.nc && !this.nc.isClosed()) {
      const why = reachedBefore
        ? `half of SHUTDOWN_TIMEOUT_MS, ${abandonedAfterMs} ms, had passed before it could begin: a request or a model call still running held the shutdown`
        : `none within ${abandonedAfterMs} ms, half of SHUTDOWN_TIMEOUT_MS: the NATS server does not answer, or a command being handled waits on the event store; /health said which before the stop`;
      this.logger.warn(
        `shutting down without an orderly NATS stop (${why}): the connection is closed without draining; commands taken and not acknowledged are redelivered after NATS_ACK_WAIT_MS`,
      );
      // The feed stops following now: the store closes next, and a read failing then is the shutdown, not a pause to log.
      void this.feed?.stop().catch(() => undefined);
      await this.nc.close().catch(() => undefined);
    }
  }

  /**
   * Ends the wait of the shutdown's orderly stop (`onApplicationShutdown`): the connection is then closed
   * without draining (one warn line naming `afterMs`, the time waited). Called by the service's shutdown at
   * half of SHUTDOWN_TIMEOUT_MS; nothing happens when the stop is done already.
   */
  stopDraining(afterMs: number): void {
    this.abandonedAfterMs = afterMs;
    this.drainAbandoned.resolve(afterMs);
  }

  /** The orderly stop: the consumer and the feed stop, then the connection drains (or closes at once while lost). */
  private async stopInOrder(): Promise<void> {
    await this.ensuring;
    // Waiting for a server: given up at the client's next attempt (at most NATS_RETRY_WAIT_MS away), or its set-up finishes.
    await this.waiting;
    if (this.nc && !this.nc.isClosed() && this.connection !== 'connected') {
      this.logger.warn(
        'shutting down while the NATS connection is lost: the connection is closed without draining; commands taken and not acknowledged are redelivered after NATS_ACK_WAIT_MS',
      );
      await this.nc.close();
    }
    await this.stuckGuard?.stop();
    await this.consumer?.stop();
    await this.feed?.stop();
    if (this.nc && !this.nc.isClosed()) await this.nc.drain();
  }
}

/**
 * What re-creating `created` (stream and consumer names) meant for commands and decisions, for the log line (newcomer
 * ncnats66 F3: the line said commands were refused when only the consumer had been missing and nothing was): the command
 * stream missing refused the commands published meanwhile; the consumer alone missing kept them in the stream for the
 * new consumer; the decisions or results stream missing left decisions waiting in the feed.
 */
export function recreatedConsequences(created: readonly string[], names: Pick<NatsNames, 'commandStream' | 'commandConsumer'>): string {
  const parts: string[] = [];
  if (created.includes(names.commandStream))
    parts.push('commands published while the command stream was missing were refused to their publishers and not stored');
  else if (created.includes(names.commandConsumer)) parts.push('commands waiting in the command stream are delivered to the new consumer');
  if (created.some((name) => name !== names.commandStream && name !== names.commandConsumer)) parts.push('decisions wait in the feed');
  return parts.join(', ');
}
