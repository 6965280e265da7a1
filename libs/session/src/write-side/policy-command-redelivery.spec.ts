/**
 * A NATS policy command delivered again (newcomer ncnats72 F2, high): its first delivery set policy
 * A and its answer was not stored (the results stream full, or the replica killed before it), an
 * HTTP `PUT …/policy` then set B, and the redelivery set A again over B, silently. Its event's id now
 * derives from the command id, so a redelivery, or a resend with the same `Nats-Msg-Id` after
 * JetStream's duplicate window (F3), is answered with the event it wrote, and nothing is written.
 */
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { POLICY_SET, type PolicySetData } from '../events/session-stream-events';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { SessionStateCache } from './session-state-cache';
import type { EventBus } from '@nestjs/cqrs';

const noBus = { publish: () => undefined } as unknown as EventBus;
const policyA = parseStrategy({ type: 'turn-window', maxTurns: 3 });
const policyB = parseStrategy({ type: 'sliding-window', maxEvents: 50 });

function setUp() {
  const store = SqliteEventStore.open(':memory:');
  const cache = new SessionStateCache(store);
  const policies = new SetCompactionPolicyHandler(store, cache, new ExtractiveSummarizer());
  const append = (id: string) =>
    new AppendSessionEventsHandler(store, cache, noBus).execute(new AppendSessionEventsCommand('t', 's', [{ event: { id, type: 'user', text: id } }]));
  const overNats = (strategy: typeof policyA, commandId: string, redelivered: boolean) =>
    policies.execute(new SetCompactionPolicyCommand('t', 's', strategy, null, 'chars', 'any', { commandId, redelivered }));
  const overHttp = (strategy: typeof policyA) => policies.execute(new SetCompactionPolicyCommand('t', 's', strategy, null, 'chars'));
  const policyEvents = async () =>
    (await store.readStream('session-t.s')).filter((e) => e.type === POLICY_SET).map((e) => [e.revision, (e.data as PolicySetData).strategy?.type]);
  return { store, append, overNats, overHttp, policyEvents };
}

describe('a NATS policy command delivered again', () => {
  it.each([
    ['redelivered by JetStream', true],
    ['sent again with the same Nats-Msg-Id after the duplicate window', false],
  ])('%s after another policy was set is answered as first, and the later policy stays', async (_, redelivered) => {
    const { store, append, overNats, overHttp, policyEvents } = setUp();
    try {
      await append('u1');
      const first = await overNats(policyA, 'cmd-A', false);
      await overHttp(policyB);
      await append('u2');
      const before = await store.readStream('session-t.s');
      const again = await overNats(policyA, 'cmd-A', redelivered);
      expect(again).toEqual(first);
      expect(await store.readStream('session-t.s')).toEqual(before);
      expect(await policyEvents()).toEqual([
        [1n, 'turn-window'],
        [2n, 'sliding-window'],
      ]);
    } finally {
      await store.close();
    }
  });

  it('redelivered while its policy is still in force: answered as first, nothing written', async () => {
    const { store, append, overNats, policyEvents } = setUp();
    try {
      await append('u1');
      const first = await overNats(policyA, 'cmd-A', false);
      await append('u2');
      expect(await overNats(policyA, 'cmd-A', true)).toEqual(first);
      expect(await policyEvents()).toEqual([[1n, 'turn-window']]);
    } finally {
      await store.close();
    }
  });

  it('another command (another id) asking for the same policy again sets it again over the later one', async () => {
    const { store, append, overNats, overHttp, policyEvents } = setUp();
    try {
      await append('u1');
      await overNats(policyA, 'cmd-A', false);
      await overHttp(policyB);
      const later = await overNats(policyA, 'cmd-A2', false);
      expect(later.revision).toBe('3');
      expect(await policyEvents()).toEqual([
        [1n, 'turn-window'],
        [2n, 'sliding-window'],
        [3n, 'turn-window'],
      ]);
    } finally {
      await store.close();
    }
  });

  it('a first delivery whose command id names nothing in the log sets the policy (a redelivery that was never applied)', async () => {
    const { store, append, overNats, policyEvents } = setUp();
    try {
      await append('u1');
      await overNats(policyA, 'cmd-A', true);
      expect(await policyEvents()).toEqual([[1n, 'turn-window']]);
    } finally {
      await store.close();
    }
  });
});
