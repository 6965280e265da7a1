/**
 * A client's exact `expectedRevision` and the service's own writes (README "Optimistic
 * concurrency"): a compaction's decisions after the revision the client saw do not make its append
 * fail; another writer's conversation event or policy change does.
 */
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore } from '@lib/event-store';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { SessionStateCache } from './session-state-cache';
import { sessionKey, sessionStream, COMPACTION_COMPLETED, CONVERSATION_EVENT, EVENTS_ARCHIVED, POLICY_SET } from '../events/session-stream-events';
import { RevisionConflictError } from '../errors';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { expectedRevisionOnLog, holdsAcrossCompactions } from '../decider/client-expected-revision';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));
const user = (id: string): SessionEvent => ({ id, type: 'user', text: `message ${id}` });

describe("a client's expectedRevision", () => {
  let store: SqliteEventStore;
  let append: AppendSessionEventsHandler;
  let compact: CompactSessionHandler;
  let policy: SetCompactionPolicyHandler;
  const send = (expectedRevision: bigint, ...events: SessionEvent[]) =>
    append.execute(
      new AppendSessionEventsCommand(
        't',
        's',
        events.map((event) => ({ event })),
        expectedRevision,
      ),
    );

  beforeEach(async () => {
    store = SqliteEventStore.open(':memory:');
    // The compaction and the policy go through their own process's cache: the append's process learns of them from the store only.
    append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    const other = new SessionStateCache(store);
    compact = new CompactSessionHandler(store, other, new ExtractiveSummarizer());
    policy = new SetCompactionPolicyHandler(store, other, new ExtractiveSummarizer());
    for (let n = 0; n < 6; n++) await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: user(`u${n}`) }]));
  });
  afterEach(async () => {
    await store.close();
  });

  it('given a compaction after the revision the client saw, when it appends at that revision, then the append is written after the decisions', async () => {
    const seen = await store.streamRevision(STREAM);
    await compact.execute(new CompactSessionCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 2 }), null, 'chars', false));
    const decisions = await store.readStream(STREAM, { fromRevision: seen! + 1n });
    expect(decisions.map((e) => e.type)).toEqual([EVENTS_ARCHIVED, COMPACTION_COMPLETED]);
    const answer = await send(seen!, user('next'));
    expect(answer.revision).toBe(String(seen! + 3n));
    const log = await store.readStream(STREAM);
    expect(log.filter((e) => e.type === CONVERSATION_EVENT).map((e) => (e.data as { event: { id: string } }).event.id)).toEqual([
      'u0',
      'u1',
      'u2',
      'u3',
      'u4',
      'u5',
      'next',
    ]);
  });

  it('given an append written after a compaction at the revision the client saw, when the client resends it unchanged, then it answers the original result', async () => {
    const seen = (await store.streamRevision(STREAM))!;
    await compact.execute(new CompactSessionCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 2 }), null, 'chars', false));
    const original = await send(seen, user('next'));
    await compact.execute(new CompactSessionCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 1 }), null, 'chars', false));
    const log = await store.readStream(STREAM);
    // A fresh process (its response was lost with the first one) and the same one.
    const other = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    for (const handler of [append, other])
      expect(await handler.execute(new AppendSessionEventsCommand('t', 's', [{ event: user('next') }], seen))).toEqual(original);
    expect(await store.readStream(STREAM)).toEqual(log);
  });

  it("given another writer's event after the revision the client saw, when it appends at that revision, then 409 names the client's revision and nothing is written", async () => {
    const seen = (await store.streamRevision(STREAM))!;
    await compact.execute(new CompactSessionCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 2 }), null, 'chars', false));
    await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: user('other') }]));
    const before = await store.readStream(STREAM);
    const refused = await send(seen, user('late')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RevisionConflictError);
    expect(refused).toMatchObject({ details: { expected: String(seen), actual: String(before[before.length - 1].revision) } });
    expect(await store.readStream(STREAM)).toEqual(before);
  });

  it('given a policy change after the revision the client saw, when it appends at that revision, then 409', async () => {
    const seen = (await store.streamRevision(STREAM))!;
    await policy.execute(new SetCompactionPolicyCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 50 }), null, 'chars'));
    expect((await store.readStream(STREAM, { fromRevision: seen + 1n })).map((e) => e.type)).toEqual([POLICY_SET]);
    await expect(send(seen, user('late'))).rejects.toBeInstanceOf(RevisionConflictError);
  });
});

describe('holdsAcrossCompactions', () => {
  const at = (revision: bigint, type: string) => ({ revision, type });
  it('holds when the seen event is there and only decisions follow; not when the seen event is gone, nothing follows, or a conversation event follows', () => {
    expect(holdsAcrossCompactions(4n, [at(4n, CONVERSATION_EVENT), at(5n, EVENTS_ARCHIVED), at(6n, COMPACTION_COMPLETED)])).toBe(true);
    expect(holdsAcrossCompactions(4n, [at(5n, EVENTS_ARCHIVED), at(6n, COMPACTION_COMPLETED)])).toBe(false);
    expect(holdsAcrossCompactions(4n, [at(4n, CONVERSATION_EVENT)])).toBe(false);
    expect(holdsAcrossCompactions(4n, [at(4n, CONVERSATION_EVENT), at(5n, EVENTS_ARCHIVED), at(6n, CONVERSATION_EVENT)])).toBe(false);
    expect(holdsAcrossCompactions(4n, [at(4n, CONVERSATION_EVENT), at(5n, POLICY_SET)])).toBe(false);
  });
});

describe('expectedRevisionOnLog', () => {
  const decision = (revision: bigint, type = EVENTS_ARCHIVED) => ({ revision, type, data: {} });
  const said = (revision: bigint, id: string) => ({ revision, type: CONVERSATION_EVENT, data: { event: user(id) } });
  it('holds across decisions; a resend is found after them, also once the session moved on; anything else is stale', () => {
    const compacted = [said(2n, 'u2'), decision(3n), decision(4n, COMPACTION_COMPLETED)];
    expect(expectedRevisionOnLog(2n, 4n, compacted, ['a2'])).toEqual({ kind: 'holds', revision: 4n });
    const resent = [...compacted, said(5n, 'a2'), said(6n, 'u3'), decision(7n)];
    expect(expectedRevisionOnLog(2n, 7n, resent, ['a2'])).toEqual({ kind: 'resend', after: 4n, revisions: new Map([['a2', 5n]]) });
    expect(expectedRevisionOnLog(2n, 7n, resent, ['a2', 'u3'])).toEqual({
      kind: 'resend',
      after: 4n,
      revisions: new Map([
        ['a2', 5n],
        ['u3', 6n],
      ]),
    });
    // Another writer's event first, or the ids in another order, or the seen event gone: stale.
    expect(expectedRevisionOnLog(2n, 7n, resent, ['u3'])).toEqual({ kind: 'stale' });
    expect(expectedRevisionOnLog(2n, 7n, resent, ['u3', 'a2'])).toEqual({ kind: 'stale' });
    expect(expectedRevisionOnLog(2n, 7n, resent.slice(1), ['a2'])).toEqual({ kind: 'stale' });
    expect(expectedRevisionOnLog(2n, 5n, [...compacted, { revision: 5n, type: POLICY_SET, data: {} }], ['a2'])).toEqual({ kind: 'stale' });
    // A read that stops before the session's last revision does not hold.
    expect(expectedRevisionOnLog(2n, 9n, compacted, ['a2'])).toEqual({ kind: 'stale' });
  });
});
