/**
 * A command JetStream hands out again to the replica that answered it (ncrolling F2: with a backlog
 * longer than the ack wait, a copy waiting in the client library's buffer was redelivered to the same
 * replica, which published its answer a second time: live listeners got two answers). A replica that
 * answered a command and saw its answer stored on the results stream acknowledges another delivery
 * of it without publishing the answer again; a replica without that memory (another one, or a
 * restarted one) still answers a redelivery again with the published answer (README "Answers are
 * at-least-once").
 *
 * The consumers run against the machine's NATS server (streams under a prefix of the test's own)
 * with a stand-in executor; the test takes the command from the durable consumer itself, gives it
 * back (nak) to get its redelivery, and hands both copies to the consumers.
 */
import { Logger } from '@nestjs/common';
import { createInbox, type Msg } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import { NatsCommandConsumer } from '../../apps/session-service/src/nats/nats-command-consumer';
import { commandSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { describeWithNats, publishCommand, readStream, useNatsSuite } from '../support/nats-test';
import { CountingExecutor } from '../support/counting-executor';

jest.setTimeout(60_000);

describeWithNats('NATS duplicate delivery')('a command delivered again to the replica that answered it', () => {
  const nats = useNatsSuite('NATS duplicate delivery', { quiet: true });

  afterAll(async () => {
    jest.restoreAllMocks();
    await nats.close();
  });

  it('is acknowledged without a second answer; another replica still answers it again', async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    await ensureStreams(nats.client.jsm, names, 30_000);
    const executor = new CountingExecutor(prefix);
    const consumer = (executor: CountingExecutor) => new NatsCommandConsumer(nats.nc, nats.client.js, nats.client.jsm, executor, names, 1, 30_000);
    const replica = consumer(executor);
    const other = consumer(executor);
    const debug: string[] = [];
    jest.spyOn(Logger.prototype, 'debug').mockImplementation((...args: unknown[]) => void debug.push(String(args[0])));
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    // Live listeners: the results subject and the command's Reply-To.
    const live: Msg[] = [];
    const replyTo = createInbox();
    for (const subject of [resultSubject(prefix, 'default', 's1'), replyTo]) nats.nc.subscribe(subject, { callback: (_err, msg) => void live.push(msg) });
    await nats.nc.flush();
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 's1', 'compact'), {}, { msgId: 'd1', replyTo });
    const durable = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const first = await durable.next({ expires: 5_000 });
    first!.nak();
    await nats.nc.flush();
    const second = await durable.next({ expires: 5_000 });
    expect(second?.info.deliveryCount).toBe(2);
    expect(second?.info.streamSequence).toBe(first!.info.streamSequence);
    const handle = (c: NatsCommandConsumer, msg: JsMsg) => (c as unknown as { handle(msg: JsMsg): Promise<void> }).handle(msg);

    await handle(replica, first!);
    await handle(replica, second!);
    await nats.nc.flush();
    expect(executor.runs).toEqual(['d1']);
    // One answer on the results subject, one on Reply-To.
    expect(live.map((m) => [m.subject, m.headers?.get('Delivery-Count')]).sort()).toEqual(
      [
        [resultSubject(prefix, 'default', 's1'), '1'],
        [replyTo, '1'],
      ].sort(),
    );
    expect(debug.filter((l) => l.includes('"d1" (delivery 2): a duplicate delivery of a command this replica answered (201)'))).toHaveLength(1);

    // A replica that did not answer it answers the redelivery again with the published answer.
    await handle(other, second!);
    await nats.nc.flush();
    expect(executor.runs).toEqual(['d1']);
    expect(
      live
        .slice(2)
        .map((m) => [m.subject, m.headers?.get('Delivery-Count'), new TextDecoder().decode(m.data)])
        .sort(),
    ).toEqual(
      [
        [replyTo, '2', '{"run":1}'],
        [resultSubject(prefix, 'default', 's1'), '2', '{"run":1}'],
      ].sort(),
    );
    const stored = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 's1'), 1);
    expect(stored.map((a) => a.body)).toEqual([{ run: 1 }]);
    await replica.stop();
    await other.stop();
  });
});
