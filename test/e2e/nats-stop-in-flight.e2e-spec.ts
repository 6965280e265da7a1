/**
 * A replica stopping while the server hands commands to its pull request (natsleft2): every command
 * the server delivered to it is answered (acknowledged) or given back (a nak) by the time `stop()`
 * resolved, none left to wait out the ack wait. Before, a session's worker giving back its queued
 * commands at stop took them from a copy of its queue: a command of that session the pull's end
 * still brought (the subscription is drained: what the server sent before it took the `UNSUB`
 * arrives) joined the queue after the copy was taken and was left held, never given back, until the
 * ack wait (0–5 per SIGTERM under bench/nats-ack-timing.ts's load; 24 of 64 in most rounds here).
 * Against the machine's NATS server: rounds of a burst of commands (3 per session) with `stop()` at
 * a random instant of it; an observer counts, per delivery (consumer sequence), the acknowledgements,
 * naks and terminations reaching the server, which must answer every delivery the replica received.
 * Not asserted (printed when seen): deliveries the server counted that never reached the replica —
 * about 1 round in 60 loses 1–2 so, the server having picked the pull request for a command just
 * before it took the `UNSUB` (nats-server 2.9 routes the command on another goroutine, after the
 * interest is gone); closing that needs the subscription kept until the server ends the pull
 * request itself (its batch filled or expired), which is left for later.
 */
import { randomUUID } from 'node:crypto';
import { NatsCommandConsumer } from '../../apps/session-service/src/nats/nats-command-consumer';
import type { CommandAnswer, CommandMessage } from '../../apps/session-service/src/nats/nats-command-executor';
import { commandSubject, natsNames, parseCommandSubject } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { connectForTest, describeWithNats, eventually, natsClient, useNatsSuite } from '../support/nats-test';

const ROUNDS = 12;
const BURST = 120;
const CONCURRENCY = 64;
/** Long, so that a command left to the ack wait stays pending well past each round's check. */
const ACK_WAIT_MS = 60_000;

jest.setTimeout(ROUNDS * 20_000);

/** Answers every command 201 after a short pause (the burst keeps arriving meanwhile). */
class QuickExecutor {
  constructor(private readonly prefix: string) {}

  async execute(message: CommandMessage): Promise<CommandAnswer> {
    await new Promise((r) => setTimeout(r, 2));
    return { status: 201, body: {}, kind: 'append', address: parseCommandSubject(this.prefix, message.subject) ?? undefined };
  }
}

describeWithNats('NATS stop with commands in flight')('stopping a replica while the server hands commands to its pull request', () => {
  const nats = useNatsSuite('NATS stop with commands in flight', { quiet: true });

  afterAll(async () => {
    await nats.close();
  });

  it(`leaves no delivered command unacknowledged and not given back, over ${ROUNDS} rounds`, async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    await ensureStreams(nats.client.jsm, names, ACK_WAIT_MS);
    const left: Array<{ round: number; received: number; answered: number; acks: Record<string, number> }> = [];
    const unreceived: Array<{ round: number; delivered: number; received: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const nc = await connectForTest('NATS stop with commands in flight');
      try {
        const { js, jsm } = await natsClient(nc);
        const acks: Record<string, number> = {};
        const answered = new Set<string>();
        const ackSub = nats.nc.subscribe(`$JS.ACK.${names.commandStream}.${names.commandConsumer}.>`, {
          callback: (_e, m) => {
            const k = new TextDecoder().decode(m.data).split(' ')[0];
            acks[k] = (acks[k] ?? 0) + 1;
            const t = m.subject.split('.');
            if (k !== '+WPI') answered.add(t[t.length - 3]);
          },
        });
        await nats.nc.flush();
        const before = (await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).delivered.consumer_seq;
        // Every delivery the replica received (its private `enqueue`: each command the pull yields is queued there).
        const received = jest.spyOn(NatsCommandConsumer.prototype as unknown as { enqueue(m: unknown): void }, 'enqueue');
        const consumer = new NatsCommandConsumer(nc, js, jsm, new QuickExecutor(prefix), names, CONCURRENCY, ACK_WAIT_MS);
        await consumer.start();
        await eventually(
          async () => (await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).num_waiting >= 1,
          10_000,
          'the pull request at the server',
        );
        const published = Array.from({ length: BURST }, (_, i) =>
          nats.client.js.publish(commandSubject(prefix, 'default', `r${round}s${i % 40}`, 'append'), JSON.stringify({ events: [] }), {
            msgID: randomUUID(),
            timeout: 30_000,
          }),
        );
        // Stop at a random instant of the burst: the server is picking the pull request for commands.
        await new Promise((r) => setTimeout(r, Math.random() * 15));
        await consumer.stop();
        await Promise.all(published);
        await nc.flush();
        // Every delivery (a consumer sequence) answered by an acknowledgement, a nak or a termination, as the server
        // receives them: those of the stopped consumer are all on the wire once it flushed.
        const delivered = (await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).delivered.consumer_seq - before;
        await nats.nc.flush();
        ackSub.unsubscribe();
        const got = received.mock.calls.length;
        received.mockRestore();
        if (got !== answered.size) left.push({ round, received: got, answered: answered.size, acks });
        // Delivered by the server, never received: see the module doc (not asserted).
        if (delivered !== got) unreceived.push({ round, delivered, received: got });
      } finally {
        await nc.close();
      }
      // The next round starts on an empty stream: whatever was given back is taken and acknowledged here.
      const rest = await (await nats.client.js.consumers.get(names.commandStream, names.commandConsumer)).fetch({ max_messages: BURST, expires: 2_000 });
      for await (const m of rest) m.ack();
      await nats.client.jsm.streams.purge(names.commandStream);
    }
    if (unreceived.length > 0)
      process.stderr.write(`NATS stop with commands in flight: delivered by the server, never received: ${JSON.stringify(unreceived)}\n`);
    expect(left).toEqual([]);
  });
});
