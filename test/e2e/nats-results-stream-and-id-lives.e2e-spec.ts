/**
 * Newcomer ncnatsint (a NATS-only integrator), F1–F4, against the real server (the shared one, a
 * prefix of its own):
 * - F2: a command without `Nats-Msg-Id` got the id `<stream>:<sequence>`; after the command stream
 *   was deleted and re-created (sequences from 1 again) a new append was refused 409
 *   `duplicate_event_id` (its event lost). Its id now holds the time the stream stored it.
 * - F1: a deleted results stream was never re-created: every command was applied, answered live
 *   and redelivered every second for ever, never acknowledged.
 * - F3: a full results stream had one replica answer the same command live once a second, with
 *   nothing in `/health` or `/metrics`. Now redelivered 1 s, 2 s, 4 s … apart, and counted.
 * - F4: `CompactionCompleted` decisions on the feed had no `archivedIds`.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { DiscardPolicy } from '@nats-io/jetstream';
import { useNatsService } from '../support/nats-service';
import { describeWithNats, eventually, publishCommand, readStream, useNatsSuite } from '../support/nats-test';
import { commandSubject, resultSubject } from '../../apps/session-service/src/nats/nats-names';

const suite = describeWithNats('NATS results stream and command id lives');

suite('NATS: the results stream lost or full, commands without Nats-Msg-Id across stream lives, archived ids on the feed', () => {
  jest.setTimeout(120_000);
  const nats = useNatsSuite('nats-results-stream-and-id-lives');
  const service = useNatsService(nats);
  const names = () => service.names();

  const texts = async (session: string): Promise<string[]> => {
    const page = await service.harness.http().get(`/v1/sessions/${session}/events`).query({ limit: 1000 });
    if (page.status === 404) return [];
    return (page.body.events as Array<{ type: string; data: { event: { text: string } } }>)
      .filter((e) => e.type === 'ConversationEventAppended')
      .map((e) => e.data.event.text);
  };
  const streamThere = (stream: string) =>
    nats.client.jsm.streams.info(stream).then(
      () => true,
      () => false,
    );
  /** Counts the live answers on `session`'s results subject (a core subscription: every publish). */
  const listen = (nc: NatsConnection, session: string): { sub: Subscription; got: Array<Record<string, string>> } => {
    const sub = nc.subscribe(resultSubject(service.prefix, 'default', session));
    const got: Array<Record<string, string>> = [];
    void (async () => {
      for await (const m of sub) {
        const h: Record<string, string> = {};
        for (const [k, v] of m.headers ?? []) h[k] = v[0];
        got.push(h);
      }
    })();
    return { sub, got };
  };

  it('applies a new command without Nats-Msg-Id at a sequence a finished one had in the command stream’s earlier life, with an id of its own', async () => {
    const session = 'noid-lives';
    const { sub, got } = listen(nats.nc, session);
    try {
      for (const [life, text] of [
        [1, 'first life: budget is 100 EUR'],
        [2, 'second life: budget is 900 EUR'],
      ] as const) {
        // The first life is the stream the service made at start (this test runs first): sequence 1 is this command's.
        if (life > 1) await nats.client.jsm.streams.delete(names().commandStream);
        await eventually(() => streamThere(names().commandStream), 30_000, 'the command stream re-created');
        await eventually(
          () =>
            nats.client.jsm.consumers.info(names().commandStream, names().commandConsumer).then(
              () => true,
              () => false,
            ),
          30_000,
          'the consumer re-created',
        );
        await publishCommand(nats.client.js, commandSubject(service.prefix, 'default', session, 'append'), { events: [{ type: 'user', text }] });
        await eventually(() => got.length >= life, 40_000, `the answer of life ${life}`);
      }
    } finally {
      sub.unsubscribe();
    }
    expect(got.map((h) => h.Status)).toEqual(['201', '201']);
    // Both at sequence 1 of their life, each with its own id: `<stream>:<sequence>:<stored time in ns>`.
    const ids = got.map((h) => h['Command-Id']);
    for (const id of ids) expect(id).toMatch(new RegExp(`^${names().commandStream}:1:\\d{16,}$`));
    expect(ids[0]).not.toBe(ids[1]);
    expect(await texts(session)).toEqual(['first life: budget is 100 EUR', 'second life: budget is 900 EUR']);
  });

  it('re-creates a deleted results stream, stores the answer there and acknowledges the command', async () => {
    const session = 'results-deleted';
    await nats.client.jsm.streams.delete(names().resultStream);
    await publishCommand(
      nats.client.js,
      commandSubject(service.prefix, 'default', session, 'append'),
      { events: [{ id: 'u1', type: 'user', text: 'after rm' }] },
      { msgId: 'rm-1' },
    );
    await eventually(() => streamThere(names().resultStream), 30_000, 'the results stream re-created');
    const [answer] = await readStream(nats.client, names().resultStream, resultSubject(service.prefix, 'default', session), 1, { timeoutMs: 30_000 });
    expect(answer?.headers).toMatchObject({ 'Command-Id': 'rm-1', Status: '201' });
    await eventually(
      async () => (await nats.client.jsm.consumers.info(names().commandStream, names().commandConsumer)).num_ack_pending === 0,
      20_000,
      'the command acknowledged',
    );
    expect(await texts(session)).toEqual(['after rm']);
    expect(service.logged).toContainEqual(expect.stringMatching(new RegExp(`^NATS ${names().resultStream} missing on the server .*: re-created`)));
  });

  it('while the results stream is full, redelivers the command later each time (not every second) and says so in /health and /metrics; stores the answer once there is room', async () => {
    const session = 'results-full';
    const info = await nats.client.jsm.streams.info(names().resultStream);
    await nats.client.jsm.streams.update(names().resultStream, { ...info.config, max_msgs: Math.max(1, info.state.messages), discard: DiscardPolicy.New });
    const { sub, got } = listen(nats.nc, session);
    try {
      await publishCommand(
        nats.client.js,
        commandSubject(service.prefix, 'default', session, 'append'),
        { events: [{ id: 'u1', type: 'user', text: 'full' }] },
        { msgId: 'full-1' },
      );
      await eventually(() => got.length >= 1, 20_000, 'the live answer');
      const firstAt = Date.now();
      await eventually(
        async () => (await service.harness.http().get('/health').expect(200)).body.nats.commandsUnstored === 1,
        10_000,
        '/health to count the command',
      );
      const health = (await service.harness.http().get('/health').expect(200)).body.nats;
      expect(health.error).toMatch(new RegExp(`^NATS results stream ${names().resultStream} did not store answers: .*maximum messages`));
      expect((await service.harness.http().get('/metrics').expect(200)).text).toMatch(/^nats_commands_unstored 1$/m);
      await new Promise((resolve) => setTimeout(resolve, 10_000 - (Date.now() - firstAt)));
      // 1 s, 2 s, 4 s apart: at most 4 answers in 10 s (one a second before: 10 or 11).
      expect(got.length).toBeLessThanOrEqual(4);
      expect(await texts(session)).toEqual(['full']);
      await nats.client.jsm.streams.update(names().resultStream, info.config);
      const [answer] = await readStream(nats.client, names().resultStream, resultSubject(service.prefix, 'default', session), 1, { timeoutMs: 40_000 });
      expect(answer?.headers).toMatchObject({ 'Command-Id': 'full-1', Status: '201' });
      await eventually(
        async () => {
          const n = (await service.harness.http().get('/health').expect(200)).body.nats;
          return n.commandsUnstored === 0 && n.error === null;
        },
        20_000,
        '/health clean again',
      );
    } finally {
      sub.unsubscribe();
    }
  });

  it('publishes a CompactionCompleted decision with the archivedIds of its HTTP history item', async () => {
    const session = 'archived-ids';
    const events = Array.from({ length: 6 }, (_, i) => ({ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `text ${i}` }));
    await service.harness.http().post(`/v1/sessions/${session}/events`).send({ events }).expect(201);
    const pass = (
      await service.harness
        .http()
        .post(`/v1/sessions/${session}/compactions`)
        .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
        .expect(200)
    ).body;
    const item = (await service.harness.http().get(`/v1/sessions/${session}/compactions/${pass.compactionId}`).expect(200)).body;
    expect(item.archivedIds.length).toBeGreaterThan(0);
    const [decision] = await readStream(nats.client, names().decisionStream, `${service.prefix}.decisions.default.${session}`, 1, { timeoutMs: 30_000 });
    expect(decision?.body).toMatchObject({ type: 'CompactionCompleted', decision: { compactionId: pass.compactionId, archivedIds: item.archivedIds } });
    expect(decision?.body.decision.archivedCount).toBe(item.archivedIds.length);
  });
});
