/**
 * The compaction handler running a command without a strategy (newcomer ncsdkuser F3): it takes
 * the session's stored policy from the state it loads to decide on (one read, no race with a
 * separate `GET …/policy`), appends at that state's revision, and, when the policy was replaced or
 * cleared meanwhile, never writes a decision of the old policy after the new one: the append at
 * the loaded revision conflicts and the pass is planned again with the policy in force then (or
 * refused, nothing written).
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type Strategy, type SummaryRequest, type Trigger } from '@lib/compaction';
import { DuplicateEventIdError, SqliteEventStore } from '@lib/event-store';
import { COMPACTION_COMPLETED, COMPACTION_FAILED, POLICY_SET, type CompactionCompletedData } from '../events/session-stream-events';
import { InvalidRequestError } from '../errors';
import { noPolicyMessage } from '../decider/compaction-by-policy';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { SessionStateCache } from './session-state-cache';

/** Runs `during` (once, on its first call) before it answers: what another writer does while the model runs. */
class ScriptedSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'scripted' };
  calls = 0;
  during: (() => Promise<unknown>) | null = null;

  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    const call = ++this.calls;
    const during = this.during;
    this.during = null;
    if (during) await during();
    return { ok: true, text: `recap ${call} of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 10, completionTokens: 5 };
  }
}

const noBus = { publish: () => undefined } as unknown as EventBus;
const summarizing = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 0 });
const slidingTwo = parseStrategy({ type: 'sliding-window', maxEvents: 2 });
const stream = 'session-t.s';

function setUp() {
  const store = SqliteEventStore.open(':memory:');
  const cache = new SessionStateCache(store);
  const summarizer = new ScriptedSummarizer();
  const append = new AppendSessionEventsHandler(store, cache, noBus);
  const policies = new SetCompactionPolicyHandler(store, cache, summarizer);
  const compactions = new CompactSessionHandler(store, cache, summarizer, noBus);
  const appendTurns = async (from: number, to: number) => {
    for (let n = from; n < to; n++)
      await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
  };
  const setPolicy = (strategy: Strategy | null, trigger: Trigger | null = null) =>
    policies.execute(new SetCompactionPolicyCommand('t', 's', strategy, trigger, 'chars'));
  const byPolicy = (dryRun = false) => new CompactSessionCommand('t', 's', null, null, null, dryRun);
  const log = () => store.readStream(stream);
  const decisions = async () => (await log()).filter((e) => e.type === COMPACTION_COMPLETED || e.type === COMPACTION_FAILED);
  return { store, summarizer, compactions, appendTurns, setPolicy, byPolicy, log, decisions };
}

describe('compaction by policy through the handler', () => {
  it('compacts with the policy in force, recording from "policy" and the policy event\'s revision; the same as the explicit command', async () => {
    const { store, compactions, appendTurns, setPolicy, byPolicy, decisions } = setUp();
    try {
      await appendTurns(0, 6);
      const policy = await setPolicy(slidingTwo, { type: 'turn-count', maxTurns: 1 });
      const dry = await compactions.execute(byPolicy(true));
      const explicitDry = await compactions.execute(new CompactSessionCommand('t', 's', slidingTwo, { type: 'turn-count', maxTurns: 1 }, 'chars', true));
      expect(dry).toEqual({ ...explicitDry, from: 'policy', policyRevision: policy.revision });
      const answer = await compactions.execute(byPolicy());
      expect(answer).toMatchObject({ outcome: 'compacted', kept: ['u4', 'u5'], from: 'policy', policyRevision: policy.revision, estimator: 'chars' });
      const [decision] = await decisions();
      expect(decision.data).toMatchObject({
        strategy: slidingTwo,
        trigger: { type: 'turn-count', maxTurns: 1 },
        estimator: 'chars',
        origin: 'command',
        from: 'policy',
        policyRevision: policy.revision,
      });
    } finally {
      await store.close();
    }
  });

  it('refuses a session without a policy (never set, then cleared): 400 invalid_parameter naming strategy, nothing written', async () => {
    const { store, compactions, appendTurns, setPolicy, byPolicy, log } = setUp();
    try {
      await appendTurns(0, 6);
      for (const step of [async () => undefined, () => setPolicy(slidingTwo).then(() => setPolicy(null))]) {
        await step();
        const before = await log();
        const refused = await compactions.execute(byPolicy()).then(
          () => null,
          (err: unknown) => err,
        );
        expect(refused).toBeInstanceOf(InvalidRequestError);
        expect(refused).toMatchObject({ code: 'invalid_parameter', parameter: 'strategy' });
        expect(await log()).toEqual(before);
      }
    } finally {
      await store.close();
    }
  });

  it('given the policy replaced while the model ran: the append at the loaded revision conflicts, and the pass is planned again with the new policy (no decision of the old one after it)', async () => {
    const { store, summarizer, compactions, appendTurns, setPolicy, byPolicy, log, decisions } = setUp();
    try {
      await appendTurns(0, 8);
      await setPolicy(summarizing);
      let replaced: { revision: string } | undefined;
      summarizer.during = async () => (replaced = await setPolicy(slidingTwo));
      const answer = await compactions.execute(byPolicy());
      // The summarizer's reply was for the old policy: discarded; the new policy's pass calls no model.
      expect(summarizer.calls).toBe(1);
      expect(answer).toMatchObject({ outcome: 'compacted', kept: ['u6', 'u7'], from: 'policy', policyRevision: replaced!.revision });
      expect(answer.discardedSummarizerCalls).toMatchObject({ calls: 1 });
      const all = await decisions();
      expect(all).toHaveLength(1);
      const data = all[0].data as CompactionCompletedData;
      expect(data).toMatchObject({ strategy: slidingTwo, from: 'policy', policyRevision: replaced!.revision });
      // decided after the policy event that replaced the loaded one, on the state that holds it
      const policyAt = (await log()).filter((e) => e.type === POLICY_SET).at(-1)!.revision;
      expect(BigInt(data.basedOnRevision)).toBeGreaterThanOrEqual(policyAt);
    } finally {
      await store.close();
    }
  });

  it('given the policy cleared while the model ran: refused (400 naming strategy), nothing written', async () => {
    const { store, summarizer, compactions, appendTurns, setPolicy, byPolicy, decisions } = setUp();
    try {
      await appendTurns(0, 8);
      await setPolicy(summarizing);
      summarizer.during = () => setPolicy(null);
      await expect(compactions.execute(byPolicy())).rejects.toMatchObject({ code: 'invalid_parameter', parameter: 'strategy' });
      expect(summarizer.calls).toBe(1);
      expect(await decisions()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('given the policy cleared while the model ran: the 400 carries the discarded model call (discardedSummarizerCalls, and its note in the message), as the 404 of a session erased meanwhile', async () => {
    const { store, summarizer, compactions, appendTurns, setPolicy, byPolicy } = setUp();
    try {
      await appendTurns(0, 8);
      await setPolicy(summarizing);
      summarizer.during = () => setPolicy(null);
      const refused = await compactions.execute(byPolicy()).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(InvalidRequestError);
      const call = {
        kind: 'extractive',
        model: 'scripted',
        calls: 1,
        promptTokens: 10,
        completionTokens: 5,
        retries: 0,
        unreportedUsageCalls: 0,
        answeredModels: [],
      };
      expect(refused).toMatchObject({ code: 'invalid_parameter', parameter: 'strategy', details: { parameter: 'strategy', discardedSummarizerCalls: call } });
      expect((refused as Error).message).toBe(
        `${noPolicyMessage('s')}; the compaction's 1 summarizer call(s) made before were spent all the same (discardedSummarizerCalls)`,
      );
      // refused before any model call: no calls to report, the message as it was
      const again = await compactions.execute(byPolicy()).then(
        () => null,
        (err: unknown) => err,
      );
      expect(again).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'strategy' }, message: noPolicyMessage('s') });
      expect((again as InvalidRequestError).details).not.toHaveProperty('discardedSummarizerCalls');
    } finally {
      await store.close();
    }
  });

  it("given an automatic pass (origin auto, the policy's parameters): its decision records the revision of the policy it was decided on (no from: its origin says it), also rebased across appends", async () => {
    const { store, summarizer, compactions, appendTurns, setPolicy, decisions } = setUp();
    try {
      await appendTurns(0, 8);
      const policy = await setPolicy(summarizing);
      summarizer.during = () => appendTurns(8, 9);
      const answer = await compactions.execute(new CompactSessionCommand('t', 's', summarizing, null, 'chars', false, 'auto'));
      expect(summarizer.calls).toBe(1);
      expect(answer).toMatchObject({ outcome: 'compacted', policyRevision: policy.revision });
      expect(answer.kept).toContain('u8');
      const [decision] = await decisions();
      expect(decision.data).toMatchObject({ origin: 'auto', strategy: summarizing, policyRevision: policy.revision });
      expect(decision.data).not.toHaveProperty('from');
    } finally {
      await store.close();
    }
  });

  it('given appends while the model ran (the policy unchanged): rebased, one model call, the loaded policy recorded', async () => {
    const { store, summarizer, compactions, appendTurns, setPolicy, byPolicy, decisions } = setUp();
    try {
      await appendTurns(0, 8);
      const policy = await setPolicy(summarizing);
      summarizer.during = () => appendTurns(8, 9);
      const answer = await compactions.execute(byPolicy());
      expect(summarizer.calls).toBe(1);
      expect(answer).toMatchObject({ outcome: 'compacted', from: 'policy', policyRevision: policy.revision });
      expect(answer.discardedSummarizerCalls).toBeUndefined();
      expect(answer.kept).toContain('u8');
      const [decision] = await decisions();
      expect(decision.data).toMatchObject({ strategy: summarizing, policyRevision: policy.revision });
    } finally {
      await store.close();
    }
  });
  it('given an automatic pass whose append is refused as a duplicate with no decision recorded, and its policy replaced meanwhile: abandoned (conflict), nothing written', async () => {
    const { store, summarizer, compactions, appendTurns, setPolicy, decisions } = setUp();
    try {
      await appendTurns(0, 8);
      await setPolicy(summarizing);
      const appendToStream = jest.spyOn(store, 'appendToStream');
      summarizer.during = async () => {
        await setPolicy(slidingTwo);
        // the pass's own append, next: refused as if its ids were taken, though no decision of it is in the log
        appendToStream.mockRejectedValueOnce(new DuplicateEventIdError(stream, 'taken'));
      };
      const answer = await compactions.execute(new CompactSessionCommand('t', 's', summarizing, null, 'chars', false, 'auto'));
      expect(summarizer.calls).toBe(1);
      expect(answer.outcome).toBe('conflict');
      expect(await decisions()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
