/**
 * Pulls commands from the shared durable consumer and answers each one (issue 15):
 * 1. execute it ({@link NatsCommandExecutor}: same validation and handlers as HTTP);
 * 2. publish the answer to `<prefix>.results.<tenant>.<session>` (JetStream, message id
 *    `result:<tenant>/<session>/<commandId>` so a redelivered command's second answer is dropped,
 *    and only that: not another tenant's or session's answer to a command with the same id; with
 *    the headers of what it was decided on, `AnswerBasis` (answer-basis.ts), which an erasure of the session
 *    tells its life by; deleted at once when the decisions feed of this replica has handled an erasure
 *    record that takes it, see `HandledErasures`) and,
 *    when the publisher named one in the `Reply-To` header, to that subject if it is a reply
 *    subject ({@link replyToProblem}: never a `$` subject nor the service's own; the executor
 *    rejected a command naming another with `invalid_reply_to`); an answer larger than the
 *    server's max_payload goes without `kept`, `archived` and `summary`, named in `omitted`;
 * 3. with `NATS_ERASE_HANDLED_COMMANDS`, delete it from the command stream with the erase flag
 *    ({@link eraseCommand}: its bytes hold the texts it appended), then acknowledge — only now, after the command's events are appended — or, for a rejected command
 *    (4xx: malformed, unknown, invalid), terminate it so it is never redelivered.
 *
 * The acknowledgement goes out as soon as the results stream confirms storing the answer, in the
 * same chain of microtasks (nothing batched, no timer): under load that confirmation is a round
 * trip plus this process's event-loop delay (docs/nats.md, Acknowledgement: 12–30 ms median measured),
 * and a replica killed meanwhile leaves commands answered but not acknowledged, which the next
 * replica answers from the results stream after the ack wait ({@link answerAgain}). It is not sent
 * along with the answer, before the confirmation, on purpose: the server would read the answer
 * first (one connection), but a stream refusing it (missing, full) would lose the answer of a
 * command already removed (natsack).
 *
 * A server-side failure is retried in place, by this replica, with the command held (reported in
 * progress, so JetStream gives it to no one else) and its session's later commands waiting behind
 * it, so a session's commands are still applied in the order they arrived:
 * - a transient condition of the service ({@link TRANSIENT_CODES}: 503 `store_unavailable`,
 *   `counting_timeout`, …) is waited out: retried after {@link DEFAULT_RETRY_BACKOFF} (0.5 s
 *   doubling to 5 s apart), without a limit while the replica runs — a store failover of minutes
 *   drops nothing. One line when a command starts waiting, one when it goes through;
 *   {@link NatsCommandConsumer.retrying} counts those waiting (`/health`, `/metrics`);
 * - any other 5xx (500 `internal`: a bug, perhaps this command's own) is retried the same way
 *   up to {@link MAX_ATTEMPTS} attempts in all (earlier deliveries count one each), then
 *   terminated with its error published, so a poison command does not loop for ever.
 * Every retry after the first attempt runs as a redelivery (`redelivered`): an attempt that failed
 * after its write reached the store is answered from what it wrote, never applied twice.
 *
 * A delivery of a command this replica answered itself, its answer stored on the results stream (the
 * publish acknowledged), is acknowledged without publishing the answer again: one `debug` line
 * (ncrolling F2: a copy handed out again to the same replica, its acknowledgement lost — or, before
 * natspull, left in the client library's buffer past the ack wait). Another replica, or this one
 * restarted, answers it again with the published answer.
 *
 * Every rejected (terminated) command logs one line at warn ({@link rejectionLogLine}): a subject
 * that names no session (or names it with a wildcard token: `namesOneSession`) has no results subject, so without
 * `Reply-To` that line is its only record.
 *
 * The headers a command is read by (`Reply-To` in any letter case, `Nats-Msg-Id` exactly) are read
 * by {@link readCommandHeaders}. For the stuck-consumer guard (stuck-consumer.ts) the consumer says
 * since when it has asked for commands without getting one ({@link NatsCommandConsumer.askingSince}),
 * and removes the commands the consumer recorded acknowledged that the stream still holds after a
 * nats-server crash ({@link NatsCommandConsumer.removeLeftovers}).
 *
 * Commands of one session are handled one after the other within a replica; up to `concurrency`
 * commands are taken at once (handled, retried, or queued behind their session's previous one). A
 * replica pulls only for its free slots (one pull request at a time, for as many commands as slots
 * are free, see {@link run}), never ahead into a buffer: every command JetStream delivers to it is
 * held from its delivery on — reported in progress every third of the consumer's ack wait (read
 * from JetStream at start) until it is answered — so none waits unreported past the ack wait to be
 * delivered to another replica as well (natspull). At stop, commands not started go back to
 * JetStream: a command waiting for the store and those queued behind one of their session go back
 * in their order (see {@link stop}).
 */
import { hostname } from 'node:os';
import { quoteInput } from '@lib/compaction';
import { Logger } from '@nestjs/common';
import { headers, nanos, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { isPermissionDenied } from './nats-permission';
import type { Consumer, ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg, MsgRequest } from '@nats-io/jetstream';
import { eraseMessage } from './nats-erasure';
import { HandledErasures } from './handled-erasures';
import { setAnswerBasisHeaders } from './answer-basis';
import { ackWaitMsOf, isMissingStreamError } from './nats-streams';
import { endPull } from './nats-pull-end';
import type { NatsNames } from './nats-names';
import { COMMAND_KINDS, derivedCommandId, namesOneSession, parseCommandSubject, resultSubject } from './nats-names';
import { earlierCommandInStream, FinishedSequences, OrderWaits, sessionCommandFilter, storedTimestampNanos, type EarlierCommand } from './nats-session-order';
import { findPublishedAnswer } from './nats-published-answer';
import type { CommandAnswer, NatsCommandExecutor } from './nats-command-executor';
import { rejectionLogLine, type RejectionDestinations } from './nats-rejection-log';
import { DEFAULT_REPLY_PREFIXES, replyToProblem, type ReplyToRule } from './nats-reply-to';
import { UnstoredAnswers } from './unstored-answers';
import { MSG_ID_HEADER, readCommandHeaders, REPLY_TO_HEADER } from './nats-command-headers';
import { answerPayload } from './answer-payload-fit';

/**
 * Attempts of a command failing with a server-side error that is not transient (500 `internal`)
 * before it is terminated with its error published; each earlier delivery counts as one.
 */
export const MAX_ATTEMPTS = 5;

/**
 * Codes of the 503 answers the executor can give that say the service cannot do it now, not that
 * the command is wrong: nothing was written, and the same command goes through once the condition
 * passes, so it is retried in place for as long as the replica runs (never terminated):
 * - `store_unavailable`: the event store does not answer (a PostgreSQL or KurrentDB failover or
 *   restart, a SQLite write lock held past its timeout; at shutdown, the store already closed);
 * - `counting_timeout`: counting the command's tokens (or a compaction's text work) waited past its
 *   deadline (`COUNTING_DEADLINE_MS`, 30 s by default), queue included, or its worker's queue was full: the service is busy with other
 *   large texts. A command within `MAX_BODY_BYTES` is counted well within the deadline on its own,
 *   so it goes through once the load passes (its session waits meanwhile, which sheds load too);
 * - `request_expired`: the command's write could not start within `WRITE_DEADLINE_MS` of its
 *   execution's start (queued behind slow writes to its session): each attempt is a new execution,
 *   with a deadline of its own, in the session life read when this replica received the command
 *   (`checkWriteAdmission`: a session erased since answers 409 `session_erased`, final);
 * - `projection_behind`: the read models have not reached a position yet. Commands do not wait for
 *   the read models today; should one ever, it is the same kind of wait;
 * - `shutting_down`: the HTTP answer during the shutdown drain; commands never get it (the
 *   consumer stops before the store closes), listed so that it would be waited out, not dropped.
 */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set(['store_unavailable', 'counting_timeout', 'request_expired', 'projection_behind', 'shutting_down']);

/** Delays between attempts of one command (ms): `initialMs` before the first retry, doubling up to `maxMs`. */
export interface RetryBackoff {
  initialMs: number;
  maxMs: number;
}

/** 0.5 s, 1 s, 2 s, 4 s, then every 5 s. */
export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { initialMs: 500, maxMs: 5_000 };

/** The delay (ms) before retry number `retry` (0 for the first) under `backoff`. */
export function retryDelayMs(backoff: RetryBackoff, retry: number): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(retry, 30));
}

/** True when `answer` is a 503 of {@link TRANSIENT_CODES} (retried in place without a limit). */
export function isTransientFailure(answer: CommandAnswer): boolean {
  return answer.status === 503 && TRANSIENT_CODES.has(codeOf(answer));
}

function codeOf(answer: CommandAnswer): string {
  const code = (answer.body as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unknown';
}

/** `kind` when it is one of {@link COMMAND_KINDS}, else `unknown` (a subject's last token is the publisher's: a label must not take any value). */
function kindOf(kind: string): string {
  return (COMMAND_KINDS as readonly string[]).includes(kind) ? kind : 'unknown';
}

/** How often (ms) held commands are reported in progress under an ack wait of `ackWaitMs`: a third of it, 500 ms at least. */
export function keepAliveMs(ackWaitMs: number): number {
  return Math.max(500, Math.floor(ackWaitMs / 3));
}

/**
 * What became of a command this replica handled, once per delivery it started (for `/metrics`):
 * - `ok`: answered (2xx) and acknowledged;
 * - `rejected`: answered with a 4xx and terminated (never redelivered);
 * - `failed`: answered with a 5xx after {@link MAX_ATTEMPTS} attempts and terminated;
 * - `requeued`: left to JetStream unanswered or unacknowledged, to be delivered again: storing its
 *   answer failed (NATS lost, the results stream full or missing: redelivered after
 *   {@link UNSTORED_REDELIVERY}), or the replica stopped while it waited for its next attempt.
 */
export type CommandOutcome = 'ok' | 'rejected' | 'failed' | 'requeued';

/**
 * What the consumer uses of a {@link NatsCommandExecutor}: `execute`, and `readLifeOnReceipt`
 * when it has it (a stand-in executor without it: each command's session life is read when it is executed).
 */
export type CommandExecution = Pick<NatsCommandExecutor, 'execute'> & Partial<Pick<NatsCommandExecutor, 'readLifeOnReceipt'>>;

/** One handled command (see {@link CommandOutcome}), as {@link NatsCommandConsumer} reports it. */
export interface HandledCommand {
  /** One of `COMMAND_KINDS`, or `unknown` (a subject naming no kind, or another one). */
  kind: string;
  outcome: CommandOutcome;
  /** The error code of a `rejected` or `failed` command (e.g. `malformed_json`), else empty. */
  code: string;
  /** True when JetStream delivered it before (`Delivery-Count` over 1): a replica crashed or stopped, its ack wait passed, or it was requeued. */
  redelivered: boolean;
  /** From the start of its handling (after its session's earlier commands here) to its answer, retries in place included (seconds). */
  seconds: number;
}

export { REPLY_TO_HEADER } from './nats-command-headers';
/** Header of every answer naming the replica that handled the command (`<host>:<pid>`). */
export const REPLICA_HEADER = 'Replica';
const REPLICA = `${hostname()}:${process.pid}`;
/** Header of every answer: how many times JetStream delivered the command (more than 1 after a crash or a timeout). */
export const DELIVERY_COUNT_HEADER = 'Delivery-Count';

/**
 * Message id of a command's answer in the results stream: `result:<tenant>/<session>/<commandId>`
 * (tenant ids and session ids hold no `/`, so distinct commands get distinct ids). The stream drops
 * a second answer of the same command (a redelivery) within its duplicate window, and only that:
 * the results stream de-duplicates across every subject, and command ids are the publishers'.
 */
export function resultMessageId(tenant: string, sessionId: string, commandId: string): string {
  return `result:${tenant}/${sessionId}/${commandId}`;
}

/**
 * Delays (ms) between the checks of a command waiting for an earlier command of its session still
 * in the command stream (held by another replica, or by a dead one until its ack wait passes):
 * 25 ms doubling to 1 s; a command of the session arriving here meanwhile checks at once.
 */
export const ORDER_RECHECK: RetryBackoff = { initialMs: 25, maxMs: 1_000 };

/**
 * How long (ms) one pull request waits at the server for commands before it ends and the replica
 * pulls again.
 */
export const PULL_EXPIRES_MS = 30_000;

/**
 * How often (ms) the server tells an idle pull request that it still holds it (JetStream's
 * `idle_heartbeat`): when two are missed the client library ends the pull (`heartbeats missed`)
 * and the replica pulls again, so a pull request the server lost without a reconnect or a 409 (a
 * dropped request: no command would reach this replica until the pull expired) costs 5–7.5 s, not
 * the {@link PULL_EXPIRES_MS} of the library's default, half the expiry. One small message per
 * interval per idle replica.
 */
export const PULL_HEARTBEAT_MS = 2_500;

/**
 * Delays (ms) before JetStream delivers again a command left unacknowledged because its answer
 * could not be stored on the results stream, or looked up there (the stream full, missing, NATS
 * unreachable): 1 s doubling to 60 s, by its delivery count. Each redelivery sends its live answer
 * again (to `Reply-To` and the results subject's subscribers), so a full results stream costs at
 * most one copy a minute per command, not one a second (newcomer ncnatsint F3).
 */
export const UNSTORED_REDELIVERY: RetryBackoff = { initialMs: 1_000, maxMs: 60_000 };

/** Leftovers {@link NatsCommandConsumer.removeLeftovers} looks at per call at most (the next check goes on). */
export const LEFTOVERS_PER_SWEEP = 1000;

/** Delays between pull requests after a failed one (the stream or the consumer missing, NATS unreachable): 250 ms doubling to 5 s. */
export const PULL_RETRY: RetryBackoff = { initialMs: 250, maxMs: 5_000 };

/** True when `err` is the client library's end of a pull request after two missed idle heartbeats (see {@link PULL_HEARTBEAT_MS}). */
export function isHeartbeatsMissed(err: unknown): boolean {
  return /heartbeats missed/i.test(err instanceof Error ? err.message : String(err));
}

/** The commands of one session held by this replica, in stream order, handled one after the other by one worker. */
interface SessionQueue {
  /** Held commands of the session by stream sequence; the first is being handled, checked, or waits for an earlier one. */
  commands: JsMsg[];
  /** True while the first waits for an earlier command of the session held elsewhere: the session takes no slot meanwhile. */
  parked: boolean;
  /** Ends the wait of a parked session (a command of it arrived). */
  wake: (() => void) | null;
  /** The worker: resolves once the session has no command here. */
  done: Promise<void>;
}

/** The session a command subject names: the subject minus its kind token. */
function sessionOf(m: JsMsg): string {
  return m.subject.slice(0, m.subject.lastIndexOf('.'));
}

/** See the module doc. */
export class NatsCommandConsumer {
  private readonly logger = new Logger('NatsCommands');
  /** The durable command consumer pulled from (set at {@link start}, renewed by {@link resubscribe}, null once stopped). */
  private consumer: Consumer | null = null;
  /** The pull request under way ({@link pull}), if any. */
  private batch: ConsumerMessages | null = null;
  /** Ends the wait after a failed pull ({@link resubscribe}: pull again at once). */
  private pullNow: () => void = () => undefined;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  /** Every command delivered and not yet acknowledged, terminated or given back: reported in progress every third of the ack wait. */
  private readonly held = new Set<JsMsg>();
  /** Commands left for redelivery because their answer could not be stored (or looked up) on the results stream (see {@link UnstoredAnswers}). */
  private readonly unstored = new UnstoredAnswers();
  /** Commands whose last attempt answered a transient 503, waiting for their next attempt. */
  private readonly waitingForService = new Set<JsMsg>();
  private keepAlive: NodeJS.Timeout | null = null;
  private inEffectAckWaitMs: number;
  private stopping = false;
  /** Resolves when {@link stop} begins: ends the wait for a free slot, a retry's wait and the wait after a failed pull. */
  private readonly stopRequested: Promise<void>;
  private requestStop: () => void = () => undefined;
  /** Resolves once the pull request is closed at stop: from then on commands are given back (a nak now could come back to this replica). */
  private readonly pullClosed: Promise<void>;
  private markPullClosed: () => void = () => undefined;
  /** The sessions with commands held here (see {@link SessionQueue}). */
  private readonly sessions = new Map<string, SessionQueue>();
  /** Commands in {@link sessions}, and those of them in parked sessions: the others take the `concurrency` slots. */
  private queued = 0;
  /** The read of each received command's session life, made as it was received ({@link enqueue}). */
  private readonly livesOnReceipt = new WeakMap<JsMsg, Promise<bigint>>();
  private parked = 0;
  private slotFreed: Promise<void> = Promise.resolve();
  private freeSlot: () => void = () => undefined;
  /** Stream sequences this replica acknowledged or terminated lately (the server may not have removed them yet). */
  private readonly finished = new FinishedSequences();
  /**
   * Of those, the commands whose answer this replica published on the results stream and saw
   * stored (the publish acknowledged): a delivery of one again is a duplicate, acknowledged
   * without answering again (see {@link handle}).
   */
  private readonly answeredHere = new FinishedSequences();
  /** Commands waiting behind an earlier command of their session: when to look its answer up, when to report the wait (created at {@link start}). */
  private orderWaits: OrderWaits;
  /** Set when the NATS user may not read the command stream: the order check is skipped from then on. */
  private orderCheckDenied = false;
  /** Since when (ms) this replica has had free slots and pulled without receiving a command; null while its slots are full (see {@link askingSince}). */
  private askingFrom: number | null = null;
  /** A removal of leftovers under way ({@link removeLeftovers}). */
  private sweeping: Promise<number> | null = null;
  /** Stream sequences (and stored times) of leftovers found without a published answer, each logged once. */
  private readonly leftoversWithoutAnswer = new FinishedSequences(1024);
  /** Commands found at or below the ack floor by the previous call of {@link removeLeftovers}: removed when found there again. */
  private leftoversSeen = new FinishedSequences(LEFTOVERS_PER_SWEEP);
  private readonly replyRule: ReplyToRule;

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly executor: CommandExecution,
    private readonly names: NatsNames,
    private readonly concurrency: number,
    /** `NATS_ACK_WAIT_MS`: the consumer's ack wait until {@link start} reads the consumer's own (which the keep-alive follows). */
    private readonly ackWaitMs: number,
    /** `NATS_ERASE_HANDLED_COMMANDS`: erase each handled command from the command stream before acknowledging it ({@link eraseCommand}). */
    private readonly eraseHandledCommands = false,
    /** Delays between the attempts of a command that failed server-side (tests shorten them). */
    private readonly backoff: RetryBackoff = DEFAULT_RETRY_BACKOFF,
    /** `NATS_REPLY_PREFIXES`: a `Reply-To` must be under one of them ({@link replyToProblem}). */
    replyPrefixes: readonly string[] = DEFAULT_REPLY_PREFIXES,
    /** Told of every command handled, once its outcome is known (the transport counts them in `/metrics`). */
    private readonly onHandled: (handled: HandledCommand) => void = () => undefined,
    /** The erasure records this replica's decisions feed handled: an answer one of them takes is deleted once stored (see HandledErasures). */
    private readonly erasures: HandledErasures = new HandledErasures(),
  ) {
    this.inEffectAckWaitMs = ackWaitMs;
    this.orderWaits = new OrderWaits(ackWaitMs);
    this.replyRule = { prefix: names.prefix, allowedPrefixes: replyPrefixes };
    this.stopRequested = new Promise((resolve) => (this.requestStop = resolve));
    this.pullClosed = new Promise((resolve) => (this.markPullClosed = resolve));
    this.signalSlot();
  }

  /**
   * Told (with what the client reported: `stream_not_found`, `consumer_not_found`, `consumer_deleted`,
   * `no_responders`) when a pull request finds the command stream or the consumer gone from the
   * server (the client checks after a reconnect; the server answers a pull so; after a pull ended on
   * missed heartbeats the consumer is looked up, `consumer_not_found` when the server lacks it), and (a sentence
   * naming the results stream) when publishing or reading an answer finds the results stream gone
   * ({@link isMissingStreamError}): the transport re-creates them, then calls {@link resubscribe}.
   */
  onMissing: (what: string) => void = () => undefined;

  /** Starts consuming: reads the consumer's ack wait, then pulls for the free slots ({@link run}) in the background. */
  async start(): Promise<void> {
    const consumer = await this.js.consumers.get(this.names.commandStream, this.names.commandConsumer);
    // The keep-alive follows the consumer's own ack wait, which JetStream applies: it may differ from
    // the configured one (a consumer created by an earlier start with another NATS_ACK_WAIT_MS).
    this.inEffectAckWaitMs = ackWaitMsOf((await consumer.info()).config.ack_wait ?? nanos(this.ackWaitMs)) || this.ackWaitMs;
    this.orderWaits = new OrderWaits(this.inEffectAckWaitMs);
    this.consumer = consumer;
    this.keepAlive = setInterval(() => this.reportInProgress(), keepAliveMs(this.inEffectAckWaitMs));
    this.keepAlive.unref();
    this.loop = this.run();
  }

  /**
   * Pulls again at once from the consumer, once the streams and the consumer were re-created: the
   * pull request under way (if any) is closed and a new one made, and a wait after a failed pull
   * ends. Commands held stay held (a re-created stream holds none of them: their acknowledgements
   * go nowhere). Nothing before {@link start} or once stopping.
   * @throws the client's error when the consumer cannot be read (pulling goes on as before then).
   */
  async resubscribe(): Promise<void> {
    if (!this.consumer || this.stopping) return;
    const consumer = await this.js.consumers.get(this.names.commandStream, this.names.commandConsumer);
    if (!this.consumer || this.stopping) return;
    this.consumer = consumer;
    this.askingFrom = Date.now();
    // Drained, not closed: a command already sent to it reaches this replica instead of waiting out the ack wait.
    if (this.batch) void endPull(this.batch);
    this.pullNow();
  }

  /** Tells {@link onMissing} each time `messages` reports the stream or the consumer missing. */
  private async watchMissing(messages: ConsumerMessages): Promise<void> {
    for await (const s of messages.status()) {
      if (s.type === 'stream_not_found' || s.type === 'consumer_not_found' || s.type === 'consumer_deleted' || s.type === 'no_responders') {
        this.onMissing(s.type);
      }
    }
  }

  /** The consumer's ack wait (ms) read at {@link start}: the keep-alive runs every third of it. */
  get ackWaitInEffectMs(): number {
    return this.inEffectAckWaitMs;
  }

  /** Commands waiting in place for a transient condition to pass (their last attempt answered a 503 of {@link TRANSIENT_CODES}). */
  get retrying(): number {
    return this.waitingForService.size;
  }

  /**
   * Commands left for redelivery (lately: within their redelivery delay and an ack wait) because
   * their answer could not be stored on, or looked up in, the results stream, and the last such
   * error (null when none): `/health` `nats.commandsUnstored` and `nats.error`, `/metrics`
   * `nats_commands_unstored`.
   */
  get unstoredAnswers(): { count: number; lastError: string | null } {
    return this.unstored.summary();
  }

  /**
   * Commands waiting now behind an earlier command of their session that have waited
   * {@link STALLED_AFTER_ACK_WAITS} ack waits or more (each logged once at warn; `/health`, `/metrics`).
   */
  get stalled(): number {
    return this.orderWaits.stalled;
  }

  /**
   * Since when (ms since the epoch) this replica has had free slots and pulled without receiving a
   * command (reset by every delivery, and when it pulls again after {@link resubscribe}); null while
   * its slots are full (it asks for nothing), before {@link start} and once stopping. Read by the
   * stuck-consumer guard (stuck-consumer.ts).
   */
  askingSince(): number | null {
    if (!this.consumer || this.stopping || this.queued - this.parked >= this.concurrency) return null;
    return this.askingFrom;
  }

  /**
   * Stops pulling; returns every command delivered but not started to JetStream at once (a nak
   * without delay, so another replica takes it now rather than after the ack wait); waits for the
   * started ones to be answered and acknowledged. A command waiting to be retried (the store is
   * down) is given back too, and a session's commands queued behind a running or waiting one go back
   * right after it: in the session's order, so the replica that takes them applies them in that order.
   */
  async stop(): Promise<void> {
    if (!this.consumer) return;
    this.stopping = true;
    this.requestStop();
    // End the pull request, and make sure the server knows before the naks: a command nak'd while
    // this replica's pull request is still open could be redelivered to it, then wait out the ack wait.
    // Drained (endPull): a command the server sent before it took the end is held and given back
    // with the others, not dropped by the client library to wait out the ack wait. The consumer-info
    // request right behind the UNSUB (below) has the server drop the pull request at once: until it
    // checks, nats-server 2.9 still hands commands to a pull request without interest, which go nowhere.
    if (this.batch) {
      const ended = endPull(this.batch);
      const checked = this.nc.isClosed() ? undefined : this.jsm.consumers.info(this.names.commandStream, this.names.commandConsumer).catch(() => undefined);
      await ended;
      await checked;
    }
    // A closed connection (NATS lost at shutdown: NatsTransport closed it) flushes nothing and gives nothing back.
    if (!this.nc.isClosed()) await this.nc.flush();
    await this.loop;
    if (!this.nc.isClosed()) {
      // The server keeps the closed pull request until it checks its interest,
      // which a consumer-info request makes it do. Without it nats-server 2.9 hands the first
      // command given back to it (lost until the ack wait, after the later ones: the
      // session reordered) and the next one to the other replica twice.
      await this.jsm.consumers.info(this.names.commandStream, this.names.commandConsumer).catch(() => undefined);
    }
    this.markPullClosed();
    // Each session's worker gives back its commands not started, in their order.
    await Promise.all([...this.inFlight]);
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
    this.consumer = null;
  }

  /**
   * Pulls until {@link stop}: waits for a free slot (parked sessions take none), then makes one pull
   * request for as many commands as slots are free ({@link pull}). A failed pull (the stream or the
   * consumer missing, NATS unreachable, the server's idle heartbeats missed) is made again after
   * {@link PULL_RETRY}, or at once after {@link resubscribe}; the first of a run of failures is logged
   * at warn. After missed heartbeats the consumer is looked up first ({@link checkConsumerThere}):
   * one the server no longer has goes to {@link onMissing}, as a `409 Consumer Deleted` does. Ends at stop, or once the connection is closed.
   */
  private async run(): Promise<void> {
    let failures = 0;
    // A closed connection (the shutdown, or the transport gave up) pulls nothing more.
    while (!this.stopping && !this.nc.isClosed()) {
      while (this.queued - this.parked >= this.concurrency && !this.stopping) {
        // Its slots full: it asks for nothing (a consumer delivering nothing to it then is no sign of a fault).
        this.askingFrom = null;
        await Promise.race([this.slotFreed, this.stopRequested]);
      }
      if (this.stopping) break;
      this.askingFrom ??= Date.now();
      try {
        await this.pull(this.concurrency - (this.queued - this.parked));
        failures = 0;
      } catch (err) {
        if (this.stopping) break;
        const heartbeatsMissed = isHeartbeatsMissed(err);
        // The server may have lost the pull with the consumer (its 409 `Consumer Deleted` not received): asked.
        if (heartbeatsMissed) await this.checkConsumerThere();
        // Missed heartbeats are the client's timing (a busy process), not a fault: pulled again, silently.
        if (failures === 0 && !heartbeatsMissed) {
          this.logger.warn(
            `pulling commands from ${this.names.commandConsumer} failed, pulled again (every ${PULL_RETRY.maxMs / 1000} s at most): ${(err as Error).message}`,
          );
        }
        await Promise.race([this.pause(retryDelayMs(PULL_RETRY, failures++)), new Promise<void>((resolve) => (this.pullNow = resolve))]);
        this.pullNow = () => undefined;
      }
    }
  }

  /**
   * One pull request for up to `free` commands, until they all came or it expires
   * ({@link PULL_EXPIRES_MS}; two missed heartbeats, {@link PULL_HEARTBEAT_MS}, end it sooner); each command is held (reported in progress from now on) and queued
   * for its session the moment it is delivered, so the client library keeps none unreported.
   * @throws the client's error when the pull fails (see {@link run}).
   */
  private async pull(free: number): Promise<void> {
    const batch = await this.consumer!.fetch({ max_messages: free, expires: PULL_EXPIRES_MS, idle_heartbeat: PULL_HEARTBEAT_MS });
    this.batch = batch;
    void this.watchMissing(batch);
    // Stopping began while the pull was set up: ended at once (what is delivered meanwhile is given back by its session's worker).
    if (this.stopping) void endPull(batch);
    try {
      for await (const m of batch) {
        this.askingFrom = Date.now();
        this.held.add(m);
        this.enqueue(m);
      }
    } finally {
      if (this.batch === batch) this.batch = null;
    }
  }

  /**
   * Asks the server for the command consumer (after a pull ended on missed idle heartbeats: the
   * server's `409 Consumer Deleted` for a deleted stream can be lost, or come while this process
   * was too busy to read it): when the server says the stream or the consumer is not there
   * ({@link isMissingStreamError}), tells {@link onMissing} (`consumer_not_found`), as a 409 would
   * have. Any other error (NATS unreachable) is left to the next pull. Never throws.
   */
  private async checkConsumerThere(): Promise<void> {
    try {
      await this.jsm.consumers.info(this.names.commandStream, this.names.commandConsumer);
    } catch (err) {
      if (isMissingStreamError(err) && !this.stopping) this.onMissing('consumer_not_found');
    }
  }

  /** Wakes the pull loop waiting for a slot. */
  private signalSlot(): void {
    const free = this.freeSlot;
    this.slotFreed = new Promise((resolve) => (this.freeSlot = resolve));
    free();
  }

  /** Queues `m` for its session (the subject minus its kind token), in stream order; starts the session's worker when it has none. */
  private enqueue(m: JsMsg): void {
    const key = sessionOf(m);
    this.queued++;
    // Its session's life as it arrives here, before it waits behind the session's earlier commands (checkWriteAdmission's rule 3).
    // The life as of when the command stream stored it, too: a command queued before an erasure is of the life it closed (ncnats66 F1).
    const life = this.executor.readLifeOnReceipt?.(m.subject, Math.floor(m.info.timestampNanos / 1e6));
    if (life) {
      this.livesOnReceipt.set(m, life);
      // A read the store failed (e.g. a lock past its statement timeout) fails that attempt; the next one reads the life itself.
      life.catch(() => {
        if (this.livesOnReceipt.get(m) === life) this.livesOnReceipt.delete(m);
      });
    }
    const queue = this.sessions.get(key);
    if (queue) {
      // A redelivered earlier command goes before the later ones waiting for it (never before one being handled: none was earlier).
      const at = queue.commands.findIndex((c) => c.info.streamSequence > m.info.streamSequence);
      queue.commands.splice(at < 0 ? queue.commands.length : at, 0, m);
      if (queue.parked) this.parked++;
      queue.wake?.();
      return;
    }
    const created: SessionQueue = { commands: [m], parked: false, wake: null, done: Promise.resolve() };
    this.sessions.set(key, created);
    const worker = this.work(key, created);
    created.done = worker;
    this.inFlight.add(worker);
    void worker.finally(() => this.inFlight.delete(worker));
  }

  /**
   * Handles the session's commands here one after the other, in stream order. Before each, asks the
   * command stream for an earlier command of the session still there (not applied yet: held by
   * another replica, or by a dead one until its ack wait passes); while there is one, the command
   * waits (held, reported in progress), the session taking no slot, and checks again
   * ({@link ORDER_RECHECK}). At stop, gives back those not started, in their order.
   */
  private async work(key: string, queue: SessionQueue): Promise<void> {
    let retry = 0;
    while (queue.commands.length > 0) {
      const m = queue.commands[0];
      if (this.stopping) {
        // One at a time from the queue itself, until it is empty: a command of the session delivered
        // while one is given back (the pull's end still bringing what the server sent) joins this
        // queue and goes back too, in its order (natsleft2: taken from a copy, it was left held, to the ack wait).
        while (queue.commands.length > 0) {
          const c = queue.commands.shift()!;
          this.queued--;
          await this.giveBack(c);
        }
        break;
      }
      const earlier = await this.earlierInStream(m, retry);
      if (earlier !== null && earlier !== 'unknown' && queue.commands[0] === m && (await this.stillWaiting(key, m, earlier))) continue;
      if (earlier !== null || queue.commands[0] !== m) {
        if (queue.commands[0] === m && !this.stopping) {
          queue.parked = true;
          this.parked += queue.commands.length;
          this.signalSlot();
          await Promise.race([this.pause(retryDelayMs(ORDER_RECHECK, retry++)), new Promise<void>((resolve) => (queue.wake = resolve))]);
          queue.wake = null;
          queue.parked = false;
          this.parked -= queue.commands.length;
        }
        continue;
      }
      retry = 0;
      this.orderWaits.done(key);
      try {
        await this.handle(m);
      } finally {
        queue.commands.splice(queue.commands.indexOf(m), 1);
        this.queued--;
        this.signalSlot();
      }
    }
    this.orderWaits.done(key);
    this.sessions.delete(key);
  }

  /**
   * `m` (the first command of `session` here) waits behind `earlier` ({@link OrderWaits}): from one
   * ack wait on, at most once per ack wait, looks `earlier`'s answer up on the results stream; when
   * it is there, the command was applied and answered and only its acknowledgement is missing (lost
   * with a crash of its replica or of nats-server, whose consumer may then never deliver it again):
   * it is removed from the command stream and true returned (the order is checked again at once, and
   * the next earlier command, if any, looked up at once too). At {@link STALLED_AFTER_ACK_WAITS} ack
   * waits, one warn line naming both sequences and the session (before the look-up, so a wait that
   * the look-up then ends is logged as counted).
   */
  private async stillWaiting(session: string, m: JsMsg, earlier: EarlierCommand): Promise<boolean> {
    const step = this.orderWaits.waiting(session, m.info.streamSequence, Date.now(), earlier.seq);
    if (step.warn) {
      this.logger.warn(
        `command stream sequence ${m.info.streamSequence} of session ${quoteInput(session)} has waited ${(step.waitedMs / 1000).toFixed(1)} s behind its session's earlier command at sequence ${earlier.seq}, still in the command stream with no answer published (held by a replica retrying it, or left unacknowledged by JetStream): the session's later commands wait until it is gone`,
      );
    }
    return step.lookUp && (await this.removeIfAnswered(session, earlier, step.waitedMs));
  }

  /** Removes `earlier` from the command stream when its answer is on the results stream (see {@link stillWaiting}); true when it did. */
  private async removeIfAnswered(session: string, earlier: EarlierCommand, waitedMs: number): Promise<boolean> {
    try {
      if (!(await this.eraseIfAnswered(earlier))) return false;
    } catch (err) {
      this.logger.warn(`command stream sequence ${earlier.seq}: cannot look up its answer or remove it from the command stream: ${(err as Error).message}`);
      return false;
    }
    this.logger.warn(
      `command stream sequence ${earlier.seq} of session ${quoteInput(session)} was answered (its answer is on ${this.names.resultStream}) but still in the command stream after ${(waitedMs / 1000).toFixed(1)} s (its acknowledgement lost): removed from it, the session's later commands go on`,
    );
    return true;
  }

  /**
   * Looks the answer of `command` (a message still in the command stream) up on the results stream
   * ({@link findPublishedAnswer}) and, when it is there (the command was applied and answered: only
   * its acknowledgement, or the stream's removal of it, was lost), deletes the command from the
   * command stream with the erase flag. True when it did (or someone else had meanwhile); false when
   * no answer is there, or the subject names no session (no results subject to look on).
   * @throws the client's error when NATS is unreachable or a stream is missing.
   */
  private async eraseIfAnswered(command: EarlierCommand): Promise<boolean> {
    const address = parseCommandSubject(this.names.prefix, command.subject);
    if (!address || !namesOneSession(address)) return false;
    const commandId = command.msgId || derivedCommandId(this.names.commandStream, command.seq, command.timestampNanos);
    const found = await findPublishedAnswer(
      this.js,
      this.jsm,
      this.names.resultStream,
      resultSubject(this.names.prefix, address.tenant, address.sessionId),
      resultMessageId(address.tenant, address.sessionId, commandId),
      command.time,
    );
    if (!found) return false;
    await eraseMessage(this.jsm, this.names.commandStream, command.seq);
    return true;
  }

  /**
   * Removes leftovers from the command stream (newcomer ncnatsops F2): messages at or below the
   * consumer's ack floor `ackFloor` (a stream sequence: every command up to it acknowledged or
   * terminated, as the consumer recorded) that the work-queue stream still holds. After a
   * nats-server crash the stream's removals can be lost while the consumer kept the
   * acknowledgements: applied commands, their conversation text included, stay in the stream, and
   * the consumer never delivers them again (before, one went only when a later command of its
   * session waited behind it for an ack wait; those of a session never written again stayed for
   * good). Each one whose answer is on the results stream is deleted with the erase flag
   * ({@link eraseIfAnswered}), and so is one whose subject names no session (terminated: it has no
   * results subject); one without an answer stays, with one warn line (its session's later commands
   * wait behind it: see {@link stillWaiting}). A command is taken for a leftover only when the
   * previous call found it at or below the ack floor too: the server advances the ack floor and
   * removes the command in one step, which a read may fall between. At most
   * {@link LEFTOVERS_PER_SWEEP} are looked at per call; one warn line says how many were removed.
   * One `STREAM.MSG.GET` when there is none.
   * Called after each check of the consumer's info (stuck-consumer.ts). Returns how many it removed;
   * never throws (an error is logged at debug: the next check tries again).
   */
  removeLeftovers(ackFloor: number): Promise<number> {
    if (ackFloor < 1 || this.orderCheckDenied || this.stopping || this.sweeping) return this.sweeping ?? Promise.resolve(0);
    this.sweeping = this.sweepLeftovers(ackFloor).finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private async sweepLeftovers(ackFloor: number): Promise<number> {
    let removed = 0;
    let from = 1;
    const seenBefore = this.leftoversSeen;
    this.leftoversSeen = new FinishedSequences(LEFTOVERS_PER_SWEEP);
    try {
      for (let looked = 0; looked < LEFTOVERS_PER_SWEEP && !this.stopping; looked++) {
        // The client types only `seq` and `last_by_subj` here; the server also takes `next_by_subj`.
        const found = await this.jsm.streams.getMessage(this.names.commandStream, {
          seq: from,
          next_by_subj: `${this.names.prefix}.commands.>`,
        } as unknown as MsgRequest);
        if (!found || found.seq > ackFloor) break;
        from = found.seq + 1;
        const command: EarlierCommand = {
          seq: found.seq,
          subject: found.subject,
          msgId: found.header?.get(MSG_ID_HEADER) || null,
          time: found.time,
          timestampNanos: storedTimestampNanos(found.timestamp),
        };
        this.leftoversSeen.add(command.seq, command.timestampNanos);
        // Found there for the first time: perhaps being removed right now (looked at again at the next call).
        if (!seenBefore.has(command.seq, command.timestampNanos)) continue;
        if (parseCommandSubject(this.names.prefix, command.subject) === null) {
          if (await eraseMessage(this.jsm, this.names.commandStream, command.seq)) removed++;
        } else if (await this.eraseIfAnswered(command)) removed++;
        else if (!this.leftoversWithoutAnswer.has(command.seq, command.timestampNanos)) {
          this.leftoversWithoutAnswer.add(command.seq, command.timestampNanos);
          this.logger.warn(
            `command stream sequence ${command.seq} (${quoteInput(command.subject)}) is still in ${this.names.commandStream} though ${this.names.commandConsumer} recorded it acknowledged (at or below its ack floor ${ackFloor}), and no answer of it is on ${this.names.resultStream}: left there (JetStream will not deliver it again; its session's later commands wait behind it); remove it once checked: nats stream rmm ${this.names.commandStream} ${command.seq}`,
          );
        }
      }
    } catch (err) {
      this.logger.debug(`removing leftovers from ${this.names.commandStream}: ${(err as Error).message}; tried again at the next check`);
    }
    if (removed > 0) {
      this.logger.warn(
        `removed ${removed} command(s) from ${this.names.commandStream} that ${this.names.commandConsumer} had recorded acknowledged (at or below its ack floor ${ackFloor}) and that were answered already: leftovers of a lost acknowledgement (a nats-server crash), erased from the stream's files`,
      );
    }
    return removed;
  }

  /**
   * The stream sequence of an earlier command of `m`'s session still in the command stream, or null
   * (see {@link earlierCommandInStream}); `unknown` when NATS did not answer (checked again after a wait).
   * Null, with one `error` line per replica, when the service's NATS user may not read the command
   * stream (`$JS.API.STREAM.MSG.GET.<PREFIX>_COMMANDS` not allowed: a configuration from before
   * the check): commands are then handled without it, as before.
   */
  private async earlierInStream(m: JsMsg, retry: number): Promise<EarlierCommand | null | 'unknown'> {
    if (this.orderCheckDenied) return null;
    try {
      return await earlierCommandInStream(this.jsm, this.names.commandStream, sessionCommandFilter(m.subject), m.info.streamSequence, (seq, stamp) =>
        this.finished.has(seq, stamp),
      );
    } catch (err) {
      if (isPermissionDenied(err)) {
        this.orderCheckDenied = true;
        this.logger.error(
          `cannot read the command stream ${this.names.commandStream} (allow $JS.API.STREAM.MSG.GET.${this.names.commandStream} to the service's NATS user): a session's commands are no longer kept in stream order across replicas and crashes: ${(err as Error).message}`,
        );
        return null;
      }
      if (retry === 0)
        this.logger.warn(
          `command stream sequence ${m.info.streamSequence}: cannot check its session's earlier commands, checked again: ${(err as Error).message}`,
        );
      return 'unknown';
    }
  }

  /** Reports every held command in progress, so JetStream gives none of them to another replica while it is queued, running or waiting. */
  private reportInProgress(): void {
    for (const m of this.held) {
      try {
        m.working();
      } catch {
        // The connection is closed (shutdown): the command comes back after the ack wait.
      }
    }
  }

  /** Gives `m` back to JetStream (a nak without delay, once the pull subscription is closed): at stop, for another replica to take now. */
  private async giveBack(m: JsMsg): Promise<void> {
    await this.pullClosed;
    this.held.delete(m);
    if (this.nc.isClosed()) return;
    try {
      m.nak();
    } catch {
      // Closed meanwhile: it comes back after the ack wait.
    }
  }

  private async handle(m: JsMsg): Promise<void> {
    const commandId = readCommandHeaders(m.headers).msgId || derivedCommandId(this.names.commandStream, m.info.streamSequence, m.info.timestampNanos);
    const started = performance.now();
    const handled = (outcome: CommandOutcome, answer?: CommandAnswer) =>
      this.onHandled({
        kind: kindOf(answer?.kind ?? m.subject.slice(m.subject.lastIndexOf('.') + 1)),
        outcome,
        code: outcome === 'rejected' || outcome === 'failed' ? codeOf(answer!) : '',
        redelivered: m.redelivered,
        seconds: (performance.now() - started) / 1000,
      });
    let answer: CommandAnswer | null = null;
    try {
      // Redelivered, or delivered anew after this replica finished it (nats-server restarted without
      // the acknowledgement hands it out again as a first delivery): answered already if its answer
      // is on the results stream (its replica died before the acknowledgement reached the server).
      // Answered by this replica already, its answer's publish confirmed (a copy JetStream handed out
      // again while the first one waited here, or after nats-server lost the acknowledgement): the
      // answer is not published again, its listeners have it.
      const duplicate = this.answeredHere.has(m.info.streamSequence, m.info.timestampNanos);
      const again =
        duplicate || m.redelivered || this.finished.has(m.info.streamSequence, m.info.timestampNanos) ? await this.answerAgain(m, commandId, !duplicate) : null;
      if (again) {
        if (this.eraseHandledCommands) await this.eraseCommand(m, commandId);
        this.finish(m, again.status, true, commandId);
        handled(again.status < 300 ? 'ok' : again.status < 500 ? 'rejected' : 'failed', again);
        if (duplicate) {
          this.logger.debug(
            `command ${quoteInput(commandId)} (delivery ${m.info.deliveryCount}): a duplicate delivery of a command this replica answered (${again.status}), acknowledged without answering again`,
          );
        } else {
          this.logger.log(
            `command ${quoteInput(commandId)} (delivery ${m.info.deliveryCount}) answered again with its published answer (${again.status}), not run again`,
          );
        }
        return;
      }
      answer = await this.executeUntilFinal(m, commandId);
      if (!answer) return handled('requeued');
      const published = await this.publishAnswer(m, commandId, answer, m.info.deliveryCount);
      if (this.eraseHandledCommands) await this.eraseCommand(m, commandId);
      this.finish(m, answer.status, published.results, commandId);
      if (answer.status < 300) {
        handled('ok', answer);
        // Not reached while the executor checks Reply-To with the same rule (it rejects the command): kept as the last guard.
        if (published.refusedReplyTo !== undefined) {
          this.logger.warn(`command ${quoteInput(commandId)}: no answer on Reply-To ${quoteInput(published.refusedReplyTo)}: not a reply subject`);
        }
      } else {
        handled(answer.status < 500 ? 'rejected' : 'failed', answer);
        this.logger.warn(
          rejectionLogLine({
            code: codeOf(answer),
            status: answer.status,
            subject: m.subject,
            msgId: readCommandHeaders(m.headers).msgId,
            deliveryCount: m.info.deliveryCount,
            published,
          }),
        );
      }
    } catch (err) {
      // Storing or looking up the answer failed (NATS unreachable, the results stream missing or
      // full): leave the command unacknowledged; it comes back (answered again then), later each
      // time (UNSTORED_REDELIVERY). It is still in the stream: the session's next command waits for it.
      const error = (err as Error).message;
      // The results stream gone from the server (deleted, an empty store): re-created by the transport, as a
      // missing command stream is (before, nothing did until a reconnect: every command went round, unanswered).
      if (isMissingStreamError(err)) this.onMissing(`${this.names.resultStream} missing (publishing an answer: ${error})`);
      const delay = retryDelayMs(UNSTORED_REDELIVERY, m.info.deliveryCount - 1);
      this.unstored.add(commandId, error, delay + this.inEffectAckWaitMs);
      this.logger.warn(`command ${quoteInput(commandId)} left for redelivery in ${delay / 1000} s (delivery ${m.info.deliveryCount}): ${error}`);
      handled('requeued', answer ?? undefined);
      m.nak(delay);
    } finally {
      this.held.delete(m);
    }
  }

  /**
   * Acknowledges `m` (answered with a 2xx) or terminates it (a final 4xx or 5xx), and remembers that
   * it did (the server removes it from the work-queue stream either way), and, when `answerStored`
   * (its answer's publish on the results stream was acknowledged), that it answered it; forgets
   * `commandId` among the commands whose answer was not stored ({@link unstoredAnswers}).
   */
  private finish(m: JsMsg, status: number, answerStored: boolean, commandId: string): void {
    this.unstored.forget(commandId);
    if (status < 300) m.ack();
    // No reason text: servers before 2.10 ignore `+TERM <reason>` and would redeliver.
    else m.term();
    this.finished.add(m.info.streamSequence, m.info.timestampNanos);
    if (answerStored) this.answeredHere.add(m.info.streamSequence, m.info.timestampNanos);
  }

  /**
   * When `m`'s answer is on the results stream already ({@link findPublishedAnswer}: the subject of
   * its session, message id `result:<tenant>/<session>/<commandId>`, stored after the command),
   * publishes it again — the same body and headers but `Delivery-Count` and `Replica` — on the
   * results subject (within the duplicate window the stream drops it; subscribers get it) and on
   * `Reply-To`, and returns it; null when there is none (a subject naming no session has no results
   * subject): the command is then run. Without `republish` (this replica published that answer
   * and saw it stored) it is only returned, not published again.
   * @throws the client's error when NATS is unreachable (the command is left for redelivery).
   */
  private async answerAgain(m: JsMsg, commandId: string, republish: boolean): Promise<CommandAnswer | null> {
    const address = parseCommandSubject(this.names.prefix, m.subject);
    if (!address || !namesOneSession(address)) return null;
    const { tenant, sessionId } = address;
    const msgId = resultMessageId(tenant, sessionId, commandId);
    const subject = resultSubject(this.names.prefix, tenant, sessionId);
    let found: Awaited<ReturnType<typeof findPublishedAnswer>>;
    try {
      found = await findPublishedAnswer(this.js, this.jsm, this.names.resultStream, subject, msgId, m.time);
    } catch (err) {
      if (!isPermissionDenied(err)) throw err;
      // A configuration from before the lookup: the command runs, as before (applied at most once).
      this.logger.warn(
        `command ${quoteInput(commandId)}: cannot read its published answer (allow consumers on ${this.names.resultStream} to the service's NATS user), run again: ${(err as Error).message}`,
      );
      return null;
    }
    if (!found) return null;
    if (republish) {
      const h = headers();
      for (const [name, values] of found.headers) if (name !== 'Nats-Msg-Id') for (const value of values) h.append(name, value);
      h.set(DELIVERY_COUNT_HEADER, String(m.info.deliveryCount));
      h.set(REPLICA_HEADER, REPLICA);
      await this.deliver(m, commandId, found.data, h, { subject, msgId });
    }
    let body: unknown = null;
    try {
      body = JSON.parse(new TextDecoder().decode(found.data));
    } catch {
      // Not JSON (never published so by the service): counted without a code.
    }
    return { status: Number(found.headers.get('Status')) || 500, body, kind: found.headers.get('Command-Type') || undefined, address };
  }

  /**
   * Executes `m` until its answer is final (see the module doc): a success, a rejection (4xx), or a
   * non-transient 5xx on its {@link MAX_ATTEMPTS}th attempt. Null when the replica stopped while the
   * command waited for its next attempt: it was given back to JetStream (unanswered, unacknowledged).
   */
  private async executeUntilFinal(m: JsMsg, commandId: string): Promise<CommandAnswer | null> {
    // Earlier deliveries failed (or were lost with their replica) once each.
    let failures = m.info.deliveryCount - 1;
    let attempts = 0;
    let waitingSince: number | null = null;
    try {
      for (;;) {
        // After a failed attempt, run as a redelivery: its write may have reached the store before the failure.
        const { msgId, replyTo, replyToConflict, msgIdSpelling, contentEncoding } = readCommandHeaders(m.headers);
        const answer = await this.executor.execute({
          subject: m.subject,
          data: m.data,
          commandId,
          redelivered: m.redelivered || attempts > 0,
          msgId,
          replyTo,
          replyToConflict,
          msgIdSpelling,
          contentEncoding,
          lifeAtArrival: this.livesOnReceipt.get(m),
        });
        attempts++;
        const transient = isTransientFailure(answer);
        const retryInternal = !transient && answer.status >= 500 && ++failures < MAX_ATTEMPTS;
        if (!transient && !retryInternal) {
          if (waitingSince !== null) {
            const seconds = ((Date.now() - waitingSince) / 1000).toFixed(1);
            this.logger.log(`command ${quoteInput(commandId)} went through after waiting ${seconds} s (${attempts} attempts): answered ${answer.status}`);
          }
          return answer;
        }
        if (transient && waitingSince === null) {
          waitingSince = Date.now();
          this.waitingForService.add(m);
          this.logger.warn(
            `command ${quoteInput(commandId)} waits: ${codeOf(answer)} (503); retried in place until it goes through (every ${this.backoff.maxMs / 1000} s at most), the session's later commands wait behind it`,
          );
        } else if (retryInternal) {
          this.logger.warn(`command ${quoteInput(commandId)} failed with ${codeOf(answer)} (${answer.status}); attempt ${failures}/${MAX_ATTEMPTS}`);
        }
        if (!(await this.pause(retryDelayMs(this.backoff, attempts - 1)))) {
          this.logger.warn(`command ${quoteInput(commandId)} still waiting at shutdown: given back to JetStream, for the next replica to take`);
          await this.giveBack(m);
          return null;
        }
      }
    } finally {
      this.waitingForService.delete(m);
    }
  }

  /** Waits `ms`; false when the consumer is stopping (at once, or as soon as it starts to). */
  private async pause(ms: number): Promise<boolean> {
    if (this.stopping) return false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), this.stopRequested]);
    clearTimeout(timer);
    return !this.stopping;
  }

  /**
   * Deletes a handled command from the command stream with the erase flag before it is
   * acknowledged: its body holds the texts it appended, and an acknowledged message of a
   * work-queue stream is only marked deleted, its bytes staying in the stream's block file until the
   * whole block is emptied. A failure leaves that copy (logged) and the command is acknowledged all the same.
   */
  private async eraseCommand(m: JsMsg, commandId: string): Promise<void> {
    try {
      await eraseMessage(this.jsm, this.names.commandStream, m.info.streamSequence);
    } catch (err) {
      this.logger.warn(
        `command ${quoteInput(commandId)}: its bytes stay in the command stream's file until JetStream removes the block: ${(err as Error).message}`,
      );
    }
  }

  /**
   * Publishes `answer` on the results subject (when the subject named one session: `namesOneSession`) and on `Reply-To`
   * (when given and a reply subject: {@link replyToProblem}); says where it went, and names a
   * `Reply-To` it refused.
   */
  private async publishAnswer(m: JsMsg, commandId: string, answer: CommandAnswer, deliveryCount: number): Promise<RejectionDestinations> {
    const h = headers();
    h.set(DELIVERY_COUNT_HEADER, String(deliveryCount));
    h.set('Command-Id', commandId);
    h.set('Status', String(answer.status));
    h.set(REPLICA_HEADER, REPLICA);
    if (answer.kind) h.set('Command-Type', answer.kind);
    // What the erasure of the session tells this answer's life by (see nats-erasure).
    if (answer.basis) setAnswerBasisHeaders(h, answer.basis);
    // A compaction of a huge window: its id lists and summary would exceed the server's max_payload (read them from the history).
    const payload = answerPayload(answer.body, (this.nc.info?.max_payload ?? 1024 * 1024) - 4096);
    if (!answer.address || !namesOneSession(answer.address)) return (await this.deliver(m, commandId, payload, h, null)).published;
    const { tenant, sessionId } = answer.address;
    const results = { subject: resultSubject(this.names.prefix, tenant, sessionId), msgId: resultMessageId(tenant, sessionId, commandId) };
    const { published, storedSeq } = await this.deliver(m, commandId, payload, h, results);
    // Decided on a life whose erasure the feed has handled already (its deletion may have run before this answer was stored): deleted now.
    if (storedSeq !== null && this.erasures.takes(tenant, sessionId, answer.basis)) await eraseMessage(this.jsm, this.names.resultStream, storedSeq);
    return published;
  }

  /**
   * Publishes an answer on `Reply-To` (when a reply subject) and on `results` (its subject and
   * message id, when the command named a session); says where it went, and the answer's sequence in
   * the results stream (the first copy's, for a duplicate the stream dropped).
   */
  private async deliver(
    m: JsMsg,
    commandId: string,
    payload: Uint8Array,
    h: MsgHdrs,
    results: { subject: string; msgId: string } | null,
  ): Promise<{ published: RejectionDestinations; storedSeq: number | null }> {
    // Its name in any letter case; null when given twice with different values (the command was refused for it).
    const { replyTo } = readCommandHeaders(m.headers);
    const published: RejectionDestinations = { results: false, replyTo: false };
    // Never where only the service may publish (another tenant's commands, its streams, the JetStream API); an empty one is named too.
    if (replyTo !== null && replyToProblem(replyTo, this.replyRule) !== null) published.refusedReplyTo = replyTo;
    else if (replyTo !== null) {
      try {
        this.nc.publish(replyTo, payload, { headers: h });
        published.replyTo = true;
      } catch (err) {
        this.logger.warn(`command ${quoteInput(commandId)}: cannot answer on ${REPLY_TO_HEADER} ${quoteInput(replyTo)}: ${(err as Error).message}`);
      }
    }
    if (results) {
      const stored = await this.js.publish(results.subject, payload, { headers: h, msgID: results.msgId });
      published.results = true;
      return { published, storedSeq: stored.seq };
    }
    return { published, storedSeq: null };
  }
}
