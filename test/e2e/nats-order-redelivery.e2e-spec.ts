/**
 * Two promises of the README's NATS section after a replica dies holding commands (tester ncsdk,
 * repros 16 and 10): a dead replica's commands come back only after the ack wait, while the
 * restarted (or another) replica takes the session's later commands at once.
 * - Order: a session's commands are applied in the order they arrived (stream order). Before, the
 *   later ones were applied at once and the dead replica's last (policy events 1,2,4,…,3).
 * - Redelivery: a command whose answer was published before its replica died is answered again with
 *   that answer, not run again on the session's later state. Before, a compaction answered `noop` was
 *   re-planned on the later events and compacted.
 *
 * A "dead replica" is a second client of the service's durable consumer that fetches commands and
 * never acknowledges them; the service runs in-process on the machine's NATS server under a prefix
 * of this file's own, with a short ack wait.
 */
import { createInbox, headers } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import { useService } from '../support/service-harness';
import { describeWithNats, eventually, publishCommand, readStream, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';
import { resultMessageId } from '../../apps/session-service/src/nats/nats-command-consumer';

jest.setTimeout(60_000);

const ACK_WAIT_MS = 2_500;
const prefix = uniquePrefix();
const names = natsNames(prefix);
const env = { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: String(ACK_WAIT_MS) };
const subject = (session: string, kind: string) => commandSubject(prefix, 'default', session, kind);
const turn = (id: string) => ({ events: [{ id, type: 'user', text: `question ${id}` }] });

describeWithNats('NATS order and redelivery')('a replica dies holding commands', () => {
  const harness = useService({ env });
  const nats = useNatsSuite('NATS order and redelivery', { prefixes: [prefix], quiet: true });

  afterAll(async () => {
    await nats.close();
  });

  /** Fetches the next `count` commands from the service's durable consumer and keeps them unacknowledged, as a replica that died with them would. */
  async function takenByADeadReplica(count: number): Promise<JsMsg[]> {
    const consumer = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const taken: JsMsg[] = [];
    const batch = await consumer.fetch({ max_messages: count, expires: 2_000 });
    for await (const m of batch) taken.push(m);
    expect(taken).toHaveLength(count);
    return taken;
  }

  /** Client ids of the session's events, in log order. */
  async function eventIds(session: string): Promise<string[]> {
    const page = await harness.http().get(`/v1/sessions/${session}/events`).query({ limit: 1000 });
    if (page.status === 404) return [];
    expect(page.status).toBe(200);
    return (page.body.events as Array<{ type: string; event?: { id?: string }; id?: string; eventId?: string }>)
      .filter((e) => e.type === 'ConversationEventAppended')
      .map((e) => String(e.event?.id ?? e.id ?? e.eventId));
  }

  it("applies each session's commands in stream order when earlier ones come back after the ack wait", async () => {
    await harness.stop();
    // Interleaved: a1 b1 a2 b2 ... a5 b5; the dead replica holds a1 b1 a2.
    for (let i = 1; i <= 5; i++) {
      for (const s of ['ordera', 'orderb']) await publishCommand(nats.client.js, subject(s, 'append'), turn(`${s}-${i}`), { msgId: `${s}-c${i}` });
    }
    const taken = await takenByADeadReplica(3);
    expect(taken.map((m) => m.headers?.get('Nats-Msg-Id'))).toEqual(['ordera-c1', 'orderb-c1', 'ordera-c2']);
    await harness.start();
    await eventually(async () => (await eventIds('ordera')).length === 5 && (await eventIds('orderb')).length === 5, 30_000, 'every command applied');
    const ids = async (s: string) => (await eventIds(s)).map((id) => id.replace(/^.*?(\w+-\d+)$/, '$1'));
    expect(await ids('ordera')).toEqual(['ordera-1', 'ordera-2', 'ordera-3', 'ordera-4', 'ordera-5']);
    expect(await ids('orderb')).toEqual(['orderb-1', 'orderb-2', 'orderb-3', 'orderb-4', 'orderb-5']);
  });

  it('answers a redelivered command whose answer was published with that answer, and does not run it again', async () => {
    // Seven events: a turn-window compaction (2 turns) run now would archive some.
    const events = Array.from({ length: 7 }, (_, i) => ({ id: `t${i}`, type: i % 2 ? 'assistant' : 'user', text: `turn ${i}` }));
    await harness.http().post('/v1/sessions/noopthen/events').send({ events }).expect(201);
    await harness.stop();
    const inbox = createInbox();
    const replies = nats.nc.subscribe(inbox, { max: 1 });
    await publishCommand(
      nats.client.js,
      subject('noopthen', 'compact'),
      { strategy: { type: 'turn-window', maxTurns: 2 } },
      { msgId: 'noop-compact-1', replyTo: inbox },
    );
    const [taken] = await takenByADeadReplica(1);
    expect(taken.info.deliveryCount).toBe(1);
    // What the dead replica published before dying: its answer, decided on an earlier state (nothing to compact then).
    const published = { outcome: 'noop', reason: 'nothing to compact', revision: '1' };
    const h = headers();
    for (const [k, v] of Object.entries({ 'Command-Id': 'noop-compact-1', Status: '200', 'Command-Type': 'compact', 'Delivery-Count': '1' })) h.set(k, v);
    await nats.client.js.publish(resultSubject(prefix, 'default', 'noopthen'), JSON.stringify(published), {
      headers: h,
      msgID: resultMessageId('default', 'noopthen', 'noop-compact-1'),
    });
    await harness.start();
    // Redelivered after the ack wait: answered again with the published answer, on Reply-To too.
    const replied = (async () => {
      for await (const m of replies) return { status: m.headers?.get('Status'), count: m.headers?.get('Delivery-Count'), body: m.json<unknown>() };
    })();
    expect(await replied).toEqual({ status: '200', count: '2', body: published });
    const answers = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 'noopthen'), 2, { timeoutMs: 2_000 });
    expect(answers.map((a) => a.body)).toEqual([published]);
    const history = await harness.http().get('/v1/sessions/noopthen/compactions').expect(200);
    expect(history.body.compactions).toEqual([]);
    expect(await eventIds('noopthen')).toHaveLength(7);
    await eventually(async () => (await nats.client.jsm.streams.info(names.commandStream)).state.messages === 0, 10_000, 'the command acknowledged');
  });
});
