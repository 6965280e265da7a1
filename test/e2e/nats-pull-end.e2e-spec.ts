/**
 * `endPull` (apps/session-service/src/nats/nats-pull-end.ts) drains a pull request through the
 * client library's internal `sub` of `PullConsumerMessagesImpl` (@nats-io/jetstream 3.x has no
 * public way to drain a pull). An upgrade that removes or renames it would make `endPull` fall
 * back to `close()` silently, and commands the server sent as a pull ended would wait out the ack
 * wait again (natsack). This spec fails loudly then, against the real library and server.
 */
import { pullSubscriptionOf } from '../../apps/session-service/src/nats/nats-pull-end';
import { natsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { describeWithNats, useNatsSuite } from '../support/nats-test';

jest.setTimeout(30_000);

const RE_CHECK =
  "@nats-io/jetstream no longer exposes the pull request's core subscription as `sub` (with drain() and isClosed()) on what fetch() returns: " +
  'endPull (apps/session-service/src/nats/nats-pull-end.ts) now falls back to close(), which drops commands the server already sent (left to the ack wait). ' +
  'Re-check nats-pull-end.ts against the new PullConsumerMessagesImpl (node_modules/@nats-io/jetstream/lib/consumer.js), or use a public drain if the library offers one; ' +
  'then run test/e2e/nats-pull-wire.e2e-spec.ts';

describeWithNats('NATS pull end')('the client library internal endPull drains', () => {
  const nats = useNatsSuite('NATS pull end', { quiet: true });

  afterAll(async () => {
    await nats.close();
  });

  it('a fetch of the installed @nats-io/jetstream has a drainable `sub`, and draining it ends the pull', async () => {
    const names = natsNames(nats.prefix());
    await ensureStreams(nats.client.jsm, names, 30_000);
    const consumer = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const batch = await consumer.fetch({ max_messages: 1, expires: 10_000, idle_heartbeat: 2_500 });
    // Iterated as the command consumer does: the iterator ends (closed() resolves) once its loop has ended.
    const iterated = (async () => {
      for await (const m of batch) m.nak();
    })();
    const sub = pullSubscriptionOf(batch);
    try {
      if (!sub) throw new Error(RE_CHECK);
      expect(sub.isClosed()).toBe(false);
      await sub.drain();
      // The iterator ends once the subscription is drained (endPull waits for this).
      const ended = await Promise.race([batch.closed().then(() => 'ended'), new Promise((r) => setTimeout(() => r('still open after 5 s'), 5_000))]);
      if (ended !== 'ended') throw new Error(`draining \`sub\` no longer ends the pull's iterator: ${RE_CHECK}`);
      expect(sub.isClosed()).toBe(true);
    } finally {
      await batch.close();
      await iterated;
    }
  });
});
