/**
 * A policy PUT sent without `expectedRevision` ("any": the service retries by itself) while other
 * writers keep moving the session on retries as an append does: in one process it queues with the
 * session's appends (one PerSessionQueue shared by both handlers), so they never make it retry;
 * writers of other processes make it reload and decide again up to MAX_WRITE_ATTEMPTS times, with
 * the appends' pauses, and then it answers RevisionConflictError.exhausted: `expected` "any", never a
 * revision the client did not send (newcomer ncrace74 F2: 8 tries without pauses, not queued, then
 * 409 "expected revision 168 … retry with expectedRevision 170"). A PUT with the client's own
 * `expectedRevision` answers as before: 409 naming that revision once another writer's event
 * follows it.
 */
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler, MAX_POLICY_ATTEMPTS } from './set-compaction-policy';
import { MAX_WRITE_ATTEMPTS } from './write-conflict-retry';
import { PerSessionQueue } from './per-session-queue';
import { SessionStateCache } from './session-state-cache';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { CONVERSATION_EVENT, POLICY_SET, sessionKey, sessionStream, type ConversationEventData } from '../events/session-stream-events';
import { computeEventCosts } from '../domain/event-costs';
import { storeEventId } from '../domain/session-ids';
import { RevisionConflictError } from '../errors';

const RUNS = Number(process.env.FC_RUNS ?? 12);
const noBus = { publish: () => undefined } as unknown as EventBus;
const A = parseStrategy({ type: 'sliding-window', maxEvents: 10 });
const B = parseStrategy({ type: 'turn-window', maxTurns: 5 });
const key = sessionKey('t', 's');
const stream = sessionStream(key);

/** Appends one user event to the session straight to `store`, as a writer of another process would. */
async function appendElsewhere(store: EventStore, n: number): Promise<void> {
  const event = { id: `other-${n}`, type: 'user' as const, text: 'from elsewhere' };
  const data: ConversationEventData = { event, costs: computeEventCosts(event) };
  await store.appendToStream(stream, [{ id: storeEventId(key, 0n, event.id), type: CONVERSATION_EVENT, data }]);
}

/** `store`, where before each of the first `times` appends made through it another process appends to the session first; `others` counts them. */
function contended(store: EventStore, times: number): EventStore & { others: number } {
  const wrapped = Object.assign(Object.create(store) as EventStore, {
    others: 0,
    appendToStream: async (...args: Parameters<EventStore['appendToStream']>) => {
      if (wrapped.others < times) await appendElsewhere(store, wrapped.others++);
      return store.appendToStream(...args);
    },
  });
  return wrapped;
}

describe('a policy PUT beside other writers of the session', () => {
  it('uses the appends’ bound', () => {
    expect(MAX_POLICY_ATTEMPTS).toBe(MAX_WRITE_ATTEMPTS);
    expect(MAX_WRITE_ATTEMPTS).toBe(32);
  });

  it('without expectedRevision: written while others beat it fewer than MAX_WRITE_ATTEMPTS times; then 409 expected "any", nothing written', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: MAX_WRITE_ATTEMPTS - 2, max: MAX_WRITE_ATTEMPTS + 3 })),
        fc.constantFrom('new session', 'set over A', 'clear A'),
        async (times, kind) => {
          const base = SqliteEventStore.open(':memory:');
          try {
            if (kind !== 'new session') {
              await new AppendSessionEventsHandler(base, new SessionStateCache(base), noBus).execute(
                new AppendSessionEventsCommand('t', 's', [{ event: { id: 'u0', type: 'user', text: 'hi' } }]),
              );
              await new SetCompactionPolicyHandler(base, new SessionStateCache(base), new ExtractiveSummarizer()).execute(
                new SetCompactionPolicyCommand('t', 's', A, null, 'chars'),
              );
            }
            const before = (await base.readStream(stream)).length;
            const store = contended(base, times);
            const handler = new SetCompactionPolicyHandler(store, new SessionStateCache(store), new ExtractiveSummarizer());
            const outcome = await handler.execute(new SetCompactionPolicyCommand('t', 's', kind === 'clear A' ? null : B, null, 'chars')).then(
              (answer) => ({ answer }),
              (error: unknown) => ({ error }),
            );
            const log = await base.readStream(stream);
            if (times < MAX_WRITE_ATTEMPTS) {
              expect(outcome).toHaveProperty('answer');
              expect(store.others).toBe(times);
              expect(log).toHaveLength(before + times + 1);
              expect(log[log.length - 1].type).toBe(POLICY_SET);
              if ('answer' in outcome) expect(outcome.answer.revision).toBe(log[log.length - 1].revision.toString());
            } else {
              expect(store.others).toBe(MAX_WRITE_ATTEMPTS);
              expect(log).toHaveLength(before + MAX_WRITE_ATTEMPTS);
              expect(log.slice(before).every((e) => e.type === CONVERSATION_EVENT)).toBe(true);
              const error = 'error' in outcome ? outcome.error : undefined;
              expect(error).toBeInstanceOf(RevisionConflictError);
              expect((error as RevisionConflictError).details).toEqual({ expected: 'any', actual: log[log.length - 1].revision.toString() });
              expect((error as Error).message).toBe(
                `other writers changed the session ${MAX_WRITE_ATTEMPTS} times in a row while this policy was being decided; nothing was written: ` +
                  'resend the request unchanged (a policy the session already has is not written again)',
              );
            }
          } finally {
            await base.close();
          }
        },
      ),
      {
        numRuns: RUNS,
        examples: [
          [MAX_WRITE_ATTEMPTS - 1, 'set over A'],
          [MAX_WRITE_ATTEMPTS, 'set over A'],
          [MAX_WRITE_ATTEMPTS, 'clear A'],
          [MAX_WRITE_ATTEMPTS, 'new session'],
        ],
      },
    );
  });

  it('with the client’s own expectedRevision: 409 naming that revision once another writer’s event follows it, as before', async () => {
    const base = SqliteEventStore.open(':memory:');
    try {
      const { revision } = await new AppendSessionEventsHandler(base, new SessionStateCache(base), noBus).execute(
        new AppendSessionEventsCommand('t', 's', [{ event: { id: 'u0', type: 'user', text: 'hi' } }]),
      );
      const store = contended(base, MAX_WRITE_ATTEMPTS);
      const handler = new SetCompactionPolicyHandler(store, new SessionStateCache(store), new ExtractiveSummarizer());
      const error = await handler.execute(new SetCompactionPolicyCommand('t', 's', A, null, 'chars', BigInt(revision))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RevisionConflictError);
      expect((error as RevisionConflictError).details).toEqual({ expected: revision, actual: '1' });
      expect(store.others).toBe(1);
    } finally {
      await base.close();
    }
  });

  it('in one process, PUTs without expectedRevision queue with the session’s appends (one shared queue): none is refused', async () => {
    const store = SqliteEventStore.open(':memory:');
    try {
      const cache = new SessionStateCache(store);
      const queue = new PerSessionQueue();
      const appends = new AppendSessionEventsHandler(store, cache, noBus, null, null, null, null, queue);
      // The PUTs' own store refusals: in the shared queue no append of this process moves the session under a PUT.
      let refused = 0;
      const counting = Object.assign(Object.create(store) as EventStore, {
        appendToStream: (...args: Parameters<EventStore['appendToStream']>) =>
          store.appendToStream(...args).catch((err: unknown) => {
            refused++;
            throw err;
          }),
      });
      const policies = new SetCompactionPolicyHandler(counting, cache, new ExtractiveSummarizer(), undefined, undefined, undefined, null, queue);
      // Every append moves the session while the PUTs are decided; a PUT that raced them would need more tries than it has.
      const writers = Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; i < 40; i++)
          await appends.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `w${w}-${i}`, type: 'user', text: `hello ${i}` } }]));
      });
      const puts = (async () => {
        for (let i = 0; i < 40; i++) await policies.execute(new SetCompactionPolicyCommand('t', 's', i % 2 ? A : B, null, 'chars'));
      })();
      const outcomes = await Promise.allSettled([...writers, puts]);
      expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
      expect(refused).toBe(0);
      const log = await store.readStream(stream);
      expect(log.filter((e) => e.type === CONVERSATION_EVENT)).toHaveLength(240);
      expect(log.filter((e) => e.type === POLICY_SET)).toHaveLength(40);
    } finally {
      await store.close();
    }
  });
});
