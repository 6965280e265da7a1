/**
 * Chaos finding F4 (ncnatschaos): a command JetStream keeps "ack pending" and never delivers again
 * (nats-server 2.9.10 after a kill -9 lost its acknowledgement) held its session's later commands
 * for ever, silently. Here another client of the service's durable consumer takes the earlier
 * commands and keeps reporting them in progress (so JetStream never redelivers them, as with that
 * state): one was applied and answered (its answer is on the results stream, as the replica that
 * ran it published it), the other was not.
 * - The answered one is removed from the command stream after about an ack wait, and its session's
 *   later command goes on, with one warn line. Before, the later command waited for ever.
 * - The unanswered one keeps its session waiting (the order holds), but after 3 ack waits the wait
 *   is logged once (naming both sequences and the session) and counted in `/health`
 *   `nats.commandsStalled` and `/metrics` `nats_commands_stalled`, until it ends. Before, nothing.
 * The service runs in-process on the machine's NATS server under a prefix of this file's own.
 */
import { Logger } from '@nestjs/common';
import { headers } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import { useService } from '../support/service-harness';
import { describeWithNats, eventually, publishCommand, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';
import { resultMessageId } from '../../apps/session-service/src/nats/nats-command-consumer';

jest.setTimeout(60_000);

const ACK_WAIT_MS = 1_500;
const prefix = uniquePrefix();
const names = natsNames(prefix);
const env = { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: String(ACK_WAIT_MS) };
const subject = (session: string) => commandSubject(prefix, 'default', session, 'append');
const turn = (id: string) => ({ events: [{ id, type: 'user', text: `question ${id}` }] });

describeWithNats('NATS order stall')('an earlier command JetStream never delivers again', () => {
  const harness = useService({ env });
  const nats = useNatsSuite('NATS order stall', { prefixes: [prefix] });
  const warned: string[] = [];
  let keepAlive: NodeJS.Timeout | undefined;

  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((...args: unknown[]) => {
      warned.push(String(args[0]));
    });
  });

  afterAll(async () => {
    clearInterval(keepAlive);
    await harness.stop();
    await nats.close();
    jest.restoreAllMocks();
  });

  async function eventIds(session: string): Promise<string[]> {
    const page = await harness.http().get(`/v1/sessions/${session}/events`).query({ limit: 1000 });
    if (page.status === 404) return [];
    return (page.body.events as Array<{ type: string; event?: { id?: string }; id?: string; eventId?: string }>)
      .filter((e) => e.type === 'ConversationEventAppended')
      .map((e) => String(e.event?.id ?? e.id ?? e.eventId).replace(/^.*?(\w+-\d+)$/, '$1'));
  }
  const stalled = async () => (await harness.http().get('/health').expect(200)).body.nats.commandsStalled as number;
  const metric = async () => /^nats_commands_stalled (\S+)$/m.exec((await harness.http().get('/metrics').expect(200)).text)?.[1];

  it('goes on past an earlier command answered already (removed from the stream); reports one waiting for longer than 3 ack waits, and the order holds', async () => {
    await harness.stop();
    await publishCommand(nats.client.js, subject('answered'), turn('answered-1'), { msgId: 'answered-c1' });
    await publishCommand(nats.client.js, subject('stuck'), turn('stuck-1'), { msgId: 'stuck-c1' });
    // Taken by another client, kept in progress for ever: JetStream never delivers them again.
    const consumer = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const taken: JsMsg[] = [];
    for await (const m of await consumer.fetch({ max_messages: 2, expires: 2_000 })) taken.push(m);
    expect(taken.map((m) => m.headers?.get('Nats-Msg-Id'))).toEqual(['answered-c1', 'stuck-c1']);
    keepAlive = setInterval(() => taken.forEach((m) => m.working()), ACK_WAIT_MS / 3);
    const [answeredSeq, stuckSeq] = taken.map((m) => m.info.streamSequence);
    // answered-c1 was applied and answered by the replica that took it: its answer is on the results stream.
    const h = headers();
    for (const [k, v] of Object.entries({ 'Command-Id': 'answered-c1', Status: '201', 'Command-Type': 'append', 'Delivery-Count': '1' })) h.set(k, v);
    await nats.client.js.publish(resultSubject(prefix, 'default', 'answered'), JSON.stringify({ revision: '1' }), {
      headers: h,
      msgID: resultMessageId('default', 'answered', 'answered-c1'),
    });
    await publishCommand(nats.client.js, subject('answered'), turn('answered-2'), { msgId: 'answered-c2' });
    await publishCommand(nats.client.js, subject('stuck'), turn('stuck-2'), { msgId: 'stuck-c2' });
    await harness.start();

    await eventually(async () => (await eventIds('answered')).includes('answered-2'), 20_000, 'the command behind the answered one applied');
    expect(await nats.client.jsm.streams.getMessage(names.commandStream, { seq: answeredSeq })).toBeNull();
    expect(warned.filter((l) => l.includes(`sequence ${answeredSeq} of session`) && l.includes('removed from it'))).toHaveLength(1);

    // The unanswered one: its session waits (nothing applied), reported once after 3 ack waits.
    await eventually(async () => (await stalled()) === 1, 20_000, '/health to count the stalled command');
    expect(await metric()).toBe('1');
    expect(await eventIds('stuck')).toEqual([]);
    const lines = warned.filter((l) => l.includes('has waited'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`command stream sequence ${stuckSeq + 2} of session`);
    expect(lines[0]).toContain(`earlier command at sequence ${stuckSeq}`);
    expect(lines[0]).toContain('stuck');

    // Given back: applied in order, the stall ends.
    clearInterval(keepAlive);
    taken[1].nak();
    await eventually(async () => (await eventIds('stuck')).length === 2, 20_000, 'the stuck session applied');
    expect(await eventIds('stuck')).toEqual(['stuck-1', 'stuck-2']);
    expect(await stalled()).toBe(0);
    expect(await metric()).toBe('0');
  });
});
