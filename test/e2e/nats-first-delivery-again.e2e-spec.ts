/**
 * A command JetStream delivers again as a first delivery (`Delivery-Count` 1, not `redelivered`)
 * after this replica finished it: nats-server restarted by a kill -9 before it recorded the
 * acknowledgement hands the message out anew (ncverify N3: a compaction run twice by one replica, a
 * live listener answered twice with different bodies). The replica remembers the commands it
 * finished (stream sequence and stored time), so it does not run such a delivery again; it saw
 * its answer stored, so it acknowledges it without publishing the answer again (ncrolling F2; a
 * replica that did not publish it answers again, nats-duplicate-delivery.e2e-spec.ts).
 *
 * The consumer runs against the machine's NATS server (streams under a prefix of the test's own)
 * with a stand-in executor; the test takes the command from the durable consumer itself and hands
 * the same message to the consumer twice, as the restarted server did.
 */
import { Logger } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import { NatsCommandConsumer } from '../../apps/session-service/src/nats/nats-command-consumer';
import { commandSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { describeWithNats, publishCommand, readStream, useNatsSuite } from '../support/nats-test';
import { CountingExecutor } from '../support/counting-executor';

jest.setTimeout(60_000);

describeWithNats('NATS first delivery again')('a command delivered again as a first delivery after this replica finished it', () => {
  const nats = useNatsSuite('NATS first delivery again', { quiet: true });

  afterAll(async () => {
    jest.restoreAllMocks();
    await nats.close();
  });

  it('is not run again, nor answered again', async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    await ensureStreams(nats.client.jsm, names, 30_000);
    const executor = new CountingExecutor(prefix);
    const consumer = new NatsCommandConsumer(nats.nc, nats.client.js, nats.client.jsm, executor, names, 1, 30_000);
    const lines: string[] = [];
    jest.spyOn(Logger.prototype, 'debug').mockImplementation((...args: unknown[]) => void lines.push(String(args[0])));
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 's1', 'compact'), {}, { msgId: 'k1' });
    const durable = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const m = await durable.next({ expires: 5_000 });
    expect(m).not.toBeNull();
    expect(m!.redelivered).toBe(false);
    const handle = (msg: JsMsg) => (consumer as unknown as { handle(msg: JsMsg): Promise<void> }).handle(msg);
    await handle(m!);
    await handle(m!);
    expect(executor.runs).toEqual(['k1']);
    const answers = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 's1'), 1);
    expect(answers.map((a) => a.body)).toEqual([{ run: 1 }]);
    expect(
      lines.some((l) => l.includes('"k1" (delivery 1): a duplicate delivery of a command this replica answered (201), acknowledged without answering again')),
    ).toBe(true);
    await consumer.stop();
  });
});
