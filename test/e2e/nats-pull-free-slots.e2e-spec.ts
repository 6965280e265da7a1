/**
 * A replica takes from JetStream only the commands it has a free slot for (natspull). Before, the
 * client library's `consume()` pulled ahead of the handling loop and kept commands in its buffer
 * that the replica had not started and did not report in progress: one that waited there longer
 * than the ack wait (its replica busy with slow commands) was delivered again to another replica,
 * which answered it, and then answered once more by the first one when it got to its buffer — one
 * command run and answered twice. Now every command delivered to a replica is held (reported in
 * progress) from its delivery, and a replica pulls only for its free slots, so the other replica
 * takes the commands the busy one has no room for.
 *
 * Two consumers of one durable consumer (two replicas) against the machine's NATS server, under a
 * prefix of this file's own, with a short ack wait and stand-in executors: replica A (2 slots) is
 * kept busy on two slow commands, two more commands follow, then replica B starts.
 */
import type { Msg } from '@nats-io/transport-node';
import { NatsCommandConsumer } from '../../apps/session-service/src/nats/nats-command-consumer';
import type { CommandAnswer, CommandMessage } from '../../apps/session-service/src/nats/nats-command-executor';
import { commandSubject, natsNames, parseCommandSubject } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { commandQueueSettled, describeWithNats, eventually, publishCommand, readStream, useNatsSuite } from '../support/nats-test';

jest.setTimeout(30_000);

/** The consumer's ack wait (ms): short, so that a command left unreported is redelivered within the test. */
const ACK_WAIT_MS = 1_000;

/** Answers every command 201; those whose id starts with `slow` only once {@link release} is called. Records each run with its replica. */
class GatedExecutor {
  private opened!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.opened = resolve));
  constructor(
    private readonly prefix: string,
    private readonly runs: Array<{ commandId: string; replica: string }>,
    private readonly replica: string,
  ) {}

  async execute(message: CommandMessage): Promise<CommandAnswer> {
    this.runs.push({ commandId: message.commandId, replica: this.replica });
    if (message.commandId.startsWith('slow')) await this.gate;
    return { status: 201, body: { replica: this.replica }, kind: 'append', address: parseCommandSubject(this.prefix, message.subject) ?? undefined };
  }

  release(): void {
    this.opened();
  }
}

describeWithNats('NATS pull for free slots')('a replica busy on slow commands while more commands wait', () => {
  const nats = useNatsSuite('NATS pull for free slots', { quiet: true });
  const consumers: NatsCommandConsumer[] = [];
  const executors: GatedExecutor[] = [];

  afterAll(async () => {
    // A failed test may leave the slow commands waiting: they are let through so that the consumers stop.
    for (const executor of executors) executor.release();
    for (const consumer of consumers) await consumer.stop();
    await nats.close();
    jest.restoreAllMocks();
  });

  it('leaves the commands it has no slot for to another replica: each command is run and answered once', async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    await ensureStreams(nats.client.jsm, names, ACK_WAIT_MS);
    const runs: Array<{ commandId: string; replica: string }> = [];
    const replica = (name: string, concurrency: number) => {
      const executor = new GatedExecutor(prefix, runs, name);
      const { nc, js, jsm } = nats.client;
      const consumer = new NatsCommandConsumer(nc, js, jsm, executor, names, concurrency, ACK_WAIT_MS);
      consumers.push(consumer);
      executors.push(executor);
      return { executor, consumer };
    };
    // Every answer as its listeners get it (the results stream keeps one per command id; live subscribers get each publish).
    const live: Msg[] = [];
    nats.nc.subscribe(`${prefix}.results.>`, { callback: (_err, msg) => void live.push(msg) });
    await nats.nc.flush();

    const a = replica('A', 2);
    await a.consumer.start();
    const ids = ['slow-1', 'slow-2', 'next-3', 'next-4'];
    for (const [i, id] of ids.entries())
      await publishCommand(nats.client.js, commandSubject(prefix, 'default', `s${i + 1}`, 'append'), { events: [] }, { msgId: id });
    await eventually(() => runs.length >= 2, 5_000, 'replica A to start both slow commands');
    expect(runs).toEqual([
      { commandId: 'slow-1', replica: 'A' },
      { commandId: 'slow-2', replica: 'A' },
    ]);
    // Replica A took only the commands it has slots for: the other two wait in the stream.
    await new Promise((r) => setTimeout(r, 300));
    const taken = await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer);
    // Replica A stays busy for three ack waits while replica B runs.
    const b = replica('B', 2);
    await b.consumer.start();
    await new Promise((r) => setTimeout(r, 3 * ACK_WAIT_MS));
    a.executor.release();

    const answers = await readStream(nats.client, names.resultStream, `${prefix}.results.>`, 4, { timeoutMs: 10_000 });
    expect(answers.map((m) => m.headers['Command-Id']).sort()).toEqual([...ids].sort());
    const settled = await commandQueueSettled(nats.client, names);
    // A copy run again would be answered by now (its replica's slots are free).
    await new Promise((r) => setTimeout(r, 2 * ACK_WAIT_MS));
    expect(runs.map((r) => r.commandId).sort()).toEqual([...ids].sort());
    expect(runs.map((r) => `${r.commandId} by ${r.replica}`).sort()).toEqual(['slow-1 by A', 'slow-2 by A', 'next-3 by B', 'next-4 by B'].sort());
    expect(live.map((m) => m.headers?.get('Command-Id')).sort()).toEqual([...ids].sort());
    expect(settled).toEqual({ pending: 0, unacked: 0, redelivered: 0 });
    expect({ delivered: taken.num_ack_pending, waiting: taken.num_pending }).toEqual({ delivered: 2, waiting: 2 });
  });
});
