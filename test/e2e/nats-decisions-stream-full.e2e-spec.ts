/**
 * The decisions stream full (an operator's `max_msgs` with `discard: new`; newcomer ncnats73 F3):
 * the feed paused with a line `maximum messages exceeded` naming neither the stream nor the fix,
 * and `/health` said `ok` with `nats.error` null. Now the line and `nats.decisionFeed.lastError`
 * name the stream and what to do, `nats.error` says the feed is paused (as for a full results
 * stream), and once the stream has room every decision is published, in order, and all is clear.
 *
 * The service against the machine's NATS server, under a prefix of its own. Runtime ≈ 15 s.
 */
import { DiscardPolicy } from '@nats-io/jetstream';
import { useNatsService } from '../support/nats-service';
import { describeWithNats, eventually, useNatsSuite } from '../support/nats-test';

describeWithNats('NATS decisions stream full')('NATS: the decisions stream full', () => {
  jest.setTimeout(120_000);
  const nats = useNatsSuite('nats-decisions-stream-full');
  const service = useNatsService(nats);
  const names = () => service.names();

  const compact = async (session: string): Promise<void> => {
    const events = Array.from({ length: 4 }, (_, i) => ({ id: `${session}-e${i}`, type: i % 2 ? 'assistant' : 'user', text: `text ${i}` }));
    await service.harness.http().post(`/v1/sessions/${session}/events`).send({ events }).expect(201);
    await service.harness
      .http()
      .post(`/v1/sessions/${session}/compactions`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
      .expect(200);
  };
  const natsHealth = async () => (await service.harness.http().get('/health').expect(200)).body.nats;

  it('names the stream and the fix in the pause line and /health, says in nats.error that the feed is paused, and publishes every decision once it has room', async () => {
    const stream = names().decisionStream;
    const info = await nats.client.jsm.streams.info(stream);
    await nats.client.jsm.streams.update(stream, { ...info.config, max_msgs: info.state.messages + 1, discard: DiscardPolicy.New });
    for (const session of ['full-a', 'full-b', 'full-c']) await compact(session);

    await eventually(async () => (await natsHealth()).decisionFeed.lastError !== null, 20_000, 'the feed to pause');
    const health = await natsHealth();
    expect(health.decisionFeed.lastError).toContain(`decisions stream ${stream} is full (maximum messages exceeded`);
    expect(health.decisionFeed.lastError).toContain(`nats stream edit ${stream} --max-msgs=-1 --max-bytes=-1`);
    expect(health.decisionFeed.lastError).toContain('--discard=old');
    expect(health.error).toMatch(new RegExp(`^NATS decisions stream ${stream} is full: the decisions feed is paused at position \\d+`));
    expect(service.logged).toContainEqual(
      expect.stringMatching(new RegExp(`decision feed paused at position \\d+: decisions stream ${stream} is full .*raise its limits`)),
    );

    await nats.client.jsm.streams.update(stream, info.config);
    await eventually(
      async () => {
        const n = await natsHealth();
        return n.error === null && n.decisionFeed.lastError === null && n.decisionFeed.lag === 'caught-up';
      },
      30_000,
      '/health clean again',
    );
    const sessions: string[] = [];
    const after = await nats.client.jsm.streams.info(stream);
    for (let seq = after.state.first_seq; seq <= after.state.last_seq; seq++) {
      const m = await nats.client.jsm.streams.getMessage(stream, { seq });
      if (m) sessions.push(m.json<{ sessionId: string }>().sessionId);
    }
    expect(sessions.filter((s) => s.startsWith('full-'))).toEqual(['full-a', 'full-b', 'full-c']);
  });
});
