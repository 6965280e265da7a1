/**
 * `NATS_ACK_WAIT_MS` changed between starts (newcomer ncllm): the durable command consumer was
 * created by an earlier start with a short ack wait, the service starts with a longer one. Before,
 * the consumer kept its short ack wait while the in-progress keep-alive was timed from the new
 * value, so a command running longer than the consumer's ack wait was redelivered while still
 * running (answered twice, or summarized by two replicas). Now the start updates the consumer to
 * the configured value (one warn line naming both), and the keep-alive follows the consumer's own
 * ack wait, read from JetStream, whichever it is.
 *
 * Against the machine's NATS server, under a prefix of this file's own, with a stand-in executor
 * that holds each command longer than the consumer's original ack wait.
 */
import { nanos } from '@nats-io/transport-node';
import { NatsCommandConsumer } from '../../apps/session-service/src/nats/nats-command-consumer';
import type { CommandAnswer, CommandMessage } from '../../apps/session-service/src/nats/nats-command-executor';
import { commandSubject, natsNames, parseCommandSubject, type NatsNames } from '../../apps/session-service/src/nats/nats-names';
import { ackWaitLine, ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { commandQueueSettled, describeWithNats, publishCommand, readStream, useNatsSuite } from '../support/nats-test';

jest.setTimeout(60_000);

/** The ack wait the consumer is created with (ms), and the longer one the service starts with. */
const SHORT_MS = 1_000;
const CONFIGURED_MS = 30_000;
/** How long the stand-in holds each command (ms): several of the short ack waits. */
const HOLD_MS = 3_500;

/** Executes every command after {@link HOLD_MS}, as a slow summarizer call would; records each call. */
class SlowExecutor {
  readonly calls: Array<{ commandId: string; redelivered: boolean }> = [];
  constructor(private readonly prefix: string) {}
  async execute(message: CommandMessage): Promise<CommandAnswer> {
    this.calls.push({ commandId: message.commandId, redelivered: message.redelivered });
    await new Promise((r) => setTimeout(r, HOLD_MS));
    return { status: 201, body: { revision: '1' }, kind: 'append', address: parseCommandSubject(this.prefix, message.subject) ?? undefined };
  }
}

describeWithNats('NATS ack wait')('a consumer created with another NATS_ACK_WAIT_MS', () => {
  const consumers: NatsCommandConsumer[] = [];

  const nats = useNatsSuite('NATS ack wait');

  afterEach(async () => {
    for (const consumer of consumers.splice(0)) await consumer.stop();
  });

  afterAll(async () => {
    await nats.close();
  });

  /** Streams and the shared consumer created under a new prefix with the short ack wait (an earlier start's). */
  async function createdShort(): Promise<NatsNames> {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    expect(await ensureStreams(nats.client.jsm, names, SHORT_MS)).toEqual({
      configured: SHORT_MS,
      found: null,
      inEffect: SHORT_MS,
      refusal: null,
      created: [names.commandStream, names.resultStream, names.decisionStream, names.commandConsumer],
    });
    return names;
  }

  /** Starts a consumer configured with {@link CONFIGURED_MS}, publishes two commands of one session, and returns the executor's calls once both are answered. */
  async function runTwoSlowCommands(names: NatsNames): Promise<{ executor: SlowExecutor; consumer: NatsCommandConsumer }> {
    const executor = new SlowExecutor(names.prefix);
    const consumer = new NatsCommandConsumer(nats.nc, nats.client.js, nats.client.jsm, executor, names, 4, CONFIGURED_MS);
    consumers.push(consumer);
    await consumer.start();
    const subject = commandSubject(names.prefix, 'default', 'conv', 'append');
    await publishCommand(nats.client.js, subject, { events: [] }, { msgId: 'slow-1' });
    await publishCommand(nats.client.js, subject, { events: [] }, { msgId: 'queued-2' });
    const answers = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.conv`, 2, { timeoutMs: 20_000 });
    expect(answers.map((a) => [a.headers['Command-Id'], a.headers['Delivery-Count']])).toEqual([
      ['slow-1', '1'],
      ['queued-2', '1'],
    ]);
    // Nothing else arrives: a redelivered command would be executed (and answered) again.
    await new Promise((r) => setTimeout(r, 2 * SHORT_MS));
    expect(executor.calls).toEqual([
      { commandId: 'slow-1', redelivered: false },
      { commandId: 'queued-2', redelivered: false },
    ]);
    expect(await commandQueueSettled(nats.client, names)).toEqual({ pending: 0, unacked: 0, redelivered: 0 });
    return { executor, consumer };
  }

  it('is updated to the configured ack wait at start (one warn line naming both), and a command held longer than its old ack wait is delivered once', async () => {
    const names = await createdShort();
    const check = await ensureStreams(nats.client.jsm, names, CONFIGURED_MS);
    expect(check).toEqual({ configured: CONFIGURED_MS, found: SHORT_MS, inEffect: CONFIGURED_MS, refusal: null, created: [] });
    expect((await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).config.ack_wait).toBe(nanos(CONFIGURED_MS));
    expect(ackWaitLine(names.commandConsumer, check)).toBe(
      `NATS consumer ${names.commandConsumer} had ack_wait ${SHORT_MS} ms, NATS_ACK_WAIT_MS is ${CONFIGURED_MS} ms: consumer updated, ${CONFIGURED_MS} ms in effect`,
    );
    // Same value again: nothing to say.
    expect(ackWaitLine(names.commandConsumer, await ensureStreams(nats.client.jsm, names, CONFIGURED_MS))).toBeNull();
    const { consumer } = await runTwoSlowCommands(names);
    expect(consumer.ackWaitInEffectMs).toBe(CONFIGURED_MS);
  });

  it('keeps held commands alive on the consumer’s own ack wait when it stays shorter than the configured one', async () => {
    // No update (as when the server refuses one): the keep-alive must follow the consumer's 1 s, not a third of 30 s.
    const names = await createdShort();
    const { consumer } = await runTwoSlowCommands(names);
    expect(consumer.ackWaitInEffectMs).toBe(SHORT_MS);
  });

  it('words the line for a refused update with the value that stays in effect', () => {
    expect(ackWaitLine('C', { configured: 30_000, found: 1_000, inEffect: 1_000, refusal: 'consumer update not allowed', created: [] })).toBe(
      "NATS consumer C had ack_wait 1000 ms, NATS_ACK_WAIT_MS is 30000 ms: the server refused the update (consumer update not allowed), the consumer's 1000 ms stays in effect",
    );
  });
});
