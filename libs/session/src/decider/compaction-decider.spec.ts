/**
 * The compaction decider, rule by rule (DESIGN §3.2–§3.7, §4): given the session's past events,
 * when a compaction is decided (plan → summarizer → decide), then these decision events are
 * appended and this is the answer.
 */
import { randomUUID } from 'node:crypto';
import { DuplicateEventIdError, SqliteEventStore, type EventData } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  type CompactionCompletedData,
  type CompactionFailedData,
  type EventsArchivedData,
  type SummaryInsertedData,
} from '../events/session-stream-events';
import { SessionNotFoundError } from '../errors';
import { autoPassBaseline, autoPassDue, compactionToReplay, decideCompaction, planSessionCompaction, type PlannedCompaction } from './compaction-decider';
import { rebaseCompaction } from './compaction-rebase';
import { given, stateOf, type GivenEvent } from './testing/decider-spec';
import { compact, compactCommand, SPEC_CONTEXT, summaryFailure, summaryText, windowAfter } from './testing/compaction-spec';
import { answers, calls, reply, system, user } from './testing/session-events';

const typesOf = (events: readonly EventData[]) => events.map((e) => e.type);
const dataOf = <T>(events: readonly EventData[], type: string): T => events.find((e) => e.type === type)?.data as T;
/** The decision events of a run, as past events of a later spec. */
const recorded = (events: readonly EventData[]): GivenEvent[] => events.map((e) => ({ type: e.type, data: e.data }));

/** Three turns of two events each: u1 a1 | u2 a2 | u3 a3. */
const threeTurns = [user('u1'), reply('a1'), user('u2'), reply('a2'), user('u3'), reply('a3')];
const slidingWindow = (maxEvents: number) => ({ type: 'sliding-window', maxEvents });
const summarizing = (maxEventsToKeep: number) => ({ type: 'recursive-summarization', maxEventsToKeep, overlapSize: 0 });

describe('compaction: triggers (DESIGN §3.5)', () => {
  const overOneTurn = { trigger: { type: 'turn-count' as const, maxTurns: 1 } };

  it('a trigger that does not fire: not-triggered, nothing appended, not even the superseded system message', () => {
    given(system('s0'), system('s1'), user('u1'), reply('a1'))
      .when(compact(compactCommand(slidingWindow(1), overOneTurn)))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toMatchObject({ outcome: 'not-triggered', archived: [], kept: ['s0', 's1', 'u1', 'a1'], recorded: false });
      });
  });

  it('a trigger that fires: the strategy compacts, and every pass archives the superseded system message', () => {
    given(system('s0'), system('s1'), ...threeTurns)
      .when(compact(compactCommand(slidingWindow(2), overOneTurn)))
      .then(({ events, answer }) => {
        expect(typesOf(events)).toEqual([EVENTS_ARCHIVED, COMPACTION_COMPLETED]);
        expect(dataOf<EventsArchivedData>(events, EVENTS_ARCHIVED).archivedIds).toEqual(['s0', 'u1', 'a1', 'u2', 'a2']);
        expect(answer).toMatchObject({ outcome: 'compacted', kept: ['s1', 'u3', 'a3'], recorded: true });
      });
  });

  it('records whether the trigger still fires on the window after the pass, and its turns (the wait rule)', () => {
    const keepTwoTurns = { type: 'turn-window', maxTurns: 2 };
    given(...threeTurns)
      .when(compact(compactCommand(keepTwoTurns, overOneTurn)))
      .then(({ events, answer }) => {
        expect(dataOf<CompactionCompletedData>(events, COMPACTION_COMPLETED)).toMatchObject({ triggerStillFires: true, turnsAfter: 2 });
        expect(answer).toMatchObject({ triggerStillFires: true, turnsAfter: 2 });
      });
    given(...threeTurns)
      .when(compact(compactCommand({ type: 'turn-window', maxTurns: 1 }, overOneTurn)))
      .then(({ answer }) => expect(answer).toMatchObject({ triggerStillFires: false, turnsAfter: 1 }));
  });
});

describe('automatic compaction: a policy that cannot be met is recorded, once per wait period (DESIGN §3.5)', () => {
  // The pinned system message alone ("System: " + 100 chars = 108) is over the threshold (50): no strategy may archive it.
  const policy = { trigger: { type: 'token-count' as const, threshold: 50 }, origin: 'auto' as const };
  const auto = compactCommand({ type: 'token-count', maxTokens: 1000 }, policy);
  const prompt = system('s', 'x'.repeat(100));
  const first = compact(auto)(stateOf([prompt]));

  it('an automatic noop whose trigger still fires is recorded: one CompactionCompleted with outcome noop, its reason and triggerStillFires', () => {
    expect(typesOf(first.events)).toEqual([COMPACTION_COMPLETED]);
    expect(dataOf<CompactionCompletedData>(first.events, COMPACTION_COMPLETED)).toMatchObject({
      outcome: 'noop',
      reason: 'within-limit',
      origin: 'auto',
      archivedCount: 0,
      keptIds: ['s'],
      tokensBefore: 108,
      tokensAfter: 108,
      tokensEstimatedSaved: 0,
      triggerStillFires: true,
      turnsAfter: 0,
    });
    expect(first.summarizerRequests).toEqual([]);
    expect(first.answer).toMatchObject({ outcome: 'noop', reason: 'within-limit', recorded: true, triggerStillFires: true, archived: [], kept: ['s'] });
    expect(first.answer.compactionId).toEqual(expect.any(String));
  });

  it('the next automatic pass waits, from the record, until the window has grown by a quarter of the threshold (12.5): nothing recorded meanwhile', () => {
    // "User: u1" = 8 chars: under a quarter of the threshold.
    const waiting = [prompt, ...recorded(first.events), user('u1', 'u1')];
    expect(autoPassBaseline(stateOf(waiting)!, first.pass!.paramsKey)).toEqual({ tokens: 108, turns: 0 });
    expect(autoPassDue(auto, stateOf(waiting)!)).toBe(false);
    given(...waiting)
      .when(compact(auto))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toMatchObject({ outcome: 'noop', recorded: false, triggerStillFires: true });
      });
  });

  it('once grown by a quarter, the next automatic noop is recorded again (one record per wait period), and waits from there', () => {
    // + "Assistant: a1" = 13 chars: 21 in all, over a quarter of the threshold.
    const grown = [prompt, ...recorded(first.events), user('u1', 'u1'), reply('a1', 'a1')];
    expect(autoPassDue(auto, stateOf(grown)!)).toBe(true);
    const second = compact(auto)(stateOf(grown));
    expect(dataOf<CompactionCompletedData>(second.events, COMPACTION_COMPLETED)).toMatchObject({
      outcome: 'noop',
      reason: 'within-limit',
      tokensAfter: 129,
      turnsAfter: 1,
      triggerStillFires: true,
    });
    expect(second.answer.compactionId).not.toBe(first.answer.compactionId);
    const after = stateOf([...grown, ...recorded(second.events), user('u2', 'u2')])!;
    expect(autoPassBaseline(after, second.pass!.paramsKey)).toEqual({ tokens: 129, turns: 1 });
    expect(autoPassDue(auto, after)).toBe(false);
  });

  it('a commanded noop, a dry run, or a policy with no trigger records nothing', () => {
    for (const command of [
      compactCommand({ type: 'token-count', maxTokens: 1000 }, { ...policy, origin: 'command' }),
      compactCommand({ type: 'token-count', maxTokens: 1000 }, { ...policy, dryRun: true }),
      compactCommand({ type: 'token-count', maxTokens: 1000 }, { origin: 'auto' }),
    ]) {
      given(prompt)
        .when(compact(command))
        .then(({ events, answer }) => expect([events, answer.outcome, answer.recorded]).toEqual([[], 'noop', false]));
    }
  });

  it('a commanded compaction, a failure or other parameters since the record end the wait', () => {
    const waiting = [prompt, ...recorded(first.events), user('u1', 'u1')];
    const other = compactCommand({ type: 'token-count', maxTokens: 999 }, policy);
    expect(autoPassDue(other, stateOf(waiting)!)).toBe(true);
    const commanded = compact(compactCommand({ type: 'sliding-window', maxEvents: 1 }))(stateOf([...waiting, reply('a1', 'a1'), user('u2', 'u2')]));
    expect(commanded.answer.outcome).toBe('compacted');
    expect(autoPassDue(auto, stateOf([...waiting, reply('a1', 'a1'), user('u2', 'u2'), ...recorded(commanded.events)])!)).toBe(true);
  });

  it('a recorded noop leaves the failure count (the summarizer backoff) as it was, and is never rebased: a newer window is planned again', () => {
    const failed = compact(compactCommand(summarizing(1), { origin: 'auto' }), () => summaryFailure('HTTP 503'))(stateOf([prompt, ...threeTurns]));
    const history = [prompt, ...threeTurns, ...recorded(failed.events)];
    const noop = compact(auto)(stateOf(history));
    expect(noop.answer).toMatchObject({ outcome: 'noop', recorded: true });
    expect(stateOf([...history, ...recorded(noop.events)])!.consecutiveFailures).toBe(1);
    expect(rebaseCompaction(noop.pass!, stateOf(history)!, stateOf([...history, user('u9')])!, auto.estimator)).toBeNull();
  });
});

describe('compaction: a noop says why (DESIGN §3.6), appends nothing', () => {
  it('within-limit: nothing to archive', () => {
    given(...threeTurns)
      .when(compact(compactCommand(slidingWindow(10))))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toMatchObject({ outcome: 'noop', reason: 'within-limit', recorded: false, tokensEstimatedSaved: 0 });
      });
  });

  it('newest-turn-only: the only candidate is the newest turn, which is always kept', () => {
    given(user('u1'), reply('a1'), reply('a2'))
      .when(compact(compactCommand(slidingWindow(1))))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toMatchObject({ outcome: 'noop', reason: 'newest-turn-only' });
      });
  });

  it('open-tool-call: a kept answer holds its call back, and the noop names the call and the event holding it', () => {
    given(user('u1'), calls('c1', 'x'), user('u2'), answers('t1', 'x'), reply('a2'))
      .when(compact(compactCommand(slidingWindow(2))))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toMatchObject({ outcome: 'noop', reason: 'open-tool-call', toolCallId: 'x', eventId: 'c1' });
      });
  });

  it('a session with no events is not found', () => {
    given()
      .when(compact(compactCommand(slidingWindow(1))))
      .thenThrows(SessionNotFoundError, 'session_not_found');
  });
});

describe('automatic compaction: a model that writes more than it is asked does not make every append a pass (DESIGN §3.5)', () => {
  // rolling-summary keepTurns 1, summarizeAtTokens 200 (summary budget 100), trigger 400 chars.
  const auto = compactCommand(
    { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 200 },
    { trigger: { type: 'token-count', threshold: 400 }, origin: 'auto' },
  );
  const turns = Array.from({ length: 6 }, (_, i) => [user(`u${i}`, 'q'.repeat(40)), reply(`a${i}`, 'r'.repeat(40))]).flat();
  // Newcomer ncllm: the model answered 1,000 characters where 100 were asked.
  const long = compact(auto, () => summaryText('s'.repeat(1000)))(stateOf(turns));

  it('given a pass whose overlong summary left the trigger firing, when a short turn is appended, then the next automatic pass waits', () => {
    expect(long.answer).toMatchObject({ outcome: 'compacted', triggerStillFires: true });
    const waiting = stateOf([...turns, ...recorded(long.events), user('u9', 'short'), reply('a9', 'ok')])!;
    // a pass planned now would archive the old summary and a turn: with its new summary at the budget (100) the window
    // would be under the trigger, but the model writes about 1,000
    expect(autoPassDue(auto, waiting)).toBe(false);
  });

  it('while a summary within its budget still lets a new turn end the wait when the turn it makes archivable was what fired', () => {
    const big = [...turns, user('u7', 'q'.repeat(450)), reply('a7', 'r')];
    const stuck = compact(auto, (r) => summaryText('s'.repeat(Math.max(1, (r.maxSummaryTokens ?? 0) - 80))))(stateOf(big));
    expect(stuck.answer).toMatchObject({ outcome: 'compacted', triggerStillFires: true });
    expect(autoPassDue(auto, stateOf([...big, ...recorded(stuck.events), user('u8', 'short'), reply('a8', 'ok')])!)).toBe(true);
  });
});

describe('compaction: the summary (DESIGN §3.3 rule 4, §3.4)', () => {
  it('goes immediately before the first kept real event, covering what was archived, and the old summary is archived', () => {
    const first = stateOf(threeTurns)!;
    const earlier = compact(compactCommand(summarizing(4)))(first);
    given(...threeTurns, ...recorded(earlier.events), user('u4'), reply('a4'))
      .when(compact(compactCommand(summarizing(2))))
      .then(({ events, summarizerRequests }) => {
        const inserted = dataOf<SummaryInsertedData>(events, SUMMARY_INSERTED);
        const oldSummary = dataOf<SummaryInsertedData>(earlier.events, SUMMARY_INSERTED).summaryId;
        expect(summarizerRequests).toHaveLength(1);
        expect(inserted.insertBeforeId).toBe('u4');
        expect(inserted.coveredIds).toEqual([oldSummary, 'u2', 'a2', 'u3', 'a3']);
        expect(dataOf<EventsArchivedData>(events, EVENTS_ARCHIVED).archivedIds).toEqual([oldSummary, 'u2', 'a2', 'u3', 'a3']);
        // u4 follows the six conversation events and the earlier decision's events in the given log.
        expect(inserted.insertBeforeRevision).toBe(String(threeTurns.length + earlier.events.length));
        const state = stateOf([...threeTurns, ...recorded(earlier.events), user('u4'), reply('a4')])!;
        expect(windowAfter(state, events)).toEqual([inserted.summaryId, 'u4', 'a4']);
      });
  });

  it('keeps the pinned system message in its place, before the summary', () => {
    given(system('s0'), ...threeTurns)
      .when(compact(compactCommand(summarizing(2))))
      .then(({ events }) => {
        const inserted = dataOf<SummaryInsertedData>(events, SUMMARY_INSERTED);
        expect(windowAfter(stateOf([system('s0'), ...threeTurns])!, events)).toEqual(['s0', inserted.summaryId, 'u3', 'a3']);
      });
  });

  it('no cut, no summarizer call (§3.3 rule 5)', () => {
    given(...threeTurns)
      .when(compact(compactCommand(summarizing(10))))
      .then(({ summarizerRequests, answer }) => {
        expect(summarizerRequests).toEqual([]);
        expect(answer.outcome).toBe('noop');
      });
  });

  it('a dry run asks the summarizer nothing and appends nothing, and says what the summarizer would be asked', () => {
    given(...threeTurns)
      .when(compact(compactCommand(summarizing(2), { dryRun: true })))
      .then(({ events, summarizerRequests, answer }) => {
        expect(events).toEqual([]);
        expect(summarizerRequests).toEqual([]);
        expect(answer).toMatchObject({ outcome: 'compacted', recorded: false, pendingSummary: { insertBeforeId: 'u3', coveredIds: ['u1', 'a1', 'u2', 'a2'] } });
        expect(answer.compactionId).toBeUndefined();
      });
  });
});

describe('compaction: a failed summary (DESIGN §3.7)', () => {
  const history = [system('s0'), system('s1'), ...threeTurns];

  it('archives only the superseded system message, keeps every real event and the old summary, and records the failure', () => {
    given(...history)
      .when(compact(compactCommand(summarizing(2)), () => summaryFailure('HTTP 503')))
      .then(({ events, answer }) => {
        expect(typesOf(events)).toEqual([EVENTS_ARCHIVED, COMPACTION_FAILED]);
        expect(dataOf<EventsArchivedData>(events, EVENTS_ARCHIVED).archivedIds).toEqual(['s0']);
        expect(dataOf<CompactionFailedData>(events, COMPACTION_FAILED).reason).toContain('HTTP 503');
        expect(windowAfter(stateOf(history)!, events)).toEqual(['s1', ...threeTurns.map((e) => e.id)]);
        expect(answer).toMatchObject({ outcome: 'failed', recorded: true, failure: { stage: 'summarize' } });
      });
  });

  it('a blank reply is a failure too', () => {
    given(...threeTurns)
      .when(compact(compactCommand(summarizing(2)), () => summaryText('  \n ')))
      .then(({ events }) => expect(typesOf(events)).toEqual([COMPACTION_FAILED]));
  });

  it('records how long the pass ran until it failed, as a completed pass records its duration (the context: started 12:00:00, failed 12:00:01)', () => {
    const ran = SPEC_CONTEXT.now.getTime() - SPEC_CONTEXT.startedAt.getTime();
    for (const summarize of [() => summaryFailure('timed out'), () => summaryText(' ')])
      given(...threeTurns)
        .when(compact(compactCommand(summarizing(2)), summarize))
        .then(({ events }) =>
          expect(dataOf<CompactionFailedData>(events, COMPACTION_FAILED)).toMatchObject({ durationMs: ran, failedAt: SPEC_CONTEXT.now.toISOString() }),
        );
    given(...threeTurns)
      .when(compact(compactCommand(summarizing(2))))
      .then(({ events }) => expect(dataOf<CompactionCompletedData>(events, COMPACTION_COMPLETED).durationMs).toBe(ran));
  });
});

describe('compaction: a failure records its kind beside its reason (failureKind)', () => {
  const failedData = (events: readonly EventData[]) => dataOf<CompactionFailedData>(events, COMPACTION_FAILED);

  it("records the summarizer's kind in CompactionFailed and answers it with the reason", () => {
    const reason = 'the model endpoint rejected the credentials: HTTP 401 (invalid_api_key); check OPENAI_API_KEY';
    given(...threeTurns)
      .when(compact(compactCommand(summarizing(2)), () => summaryFailure(reason, 'credentials')))
      .then(({ events, answer }) => {
        expect(failedData(events)).toMatchObject({ stage: 'summarize', reason: `summarizer failed: ${reason}`, failureKind: 'credentials' });
        expect(answer.failure).toEqual({ stage: 'summarize', reason: `summarizer failed: ${reason}`, failureKind: 'credentials' });
      });
  });

  it('a blank reply is invalid_reply; a summarizer naming no kind, or one outside the closed set, is other', () => {
    given(...threeTurns)
      .when(compact(compactCommand(summarizing(2)), () => summaryText(' \n ')))
      .then(({ events, answer }) => {
        expect(failedData(events).failureKind).toBe('invalid_reply');
        expect(answer.failure?.failureKind).toBe('invalid_reply');
      });
    for (const outcome of [summaryFailure('model down'), { ...summaryFailure('model down'), failureKind: 'quota' as never }])
      given(...threeTurns)
        .when(compact(compactCommand(summarizing(2)), () => outcome))
        .then(({ events }) => expect(failedData(events).failureKind).toBe('other'));
  });

  it('a command delivered again answers the recorded kind; a failure recorded before failures carried one answers null', () => {
    const delivered = compactCommand(summarizing(2), { commandId: 'msg-kind' });
    const failedOnce = compact(delivered, () => summaryFailure('timed out after 200 ms per attempt (0 retries)', 'timeout'))(stateOf(threeTurns));
    given(...threeTurns, ...recorded(failedOnce.events))
      .when(compact(delivered))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toMatchObject({ outcome: 'failed', replayed: true, failure: { stage: 'summarize', failureKind: 'timeout' } });
      });
    // the same decision as an older build recorded it: no failureKind in its data
    const older = recorded(failedOnce.events).map((e) =>
      e.type === COMPACTION_FAILED ? { ...e, data: Object.fromEntries(Object.entries(e.data as object).filter(([k]) => k !== 'failureKind')) } : e,
    );
    given(...threeTurns, ...older)
      .when(compact(delivered))
      .then(({ answer }) => expect(answer).toMatchObject({ outcome: 'failed', replayed: true, failure: { stage: 'summarize', failureKind: null } }));
  });
});

describe('compaction: replay and idempotent ids (DESIGN §4)', () => {
  const command = compactCommand(summarizing(2));
  const failed = compact(command, () => summaryFailure('timeout'))(stateOf(threeTurns));
  const failedId = dataOf<CompactionFailedData>(failed.events, COMPACTION_FAILED).compactionId;

  it('the same command on an unchanged session after a failure is a new pass: on the revision the failure left, a new id, a new summarizer call', () => {
    const history = [...threeTurns, ...recorded(failed.events)];
    given(...history)
      .when(compact(command))
      .then(({ events, summarizerRequests, answer, pass }) => {
        expect(summarizerRequests).toHaveLength(1);
        expect(pass?.basedOnRevision).toBe(BigInt(history.length - 1));
        expect(typesOf(events)).toEqual([EVENTS_ARCHIVED, SUMMARY_INSERTED, COMPACTION_COMPLETED]);
        expect(answer.replayed).toBeUndefined();
        expect(answer).toMatchObject({ outcome: 'compacted', recorded: true });
        expect(answer.compactionId).not.toBe(failedId);
      });
  });

  it('a transport command delivered again after its decision answers that decision (failed or compacted), without a summarizer call', () => {
    const delivered = compactCommand(summarizing(2), { commandId: 'msg-1' });
    const failedOnce = compact(delivered, () => summaryFailure('timeout'))(stateOf(threeTurns));
    given(...threeTurns, ...recorded(failedOnce.events))
      .when(compact(delivered))
      .then(({ events, summarizerRequests, answer }) => {
        expect(events).toEqual([]);
        expect(summarizerRequests).toEqual([]);
        expect(answer).toMatchObject({ compactionId: failedOnce.answer.compactionId, outcome: 'failed', replayed: true, recorded: true });
      });
    const compacted = compact(delivered)(stateOf(threeTurns));
    given(...threeTurns, ...recorded(compacted.events))
      .when(compact(delivered))
      .then(({ summarizerRequests, answer }) => {
        expect(summarizerRequests).toEqual([]);
        expect(answer).toMatchObject({ compactionId: compacted.answer.compactionId, outcome: 'compacted', replayed: true });
      });
    // Another command id with the same body is another command: a new pass.
    given(...threeTurns, ...recorded(failedOnce.events))
      .when(compact(compactCommand(summarizing(2), { commandId: 'msg-2' })))
      .then(({ summarizerRequests, answer }) => {
        expect(summarizerRequests).toHaveLength(1);
        expect(answer.replayed).toBeUndefined();
      });
  });

  it("a command delivered again after later appends answers its decision's revision, not the session's (ncsqlite69 F1)", () => {
    const delivered = compactCommand(summarizing(2), { commandId: 'msg-later' });
    const compacted = compact(delivered)(stateOf(threeTurns));
    const history = [...threeTurns, ...recorded(compacted.events)];
    // The original answer names its decision's last event: the decision's revision, the last of the history now.
    expect(compacted.answer.revision).toBe(String(history.length - 1));
    given(...history, user('u4'), reply('a4'))
      .when(compact(delivered))
      .then(({ events, answer }) => {
        expect(events).toEqual([]);
        expect(answer).toMatchObject({ compactionId: compacted.answer.compactionId, replayed: true, revision: compacted.answer.revision });
      });
  });

  it('once the conversation moved on, or with other parameters, it is a new decision with a new id', () => {
    given(...threeTurns, ...recorded(failed.events), user('u4'))
      .when(compact(command))
      .then(({ answer, summarizerRequests }) => {
        expect(summarizerRequests).toHaveLength(1);
        expect(answer.replayed).toBeUndefined();
        expect(answer.compactionId).not.toBe(failedId);
      });
    given(...threeTurns, ...recorded(failed.events))
      .when(compact(compactCommand(summarizing(3))))
      .then(({ answer }) => expect(answer.compactionId).not.toBe(failedId));
  });

  it('the same command on the same revision decides the same ids; on another revision, other ids; a transport command id fixes them', () => {
    const at = (events: GivenEvent[], cmd = command) => compact(cmd)(stateOf(events));
    expect(at(threeTurns).events.map((e) => e.id)).toEqual(at(threeTurns).events.map((e) => e.id));
    expect(at([...threeTurns, user('u4')]).answer.compactionId).not.toBe(at(threeTurns).answer.compactionId);
    const delivered = compactCommand(summarizing(2), { commandId: 'msg-1' });
    expect(at([...threeTurns, user('u4')], delivered).answer.compactionId).toBe(at(threeTurns, delivered).answer.compactionId);
  });

  it('after the store refused a pass as a duplicate, the last decision with the same parameters is the answer, whatever its outcome', () => {
    const done = compact(command)(stateOf(threeTurns));
    const state = stateOf([...threeTurns, ...recorded(done.events), user('u4')])!;
    expect(compactionToReplay(state, done.pass!.paramsKey)).toBeNull();
    expect(compactionToReplay(state, done.pass!.paramsKey, true)?.compactionId).toBe(done.answer.compactionId);
  });
});

describe('compaction: conflict and rebase (DESIGN §4)', () => {
  const command = compactCommand(summarizing(2));
  /** Plans on `history`, with one summarizer call, then the stream moves on by `since`. */
  function raced(history: GivenEvent[], since: GivenEvent[]) {
    const before = stateOf(history)!;
    const step = planSessionCompaction(command, before);
    if (step.kind !== 'pass') throw new Error('expected a pass that appends');
    return { before, latest: stateOf([...history, ...since])!, pass: step.pass, summary: summaryText('the recap') };
  }

  it('events appended meanwhile: the same decision is decided again on the new revision, without a second summarizer call', () => {
    const { before, latest, pass, summary } = raced(threeTurns, [user('u4'), reply('a4')]);
    const first = decideCompaction(command, before, pass, summary, SPEC_CONTEXT);
    const rebased = rebaseCompaction(pass, before, latest, command.estimator);
    expect(rebased).not.toBeNull();
    const again = decideCompaction(command, latest, rebased!, summary, SPEC_CONTEXT);
    expect(again.events.map((e) => e.id)).toEqual(first.events.map((e) => e.id));
    expect(again.result.archivedIds).toEqual(['u1', 'a1', 'u2', 'a2']);
    expect(again.result.keptIds).toEqual([first.result.summary!.id, 'u3', 'a3', 'u4', 'a4']);
    expect(dataOf<CompactionCompletedData>(again.events, COMPACTION_COMPLETED).basedOnRevision).toBe(before.revision!.toString());
    expect(windowAfter(latest, again.events)).toEqual([first.result.summary!.id, 'u3', 'a3', 'u4', 'a4']);
  });

  it('two passes deciding at once on one revision, in the same millisecond: the same event ids, never the same events (the store then refuses the second as a duplicate, not a retry)', async () => {
    const { before, pass } = raced(threeTurns, []);
    const failure = summaryFailure('HTTP 500');
    const [a, b] = ['pass-a', 'pass-b'].map((passId) => decideCompaction(command, before, pass, failure, { ...SPEC_CONTEXT, passId }));
    expect(b.events.map((e) => e.id)).toEqual(a.events.map((e) => e.id));
    expect(b.events.map((e) => e.data)).toEqual(a.events.map((e) => e.data));
    const store = SqliteEventStore.open(':memory:');
    try {
      const stream = 'session-t.s';
      await store.appendToStream(stream, [{ id: randomUUID(), type: 'x', data: {} }]);
      await store.appendToStream(stream, a.events, { expectedRevision: 0n });
      await expect(store.appendToStream(stream, b.events, { expectedRevision: 0n })).rejects.toBeInstanceOf(DuplicateEventIdError);
    } finally {
      await store.close();
    }
  });

  it('another compaction decided meanwhile: the pass is planned again', () => {
    const other = compact(compactCommand(slidingWindow(4)))(stateOf(threeTurns));
    const { before, latest, pass } = raced(threeTurns, recorded(other.events));
    expect(rebaseCompaction(pass, before, latest, command.estimator)).toBeNull();
  });

  it('a new system message meanwhile supersedes the pinned one: the same decision on the new revision, without a second summarizer call, also archives the one it superseded (nclongrun F1)', () => {
    const { before, latest, pass, summary } = raced([system('s0'), ...threeTurns], [system('s1'), user('u4'), system('s2')]);
    const first = decideCompaction(command, before, pass, summary, SPEC_CONTEXT);
    const rebased = rebaseCompaction(pass, before, latest, command.estimator);
    expect(rebased).not.toBeNull();
    // what a pass planned on the latest state archives as superseded: every system message but the latest
    expect(rebased!.plan.supersededSystemIds).toEqual(['s0', 's1']);
    const again = decideCompaction(command, latest, rebased!, summary, SPEC_CONTEXT);
    expect(again.result.summary!.text).toBe(first.result.summary!.text);
    expect(again.result.archivedIds).toEqual(['s0', 'u1', 'a1', 'u2', 'a2', 's1']);
    expect(windowAfter(latest, again.events)).toEqual([first.result.summary!.id, 'u3', 'a3', 'u4', 's2']);
    const data = dataOf<CompactionCompletedData>(again.events, COMPACTION_COMPLETED);
    // the tokens archived count the superseded system messages: before − after = archived − summary
    const costOf = (ids: string[]) => ids.reduce((sum, id) => sum + latest.active.get(id)!.costs[command.estimator], 0);
    expect(data.tokensBefore - data.tokensAfter).toBe(costOf(['s0', 'u1', 'a1', 'u2', 'a2', 's1']) - again.result.summary!.tokens);
    const notice = raced([system('s0'), ...threeTurns], [system('n1', 'a file arrived', true)]);
    expect(rebaseCompaction(notice.pass, notice.before, notice.latest, command.estimator)!.plan.archivedIds).toEqual(notice.pass.plan.archivedIds);
  });

  it('a new system message meanwhile, then the summarizer fails: only the superseded system messages are archived, the newly superseded one included', () => {
    const { before, latest, pass } = raced([system('s0'), ...threeTurns], [system('s1')]);
    const rebased = rebaseCompaction(pass, before, latest, command.estimator)!;
    const failed = decideCompaction(command, latest, rebased, summaryFailure('HTTP 500'), SPEC_CONTEXT);
    expect(failed.result.outcome).toBe('failed');
    expect(failed.result.archivedIds).toEqual(['s0']);
    expect(windowAfter(latest, failed.events)).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 's1']);
  });

  it('a late answer to a call the pass archives arrives meanwhile: the pass is planned again, and keeps the call with its answer', () => {
    const history = [user('u1'), calls('c1', 'k'), user('u2'), reply('a2'), user('u3'), reply('a3')];
    const sliding = compactCommand(slidingWindow(2));
    const step = planSessionCompaction(sliding, stateOf(history));
    const pass = (step as { pass: PlannedCompaction }).pass;
    expect(pass.plan.archivedIds).toContain('c1');
    const latest = stateOf([...history, answers('t1', 'k')])!;
    expect(rebaseCompaction(pass, stateOf(history)!, latest, sliding.estimator)).toBeNull();
    given(...history, answers('t1', 'k'))
      .when(compact(sliding))
      .then(({ answer }) => expect(answer).toMatchObject({ outcome: 'noop', reason: 'open-tool-call', toolCallId: 'k', eventId: 'c1' }));
  });
});
