/**
 * The command consumer's pull request under faults a NATS server does not report (natsack), through
 * a TCP proxy between one consumer and the machine's NATS server (test/support/nats-proxy.ts):
 * - a pull request the server never got (no reconnect, no 409): before, nothing reached the replica
 *   until the client library gave the pull up after two missed idle heartbeats, half its 30 s
 *   expiry each (30 s); now the heartbeats come every 2.5 s and the replica pulls again within seconds;
 * - a command the server sent to the pull request while the replica ended it (its `UNSUB` on the
 *   way, at stop or at resubscribe): before, the client library dropped it, the server counted it
 *   delivered, and it waited out the ack wait (60 s here); now the pull's subscription is drained,
 *   so the replica takes it: given back at once at stop, handled (`Delivery-Count` 1) at resubscribe.
 * Assertions are on counts and delivery counts, with bounds far from the 30 s and 60 s of before.
 */
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { NatsCommandConsumer, PULL_EXPIRES_MS } from '../../apps/session-service/src/nats/nats-command-consumer';
import type { CommandAnswer, CommandMessage } from '../../apps/session-service/src/nats/nats-command-executor';
import { commandSubject, natsNames, parseCommandSubject, type NatsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { describeWithNats, eventually, natsClient, NATS_TEST_URL, publishCommand, useNatsSuite } from '../support/nats-test';
import { startNatsProxy, type ClientFrame, type NatsProxy } from '../support/nats-proxy';

jest.setTimeout(60_000);

/** Long, so that a command left to the ack wait cannot be mistaken for one taken at once. */
const ACK_WAIT_MS = 60_000;

/** Answers every command 201 and records its id. */
class RecordingExecutor {
  readonly runs: string[] = [];
  constructor(private readonly prefix: string) {}

  async execute(message: CommandMessage): Promise<CommandAnswer> {
    this.runs.push(message.commandId);
    return { status: 201, body: {}, kind: 'append', address: parseCommandSubject(this.prefix, message.subject) ?? undefined };
  }
}

describeWithNats('NATS pull on the wire')('a pull request lost, or ended with a command on the wire', () => {
  const nats = useNatsSuite('NATS pull on the wire', { quiet: true });
  const cleanups: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await nats.close();
    jest.restoreAllMocks();
  });

  /** A consumer of its own prefix connected through a proxy; its answers as a live subscriber gets them. */
  async function setUp(): Promise<{
    names: NatsNames;
    prefix: string;
    proxy: NatsProxy;
    nc: NatsConnection;
    consumer: NatsCommandConsumer;
    executor: RecordingExecutor;
    answers: Msg[];
  }> {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    await ensureStreams(nats.client.jsm, names, ACK_WAIT_MS);
    const answers: Msg[] = [];
    nats.nc.subscribe(`${prefix}.results.>`, { callback: (_err, msg) => void answers.push(msg) });
    await nats.nc.flush();
    const proxy = await startNatsProxy(NATS_TEST_URL);
    cleanups.push(() => proxy.close());
    const nc = await connect({ servers: proxy.url, name: 'pull on the wire' });
    cleanups.push(() => nc.close());
    const { js, jsm } = await natsClient(nc);
    const executor = new RecordingExecutor(prefix);
    const consumer = new NatsCommandConsumer(nc, js, jsm, executor, names, 4, ACK_WAIT_MS);
    cleanups.push(() => consumer.stop());
    return { names, prefix, proxy, nc, consumer, executor, answers };
  }

  const isPull = (names: NatsNames) => (f: ClientFrame) => f.subject?.startsWith(`$JS.API.CONSUMER.MSG.NEXT.${names.commandStream}.`) === true;

  /** Waits until the server holds a pull request of the consumer, with `delivered` commands handed out and not acknowledged. */
  async function serverSees(names: NatsNames, state: { waiting?: number; delivered: number }): Promise<void> {
    await eventually(
      async () => {
        const info = await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer);
        return info.num_ack_pending === state.delivered && (state.waiting === undefined || info.num_waiting >= state.waiting);
      },
      10_000,
      `the server to see ${JSON.stringify(state)}`,
    );
  }

  it('a pull request the server never got: the replica pulls again and answers a command well before the pull would expire', async () => {
    const { names, prefix, proxy, consumer, executor, answers } = await setUp();
    const dropped = proxy.dropNext(`$JS.API.CONSUMER.MSG.NEXT.${names.commandStream}.`);
    await consumer.start();
    await dropped;
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 's1', 'append'), { events: [] }, { msgId: 'c-lost-pull' });
    // Before: nothing until two missed heartbeats of 15 s each ended the pull (30 s, PULL_EXPIRES_MS).
    await eventually(() => answers.length === 1, PULL_EXPIRES_MS - 10_000, 'the command answered by a pull request made after the lost one');
    expect(executor.runs).toEqual(['c-lost-pull']);
    expect(answers[0].headers?.get('Delivery-Count')).toBe('1');
    expect(proxy.frames.filter(isPull(names)).map((f) => f.forwarded)).toEqual([false, true]);
  });

  it('stop with a command on the wire: the command is given back at once, not left to the ack wait', async () => {
    const { names, prefix, proxy, consumer, executor } = await setUp();
    await consumer.start();
    await serverSees(names, { waiting: 1, delivered: 0 });
    // The consumer's end of its pull request is held at the proxy while the server hands it a command.
    proxy.holdFrom((f) => f.verb === 'UNSUB');
    const stopped = consumer.stop();
    await eventually(() => proxy.frames.some((f) => f.verb === 'UNSUB'), 10_000, 'the pull request ended');
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 's1', 'append'), { events: [] }, { msgId: 'c-on-the-wire' });
    await serverSees(names, { delivered: 1 });
    proxy.release();
    await stopped;
    expect(executor.runs).toEqual([]);
    // Given back (a nak): another consumer takes it now (before: after the ack wait, 60 s).
    const other = await (await nats.client.js.consumers.get(names.commandStream, names.commandConsumer)).fetch({ max_messages: 1, expires: 5_000 });
    const taken: Array<{ id: string | undefined; deliveries: number }> = [];
    for await (const m of other) {
      taken.push({ id: m.headers?.get('Nats-Msg-Id'), deliveries: m.info.deliveryCount });
      m.ack();
    }
    expect(taken).toEqual([{ id: 'c-on-the-wire', deliveries: 2 }]);
  });

  it('resubscribe with a command on the wire: the replica handles it on its first delivery', async () => {
    const { names, prefix, proxy, consumer, executor, answers } = await setUp();
    await consumer.start();
    await serverSees(names, { waiting: 1, delivered: 0 });
    proxy.holdFrom((f) => f.verb === 'UNSUB');
    await consumer.resubscribe();
    await eventually(() => proxy.frames.some((f) => f.verb === 'UNSUB'), 10_000, 'the pull request ended');
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 's1', 'append'), { events: [] }, { msgId: 'c-resubscribed' });
    await serverSees(names, { delivered: 1 });
    proxy.release();
    // Before: dropped by the client library, redelivered only after the 60 s ack wait.
    await eventually(() => answers.length === 1, 20_000, 'the command answered');
    expect(executor.runs).toEqual(['c-resubscribed']);
    expect(answers[0].headers?.get('Delivery-Count')).toBe('1');
    await consumer.stop();
    expect((await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).num_ack_pending).toBe(0);
  });
});
