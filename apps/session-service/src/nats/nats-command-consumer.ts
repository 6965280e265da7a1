/**
 * Pulls commands from the shared durable consumer and answers each one (issue 15):
 * 1. execute it ({@link NatsCommandExecutor}: same validation and handlers as HTTP);
 * 2. publish the answer to `<prefix>.results.<tenant>.<session>` (JetStream, message id
 *    `result:<commandId>` so a redelivered command's second answer is dropped) and, when the
 *    publisher named one in the `Reply-To` header, to that subject (an answer larger than the
 *    server's max_payload goes without `kept`, `archived` and `summary`, named in `omitted`);
 * 3. with `NATS_ERASE_HANDLED_COMMANDS`, delete it from the command stream with the erase flag
 *    ({@link eraseCommand}: its bytes hold the texts it appended), then acknowledge — only now, after the command's events are appended — or, for a rejected command
 *    (4xx: malformed, unknown, invalid), terminate it so it is never redelivered. A server-side
 *    failure (5xx: store unavailable…) is redelivered after a delay, at most
 *    {@link MAX_ATTEMPTS} times, then terminated with its error published.
 *
 * Every rejected (terminated) command logs one line at warn ({@link rejectionLogLine}): a subject
 * that names no session has no results subject, so without `Reply-To` that line is its only record.
 *
 * Commands of one session are handled one after the other within a replica; up to `concurrency`
 * sessions are handled at once. Replicas share the consumer, so each command goes to one of them.
 * At stop, commands pulled but not started go back to JetStream at once (see {@link stop}).
 */
import { hostname } from 'node:os';
import { quoteInput } from '@lib/compaction';
import { Logger } from '@nestjs/common';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { eraseMessage } from './nats-erasure';
import type { NatsNames } from './nats-names';
import { resultSubject } from './nats-names';
import type { CommandAnswer, NatsCommandExecutor } from './nats-command-executor';
import { rejectionLogLine, type RejectionDestinations } from './nats-rejection-log';

/** Deliveries of a command failing with a server-side error before it is terminated. */
export const MAX_ATTEMPTS = 5;
/** Header naming the subject that also receives the answer (JetStream keeps no reply subject). */
export const REPLY_TO_HEADER = 'Reply-To';
/** Header of every answer naming the replica that handled the command (`<host>:<pid>`). */
export const REPLICA_HEADER = 'Replica';
const REPLICA = `${hostname()}:${process.pid}`;
/** Header of every answer: how many times JetStream delivered the command (more than 1 after a crash or a timeout). */
export const DELIVERY_COUNT_HEADER = 'Delivery-Count';

/** See the module doc. */
export class NatsCommandConsumer {
  private readonly logger = new Logger('NatsCommands');
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  /** Commands pulled but not started (waiting for a free slot or for their session's previous command). */
  private readonly waiting = new Set<JsMsg>();
  private stopping = false;
  /** Resolves when {@link stop} begins: ends the wait for a free slot. */
  private readonly stopRequested: Promise<void>;
  private requestStop: () => void = () => undefined;
  private readonly sessionTails = new Map<string, Promise<void>>();
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly executor: NatsCommandExecutor,
    private readonly names: NatsNames,
    private readonly concurrency: number,
    /** The consumer's ack wait (ms): a command still being handled is reported in progress every third of it. */
    private readonly ackWaitMs: number,
    /** `NATS_ERASE_HANDLED_COMMANDS`: erase each handled command from the command stream before acknowledging it ({@link eraseCommand}). */
    private readonly eraseHandledCommands = false,
  ) {
    this.stopRequested = new Promise((resolve) => (this.requestStop = resolve));
  }

  /** Starts consuming; returns once the pull subscription is set up. */
  async start(): Promise<void> {
    const consumer = await this.js.consumers.get(this.names.commandStream, this.names.commandConsumer);
    this.messages = await consumer.consume({ max_messages: this.concurrency });
    this.loop = this.run(this.messages);
  }

  /**
   * Stops pulling; returns every command pulled but not started to JetStream at once (a nak
   * without delay, so another replica takes it now rather than after the ack wait); waits for the
   * started ones to be answered and acknowledged.
   */
  async stop(): Promise<void> {
    if (!this.messages) return;
    this.stopping = true;
    this.requestStop();
    // Unsubscribe, and make sure the server knows before the naks: a command nak'd while this
    // replica's pull request is still open could be redelivered to it, then wait out the ack wait.
    const closed = this.messages.close();
    // A closed connection (NATS lost at shutdown: NatsTransport closed it) flushes nothing and gives nothing back.
    const connected = !this.nc.isClosed();
    if (connected) await this.nc.flush();
    await closed;
    await this.loop;
    if (connected) for (const m of this.waiting) m.nak();
    this.waiting.clear();
    await Promise.all(this.inFlight);
    this.messages = null;
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      // Until it starts, a command is in `waiting`: at stop, those left there go back to JetStream.
      this.waiting.add(m);
      while (this.inFlight.size >= this.concurrency && !this.stopping) await Promise.race([...this.inFlight, this.stopRequested]);
      if (this.stopping) continue;
      // Serialise per session: the subject minus its kind token names the session.
      const session = m.subject.slice(0, m.subject.lastIndexOf('.'));
      const previous = this.sessionTails.get(session) ?? Promise.resolve();
      const task = previous.then(() => (!this.stopping && this.waiting.delete(m) ? this.handle(m) : undefined));
      this.sessionTails.set(session, task);
      this.inFlight.add(task);
      void task.finally(() => {
        this.inFlight.delete(task);
        if (this.sessionTails.get(session) === task) this.sessionTails.delete(session);
      });
    }
  }

  private async handle(m: JsMsg): Promise<void> {
    const commandId = m.headers?.get('Nats-Msg-Id') || `${this.names.commandStream}:${m.info.streamSequence}`;
    const keepAlive = setInterval(() => m.working(), Math.max(500, Math.floor(this.ackWaitMs / 3)));
    try {
      const answer = await this.executor.execute({ subject: m.subject, data: m.data, commandId, redelivered: m.redelivered });
      const retry = answer.status >= 500 && answer.status !== 413 && m.info.deliveryCount < MAX_ATTEMPTS;
      if (retry) {
        this.logger.warn(
          `command ${quoteInput(commandId)} failed with ${(answer.body as { code?: string }).code}; redelivery ${m.info.deliveryCount}/${MAX_ATTEMPTS}`,
        );
        m.nak(Math.min(30_000, 500 * 2 ** m.info.deliveryCount));
        return;
      }
      const published = await this.publishAnswer(m, commandId, answer, m.info.deliveryCount);
      if (this.eraseHandledCommands) await this.eraseCommand(m, commandId);
      if (answer.status < 300) m.ack();
      else {
        // No reason text: servers before 2.10 ignore `+TERM <reason>` and would redeliver.
        m.term();
        const code = (answer.body as { code?: unknown }).code;
        this.logger.warn(
          rejectionLogLine({
            code: typeof code === 'string' ? code : 'unknown',
            status: answer.status,
            subject: m.subject,
            msgId: m.headers?.get('Nats-Msg-Id') || null,
            deliveryCount: m.info.deliveryCount,
            published,
          }),
        );
      }
    } catch (err) {
      // Publishing the answer failed (NATS unreachable): leave the command unacknowledged; it comes back.
      this.logger.warn(`command ${quoteInput(commandId)} left for redelivery: ${(err as Error).message}`);
      m.nak(1000);
    } finally {
      clearInterval(keepAlive);
    }
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

  /** Publishes `answer` on the results subject (when the subject named a session) and on `Reply-To` (when given); says where it went. */
  private async publishAnswer(m: JsMsg, commandId: string, answer: CommandAnswer, deliveryCount: number): Promise<RejectionDestinations> {
    const h = headers();
    h.set(DELIVERY_COUNT_HEADER, String(deliveryCount));
    h.set('Command-Id', commandId);
    h.set('Status', String(answer.status));
    h.set(REPLICA_HEADER, REPLICA);
    if (answer.kind) h.set('Command-Type', answer.kind);
    let payload = this.encoder.encode(JSON.stringify(answer.body));
    if (payload.length > (this.nc.info?.max_payload ?? 1024 * 1024) - 4096) {
      // A compaction of a huge window: its id lists and summary would exceed the server's max_payload (read them from the history).
      const { kept: _kept, archived: _archived, summary: _summary, ...rest } = answer.body as Record<string, unknown>;
      payload = this.encoder.encode(JSON.stringify({ ...rest, omitted: ['kept', 'archived', 'summary'] }));
    }
    const replyTo = m.headers?.get(REPLY_TO_HEADER);
    const published: RejectionDestinations = { results: false, replyTo: false };
    if (replyTo) {
      try {
        this.nc.publish(replyTo, payload, { headers: h });
        published.replyTo = true;
      } catch (err) {
        this.logger.warn(`command ${quoteInput(commandId)}: cannot answer on ${REPLY_TO_HEADER} ${quoteInput(replyTo)}: ${(err as Error).message}`);
      }
    }
    if (answer.address) {
      const { tenant, sessionId } = answer.address;
      await this.js.publish(resultSubject(this.names.prefix, tenant, sessionId), payload, { headers: h, msgID: `result:${commandId}` });
      published.results = true;
    }
    return published;
  }
}
