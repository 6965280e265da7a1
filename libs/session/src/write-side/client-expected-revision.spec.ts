/**
 * A client's exact `expectedRevision` and the service's own writes (docs/http-api.md "Optimistic
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
import { clientRevisionOnLog, expectedRevisionOnLog, policyRevisionOnLog } from '../decider/client-expected-revision';
import fc from 'fast-check';

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

  describe("on a policy PUT (the appends' rule)", () => {
    const A = parseStrategy({ type: 'sliding-window', maxEvents: 50 });
    const B = parseStrategy({ type: 'turn-window', maxTurns: 5 });
    const put = (strategy: typeof A, expectedRevision: bigint | 'no_stream' | 'stream_exists' | 'any', handler = policy, session = 's') =>
      handler.execute(new SetCompactionPolicyCommand('t', session, strategy, null, 'chars', expectedRevision));

    it('given A, then B by another writer, when A is resent at the revision A was sent at, then 409 and B stays in force', async () => {
      const seen = (await store.streamRevision(STREAM))!;
      const a = await put(A, seen);
      const b = await put(B, BigInt(a.revision));
      const before = await store.readStream(STREAM);
      const refused = await put(A, seen).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RevisionConflictError);
      expect(refused).toMatchObject({ details: { expected: String(seen), actual: b.revision } });
      expect(await store.readStream(STREAM)).toEqual(before);
    });

    it("given A written at the client's revision, when it is resent there after events and compactions, then it answers A's event, writing nothing (also in another process)", async () => {
      const seen = (await store.streamRevision(STREAM))!;
      const a = await put(A, seen);
      await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: user('later') }]));
      await compact.execute(new CompactSessionCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 2 }), null, 'chars', false));
      const before = await store.readStream(STREAM);
      const fresh = new SetCompactionPolicyHandler(store, new SessionStateCache(store), new ExtractiveSummarizer());
      for (const handler of [policy, fresh]) expect(await put(A, seen, handler)).toEqual(a);
      expect(await store.readStream(STREAM)).toEqual(before);
    });

    it('given only compaction decisions after the revision, when a policy is PUT at it, then it is written after them', async () => {
      const seen = (await store.streamRevision(STREAM))!;
      await compact.execute(new CompactSessionCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 2 }), null, 'chars', false));
      const set = await put(B, seen);
      expect(BigInt(set.revision)).toBe(seen + 3n);
    });

    it('given the policy already in force set before the revision, when it is PUT at a revision another writer moved past, then 409 (not a resend)', async () => {
      await put(A, 'any');
      const seen = (await store.streamRevision(STREAM))!;
      await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: user('other') }]));
      await expect(put(A, seen)).rejects.toBeInstanceOf(RevisionConflictError);
      // At the current revision it holds: the PUT writes nothing and answers the event that set A.
      const current = (await store.streamRevision(STREAM))!;
      expect((await put(A, current)).revision).toBe(String(seen));
    });

    it('takes no_stream (a resend of the PUT that created the session answers it) and stream_exists', async () => {
      const created = await put(A, 'no_stream', policy, 'fresh');
      expect(await put(A, 'no_stream', policy, 'fresh')).toEqual(created);
      await expect(put(B, 'no_stream', policy, 'fresh')).rejects.toBeInstanceOf(RevisionConflictError);
      await expect(put(A, 'stream_exists', policy, 'missing')).rejects.toBeInstanceOf(RevisionConflictError);
      expect((await put(B, 'stream_exists', policy, 'fresh')).strategy).toMatchObject({ type: 'turn-window' });
    });
  });

  it('given a policy change after the revision the client saw, when it appends at that revision, then 409', async () => {
    const seen = (await store.streamRevision(STREAM))!;
    await policy.execute(new SetCompactionPolicyCommand('t', 's', parseStrategy({ type: 'sliding-window', maxEvents: 50 }), null, 'chars'));
    expect((await store.readStream(STREAM, { fromRevision: seen + 1n })).map((e) => e.type)).toEqual([POLICY_SET]);
    await expect(send(seen, user('late'))).rejects.toBeInstanceOf(RevisionConflictError);
  });
});

describe('clientRevisionOnLog', () => {
  const at = (revision: bigint, type: string) => ({ revision, type, data: {} });
  const noResend = () => null;
  it('holds when the seen event is there and only decisions follow; stale when the seen event is gone, nothing follows, or a conversation or policy event follows', () => {
    const compacted = [at(4n, CONVERSATION_EVENT), at(5n, EVENTS_ARCHIVED), at(6n, COMPACTION_COMPLETED)];
    expect(clientRevisionOnLog(4n, 6n, compacted, noResend)).toEqual({ kind: 'holds', revision: 6n });
    expect(clientRevisionOnLog(4n, 6n, compacted.slice(1), noResend)).toEqual({ kind: 'stale' });
    expect(clientRevisionOnLog(4n, 4n, compacted.slice(0, 1), noResend)).toEqual({ kind: 'stale' });
    expect(clientRevisionOnLog(4n, 6n, [...compacted.slice(0, 2), at(6n, CONVERSATION_EVENT)], noResend)).toEqual({ kind: 'stale' });
    expect(clientRevisionOnLog(4n, 5n, [at(4n, CONVERSATION_EVENT), at(5n, POLICY_SET)], noResend)).toEqual({ kind: 'stale' });
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

describe('policyRevisionOnLog', () => {
  const decision = (revision: bigint, type = EVENTS_ARCHIVED) => ({ revision, type, data: {} });
  const said = (revision: bigint, id: string) => ({ revision, type: CONVERSATION_EVENT, data: { event: user(id) } });
  const policySet = (revision: bigint) => ({ revision, type: POLICY_SET, data: {} });

  it('holds across decisions; the PUT is a resend when the policy event in force follows them; any other event after them is stale', () => {
    const compacted = [said(2n, 'u2'), decision(3n), decision(4n, COMPACTION_COMPLETED)];
    expect(policyRevisionOnLog(2n, 4n, compacted, null)).toEqual({ kind: 'holds', revision: 4n });
    const own = [...compacted, policySet(5n), said(6n, 'u3'), decision(7n)];
    expect(policyRevisionOnLog(2n, 7n, own, 5n)).toEqual({ kind: 'resend' });
    // The PUT would change the policy (another one is in force), or the one in force was set elsewhere: stale.
    expect(policyRevisionOnLog(2n, 7n, own, null)).toEqual({ kind: 'stale' });
    expect(policyRevisionOnLog(2n, 7n, own, 1n)).toEqual({ kind: 'stale' });
    // A, then B: the event after the revision is A's, but B (at 6) is in force.
    expect(policyRevisionOnLog(2n, 6n, [...compacted, policySet(5n), policySet(6n)], 6n)).toEqual({ kind: 'stale' });
    expect(policyRevisionOnLog(2n, 6n, [...compacted, said(5n, 'x'), policySet(6n)], 6n)).toEqual({ kind: 'stale' });
  });

  it("is the appends' rule: on any log it holds or is stale exactly when an append's check does, and is a resend only at the setting event", () => {
    const types = fc.constantFrom(EVENTS_ARCHIVED, COMPACTION_COMPLETED, CONVERSATION_EVENT, POLICY_SET);
    fc.assert(
      fc.property(fc.array(types, { minLength: 1, maxLength: 12 }), fc.nat({ max: 14 }), (after, setting) => {
        const stored = [said(2n, 'seen'), ...after.map((type, i) => ({ revision: 3n + BigInt(i), type, data: { event: user(`e${i}`) } }))];
        const current = stored[stored.length - 1].revision;
        const settingRevision = setting < stored.length ? 2n + BigInt(setting) : null;
        const forPolicy = policyRevisionOnLog(2n, current, stored, settingRevision);
        const forAppend = expectedRevisionOnLog(2n, current, stored, ['never-stored']);
        if (forAppend.kind === 'holds') expect(forPolicy).toEqual(forAppend);
        else {
          const firstOther = stored.slice(1).find((e) => e.type === CONVERSATION_EVENT || e.type === POLICY_SET)!;
          const resend = firstOther.type === POLICY_SET && firstOther.revision === settingRevision;
          expect(forPolicy).toEqual(resend ? { kind: 'resend' } : { kind: 'stale' });
        }
      }),
    );
  });
});
