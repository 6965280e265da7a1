/**
 * Chaos finding F3 (ncnatschaos): a replica that lived through the command stream's re-creation
 * (nats-server restarted on an empty store, the streams made again as the service makes them at
 * start) must not take a command of the new stream as finished because a command with the same
 * sequence was finished in the stream's earlier life. Before, the new stream's seq 1 (held
 * elsewhere, unapplied) was skipped as "finished" and the session's later command ran first.
 * Against a throwaway `nats-server` of its own (killed, its store wiped, restarted on the same port);
 * skips with one line when no `nats-server` binary is installed.
 */
import fs from 'node:fs';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import { startService, type Harness } from '../support/service-harness';
import { eventually, natsClient, publishCommand, uniquePrefix, type NatsTestClient } from '../support/nats-test';
import { NATS_SERVER_BINARY, startThrowawayNats, type ThrowawayNats } from '../support/throwaway-nats';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';

const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS order after the command stream is re-created: no nats-server binary installed\n');

const ACK_WAIT_MS = 2_000;

suite('NATS order after the command stream is re-created', () => {
  jest.setTimeout(120_000);
  const prefix = uniquePrefix();
  const names = natsNames(prefix);
  const subject = commandSubject(prefix, 'default', 'wiped', 'append');
  const turn = (k: number) => ({ events: [{ id: `k${k}`, type: 'user', text: `turn ${k}` }] });
  let nats: ThrowawayNats;
  let harness: Harness;
  let nc: NatsConnection | null = null;

  beforeAll(async () => {
    nats = await startThrowawayNats('nats-order-recreated');
    harness = await startService({ env: { NATS_URL: nats.url, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: String(ACK_WAIT_MS) } });
  });

  afterAll(async () => {
    await nc?.close();
    await harness?.stop();
    await nats?.stop();
  });

  async function eventIds(): Promise<string[]> {
    const page = await harness.http().get('/v1/sessions/wiped/events').query({ limit: 1000 });
    if (page.status === 404) return [];
    return (page.body.events as Array<{ type: string; event?: { id?: string }; id?: string; eventId?: string }>)
      .filter((e) => e.type === 'ConversationEventAppended')
      .map((e) => String(e.event?.id ?? e.id ?? e.eventId).replace(/^.*?(k\d+)$/, '$1'));
  }

  it("applies a session's commands in stream order after the stream is re-created, though this replica finished the same sequences in its earlier life", async () => {
    let client: NatsTestClient = await natsClient(nats.nc);
    // First life: seqs 1..4, all applied by the service (remembered as finished).
    for (let k = 1; k <= 4; k++) await publishCommand(client.js, subject, turn(k), { msgId: `wiped-k${k}` });
    await eventually(async () => (await eventIds()).length === 4, 20_000, 'the first life applied');

    // nats-server restarted on an empty store; the streams and consumer made again as the service makes them at start.
    await nats.kill();
    fs.rmSync(nats.storeDir, { recursive: true, force: true });
    nats.restart();
    await eventually(
      async () => {
        try {
          nc = await connect({ servers: nats.url, timeout: 1000 });
          return true;
        } catch {
          return false;
        }
      },
      20_000,
      'the restarted server',
    );
    client = await natsClient(nc!);
    await ensureStreams(client.jsm, names, ACK_WAIT_MS);
    // Another replica takes k5 (new seq 1) and dies with it: redelivered after the ack wait. Its request is in before k5 is published.
    const consumer = await client.js.consumers.get(names.commandStream, names.commandConsumer);
    const batch = await consumer.fetch({ max_messages: 1, expires: 5_000 });
    const taken = (async () => {
      const got: JsMsg[] = [];
      for await (const m of batch) got.push(m);
      return got;
    })();
    await publishCommand(client.js, subject, turn(5), { msgId: 'wiped-k5' });
    expect((await taken).map((m) => [m.info.streamSequence, m.headers?.get('Nats-Msg-Id')])).toEqual([[1, 'wiped-k5']]);
    // k6 (seq 2) comes to the surviving service, whose finished set holds seq 1 of the earlier life.
    await publishCommand(client.js, subject, turn(6), { msgId: 'wiped-k6' });
    // The service's pull comes back on its own; after a reconnect that found no consumer yet the client may back off for a while.
    await eventually(async () => (await eventIds()).length === 6, 75_000, 'k5 and k6 applied');
    expect(await eventIds()).toEqual(['k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
  });
});
