/**
 * The NATS JetStream transport (issue 15), present only when `NATS_URL` is set: at start it
 * connects, creates the streams and the shared consumer when missing, then consumes commands
 * ({@link NatsCommandConsumer}) and publishes the decisions feed ({@link DecisionFeedPublisher}).
 * Nothing at start waits for the event store: a replica started while it does not answer (a
 * PostgreSQL outage or failover) starts with its feed paused and retrying, and holds the commands
 * it takes until the store answers (as it does during any outage), like a replica without NATS.
 * At shutdown it stops pulling, gives the commands pulled but not started (and those waiting for
 * the store) back to JetStream, finishes and acknowledges the started ones, and drains the
 * connection — before the store closes.
 *
 * Client: `@nats-io/transport-node` + `@nats-io/jetstream` (the maintained NATS.js v3 packages).
 * Nest's NATS microservice transport speaks core NATS request/reply only (no JetStream streams,
 * durable consumers, acknowledgements or message-id de-duplication), which this transport needs.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { EVENT_STORE, ReadModelStore } from '@lib/session';
import type { EventStore } from '@lib/event-store';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';
import { requestSchemas } from '../http/request-schemas';
import { OPEN_MODE_TENANT } from '../auth/api-key.guard';
import { natsNames } from './nats-names';
import { ackWaitLine, ensureStreams } from './nats-streams';
import { NatsCommandExecutor } from './nats-command-executor';
import { DEFAULT_RETRY_BACKOFF, NatsCommandConsumer } from './nats-command-consumer';
import { natsConnectError } from './nats-connect-error';
import { DecisionFeedPublisher, type DecisionFeedState } from './decision-feed-publisher';

/**
 * The NATS connection's state: `connected`; `reconnecting` (the server went away: the client tries
 * again, forever, with commands and decisions waiting); `closed` (shut down); `connecting` before the first connection.
 */
export type NatsConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'closed';

/** The transport's state for `/health` and `/metrics`: the connection's and the decisions feed's (null before it starts). */
export interface NatsTransportState {
  connection: NatsConnectionState;
  /** ISO-8601 time the connection entered its state. */
  since: string;
  decisionFeed: DecisionFeedState | null;
  /**
   * Commands this replica holds and retries in place because the service cannot do them now (a 503
   * such as `store_unavailable`: see `TRANSIENT_CODES`); their sessions' later commands wait behind them. 0 before the consumer starts.
   */
  commandsRetrying: number;
}

/** See the module doc. */
@Injectable()
export class NatsTransport implements OnApplicationBootstrap, OnApplicationShutdown {
  private nc: NatsConnection | null = null;
  private consumer: NatsCommandConsumer | null = null;
  private feed: DecisionFeedPublisher | null = null;
  private readonly logger = new Logger('Nats');
  private connection: NatsConnectionState = 'connecting';
  private since = new Date().toISOString();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly commandBus: CommandBus,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly readModels: ReadModelStore,
  ) {}

  /**
   * @throws what `natsConnectError` makes of a failed connection (naming NATS_URL: a ConfigurationError
   *   when the host does not resolve, an Error naming the address when the server refuses); the
   *   client's error when the server refuses the streams. Never the event store's errors (see the module doc).
   */
  async onApplicationBootstrap(): Promise<void> {
    const config = this.config;
    const names = natsNames(config.natsPrefix);
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers: config.natsUrl!.split(','),
        name: 'session-memory-compaction',
        maxReconnectAttempts: -1,
        ...(config.natsUser ? { user: config.natsUser, pass: config.natsPassword } : {}),
      });
    } catch (err) {
      throw natsConnectError(err, config.natsUrl!);
    }
    this.nc = nc;
    this.enter('connected');
    void this.watch(nc);
    const jsm = await jetstreamManager(nc);
    const ackWait = ackWaitLine(names.commandConsumer, await ensureStreams(jsm, names, config.natsAckWaitMs));
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
    });
    this.feed = new DecisionFeedPublisher(this.store, this.readModels, nc, js, jsm, names);
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
    );
    // No start-up line here: main.ts prints the one NATS line with its summary.
    await this.consumer.start();
  }

  /** The connection's and the decisions feed's state (see {@link NatsTransportState}). */
  state(): NatsTransportState {
    return { connection: this.connection, since: this.since, decisionFeed: this.feed?.state() ?? null, commandsRetrying: this.consumer?.retrying ?? 0 };
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
      } else if (status.type === 'close') this.enter('closed');
    }
    this.enter('closed');
  }

  /**
   * Stops the consumer and the feed, then drains the connection. While the connection is lost, nothing
   * can be flushed, given back or drained (each would wait for the server for ever): the connection is
   * closed first, the commands this replica holds unacknowledged are redelivered after `NATS_ACK_WAIT_MS`.
   */
  async onApplicationShutdown(): Promise<void> {
    if (this.nc && !this.nc.isClosed() && this.connection !== 'connected') {
      this.logger.warn(
        'shutting down while the NATS connection is lost: the connection is closed without draining; commands taken and not acknowledged are redelivered after NATS_ACK_WAIT_MS',
      );
      await this.nc.close();
    }
    await this.consumer?.stop();
    await this.feed?.stop();
    if (this.nc && !this.nc.isClosed()) await this.nc.drain();
  }
}
