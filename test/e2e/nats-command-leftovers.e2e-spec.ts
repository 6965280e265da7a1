/**
 * Newcomer ncnatsops F2: after a kill -9 of nats-server under load, the command stream kept
 * 228–840 commands that had been applied and answered (the consumer showing none pending nor
 * awaiting acknowledgement): their bodies, conversation text, stayed on the NATS disk until the
 * same session got a new command (which then waited an ack wait), for good for a session never
 * written again, and an erasure of the session did not reach them.
 * - Leftovers: the command stream made here with limits retention keeps every command the consumer
 *   acknowledged, the state the crash leaves (acknowledged as the consumer recorded, still in the
 *   stream). The service removes them by itself within two checks of the consumer (one a second with
 *   `NATS_CONSUMER_STUCK_MS=5000`): those answered, and one whose subject names no session
 *   (terminated). Before: they stayed.
 * - Erasure: the session's commands the command stream stored before the erasure are deleted when
 *   the decisions feed handles its record (here held by another client of the consumer, as by a
 *   replica, never applied: dropped), not those of another session, and a command published after
 *   it is applied to the session written again. Before: they stayed, and ran after the erasure.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { startService, type Harness } from '../support/service-harness';
import { captureLogLines } from '../support/captured-log-lines';
import { describeWithNats, eventually, publishCommand, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { DUPLICATE_WINDOW_MS } from '../../apps/session-service/src/nats/nats-streams';

jest.setTimeout(90_000);

describeWithNats('NATS command leftovers')('commands left in the command stream', () => {
  const nats = useNatsSuite('NATS command leftovers');
  const harnesses: Harness[] = [];
  let lines: string[] = [];
  let keepAlive: NodeJS.Timeout | undefined;

  beforeAll(() => {
    lines = captureLogLines(['log', 'warn']);
  });

  afterAll(async () => {
    clearInterval(keepAlive);
    for (const h of harnesses) await h.stop();
    await nats.close();
    jest.restoreAllMocks();
  });

  const windowIds = async (h: Harness, session: string): Promise<string[]> => {
    const window = await h.http().get(`/v1/sessions/${session}/window`);
    return window.status === 404 ? [] : (window.body.events as Array<{ id: string }>).map((e) => e.id);
  };
  const turn = (id: string) => ({ events: [{ id, type: 'user', text: `private text ${id}` }] });

  it('commands the consumer acknowledged but the stream still holds are removed without a new command of their session', async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    // Limits retention: the stream keeps what the consumer acknowledged, as after the crash.
    await nats.client.jsm.streams.add({
      name: names.commandStream,
      subjects: [`${prefix}.commands.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    });
    const h = await startService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_CONSUMER_STUCK_MS: '5000' } });
    harnesses.push(h);
    for (const s of ['a', 'b', 'c']) await publishCommand(nats.client.js, commandSubject(prefix, 'default', s, 'append'), turn(`${s}1`), { msgId: `${s}-c1` });
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'a', 'append'), turn('a2'));
    // A subject naming no session: terminated (invalid_subject), no results subject to look an answer up on.
    await publishCommand(nats.client.js, `${prefix}.commands.default.nokind`, turn('x'), { msgId: 'x-c1' });
    await eventually(async () => (await windowIds(h, 'a')).length === 2 && (await windowIds(h, 'b')).length === 1 && (await windowIds(h, 'c')).length === 1);
    await eventually(async () => (await nats.client.jsm.streams.info(names.commandStream)).state.messages === 0, 15_000, 'the leftovers removed');
    const consumer = await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer);
    expect(consumer.ack_floor.stream_seq).toBe(5);
    const removed = lines.filter((l) => l.startsWith('removed ') && l.includes(names.commandStream));
    expect(removed.reduce((n, l) => n + Number(/^removed (\d+)/.exec(l)![1]), 0)).toBe(5);
    expect(removed[0]).toContain('leftovers of a lost acknowledgement');
    // Applied once each (the window is unchanged), nothing else logged about them.
    expect(await windowIds(h, 'a')).toEqual(['a1', 'a2']);
    expect(lines.filter((l) => l.includes('left there'))).toEqual([]);
  });

  it("an erasure deletes the session's commands stored before it, not another session's, nor one published after it", async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    const h1 = await startService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '5000' } });
    await h1.http().post('/v1/sessions/gone/events').send(turn('g0')).expect(201);
    await h1.stop();
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'gone', 'append'), turn('g1'), { msgId: 'gone-c1' });
    await publishCommand(
      nats.client.js,
      commandSubject(prefix, 'default', 'gone', 'compact'),
      { strategy: { type: 'turn-window', maxTurns: 1 } },
      { msgId: 'gone-c2' },
    );
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'kept', 'append'), turn('k1'), { msgId: 'kept-c1' });
    // Held by another client of the consumer, reported in progress (a replica working on them): never applied.
    const consumer = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const taken: JsMsg[] = [];
    for await (const m of await consumer.fetch({ max_messages: 3, expires: 2_000 })) taken.push(m);
    expect(taken.map((m) => m.headers?.get('Nats-Msg-Id'))).toEqual(['gone-c1', 'gone-c2', 'kept-c1']);
    keepAlive = setInterval(() => taken.forEach((m) => m.working()), 1_000);
    const seqs = taken.map((m) => m.info.streamSequence);

    const h = await startService({ dataDir: h1.dataDir, env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '5000' } });
    harnesses.push(h);
    await h.http().delete('/v1/sessions/gone').expect(200);
    const inStream = async (seq: number) => (await nats.client.jsm.streams.getMessage(names.commandStream, { seq })) !== null;
    await eventually(async () => !(await inStream(seqs[0])) && !(await inStream(seqs[1])), 15_000, "the erased session's commands deleted");
    expect(await inStream(seqs[2])).toBe(true);
    // The session written again after the erasure: its command runs.
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'gone', 'append'), turn('g2'), { msgId: 'gone-c3' });
    await eventually(async () => (await windowIds(h, 'gone')).length === 1, 15_000, 'the new life’s command applied');
    expect(await windowIds(h, 'gone')).toEqual(['g2']);
    clearInterval(keepAlive);
    taken[2].nak();
    await eventually(async () => (await windowIds(h, 'kept')).length === 1, 15_000, "the other session's command applied");
  });
});
