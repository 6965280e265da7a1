/**
 * Several writers on one session, in every order the scheduler picks: two processes (each with its
 * own SessionStateCache, so one decides on a cached state the other has moved past) and several
 * clients per process (appends, compactions and policy changes of one process share its cache
 * while they await).
 * Every store call is a point where another writer may go first (fast-check's scheduler decides
 * which call proceeds and when its answer comes back).
 *
 * Some appends carry the client's own `expectedRevision` (the log's revision when the client sends
 * it), often right after a compaction, and go to both processes at once (a client that retries
 * through another replica before the first answered); their resends carry it too.
 *
 * Whatever the interleaving (DESIGN §2: expected-revision checks, no lost writes):
 * - an acknowledged append's events are in the log exactly once, the last one at the revision it
 *   was answered with; a never-acknowledged append left no event;
 * - every append in the log was valid on the state it was written after: deciding it again on a
 *   fold of the log before it accepts it (tool calls stay valid for a provider whatever the race);
 * - an append with the client's revision is refused 409 `wrong_expected_revision` only when it was
 *   never written (a copy sent to the other process, or a resend, answers the write) and another
 *   writer's event came after that revision (a compaction's decisions do not count);
 * - every process's cached state equals a fold of the whole log.
 */
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent, type Strategy, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore, type EventStore, type RecordedEvent } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  sessionKey,
  sessionStream,
  type ConversationEventData,
} from '../events/session-stream-events';
import { foldSessionWindow, orderedWindow, type SessionWindowState } from '../domain/session-window';
import { decideAppend } from '../decider/session-decider';
import { RevisionConflictError, SessionNotFoundError, ToolCallConflictError, UnknownToolCallError } from '../errors';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { answeredCallIds, callIdsInLog } from './call-ids-in-log';
import { SessionStateCache } from './session-state-cache';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';

const noBus = { publish: () => undefined } as unknown as EventBus;
const SESSION = 'race';
const KEY = sessionKey('t', SESSION);
const STREAM = sessionStream(KEY);
/** Few call ids, so that writers race to call and answer the same ones. */
const CALL_IDS = ['k0', 'k1'];
/** A compaction's decisions: they do not count against a client's expectedRevision. */
const COMPACTION_DECISIONS = [EVENTS_ARCHIVED, SUMMARY_INSERTED, COMPACTION_COMPLETED, COMPACTION_FAILED];
/** Every append names this owner, except resends that leave it out. */
const OWNER = 'al';

class EchoSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'echo' };
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    return { ok: true, text: `summary of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 1, completionTokens: 1 };
  }
}

/**
 * What one client does, one step after another. `resend` sends the client's previous append again,
 * unchanged (with its `expectedRevision`). `twin`: a user message with the log's revision as
 * `expectedRevision` (after a compaction by the client's process when `compactFirst`), sent to both
 * processes at once.
 */
type Step =
  | { kind: 'user' }
  | { kind: 'call'; callId: string }
  | { kind: 'answer'; callId: string; unnamed: boolean }
  | { kind: 'call-and-answer'; callId: string; unnamed: boolean }
  | { kind: 'resend'; withOwner: boolean }
  | { kind: 'restart' }
  | { kind: 'twin'; compactFirst: boolean }
  | { kind: 'compact'; strategy: Strategy }
  | { kind: 'policy'; strategy: Strategy | null };

const callIdArb = fc.constantFrom(...CALL_IDS);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'user' as const }) },
  { weight: 3, arbitrary: callIdArb.map((callId) => ({ kind: 'call' as const, callId })) },
  // `unnamed`: sent as an OpenAI tool message (`/messages`): no tool name, named after its call by the service.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('answer' as const), callId: callIdArb, unnamed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('call-and-answer' as const), callId: callIdArb, unnamed: fc.boolean() }) },
  // A resend may leave the owner's userId out (docs/http-api.md "Ids and retries": not part of an event's content).
  { weight: 1, arbitrary: fc.boolean().map((withOwner) => ({ kind: 'resend' as const, withOwner })) },
  // The process restarts (or its cache evicts the session): its next command loads the session from the log, from the last compaction's snapshot.
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  { weight: 2, arbitrary: fc.boolean().map((compactFirst) => ({ kind: 'twin' as const, compactFirst })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.integer({ min: 1, max: 4 }).map((maxEvents) => parseStrategy({ type: 'sliding-window', maxEvents })),
        fc.integer({ min: 1, max: 2 }).map((maxTurns) => parseStrategy({ type: 'turn-window', maxTurns })),
        fc.integer({ min: 2, max: 4 }).map((maxEventsToKeep) => parseStrategy({ type: 'recursive-summarization', maxEventsToKeep, overlapSize: 1 })),
      )
      .map((strategy) => ({ kind: 'compact' as const, strategy })),
  },
);
const policyArb: fc.Arbitrary<Step> = fc
  .option(fc.integer({ min: 2, max: 6 }).map((maxEvents) => parseStrategy({ type: 'sliding-window', maxEvents })))
  .map((strategy) => ({ kind: 'policy' as const, strategy }));
const clientArb = fc.record({
  process: fc.integer({ min: 0, max: 1 }),
  steps: fc.array(fc.oneof({ weight: 6, arbitrary: stepArb }, { weight: 1, arbitrary: policyArb }), { minLength: 1, maxLength: 6 }),
});

/** The events of an append step; ids are unique per client and step. */
function eventsOf(step: Exclude<Step, { kind: 'resend' | 'restart' | 'compact' | 'policy' | 'twin' }>, id: string): SessionEvent[] {
  const call = (callId: string): SessionEvent => ({ id: `${id}c`, type: 'assistant', text: null, toolCalls: [{ id: callId, name: 'f', arguments: '{}' }] });
  const answer = (callId: string, unnamed: boolean): SessionEvent => ({
    id: `${id}t`,
    type: 'tool',
    responses: [{ toolCallId: callId, name: unnamed ? '' : 'f', data: `from ${id}` }],
  });
  switch (step.kind) {
    case 'user':
      return [{ id: `${id}u`, type: 'user', text: `said by ${id}` }];
    case 'call':
      return [call(step.callId)];
    case 'answer':
      return [answer(step.callId, step.unnamed)];
    case 'call-and-answer':
      return [call(step.callId), answer(step.callId, step.unnamed)];
  }
}

/** `store` whose every call waits for the scheduler to let it run, and whose answer waits for it again. */
function scheduledStore(store: EventStore, s: fc.Scheduler, name: string): EventStore {
  const gated: EventStore = Object.create(store) as EventStore;
  for (const method of ['appendToStream', 'readStream', 'streamRevision', 'readAll', 'headPosition'] as const) {
    const original = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
    (gated as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      await s.schedule(Promise.resolve(), `${name} ${method}`);
      // Settled first, so that a refusal waiting for its turn is not an unhandled rejection.
      const settled = original(...args).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      const outcome: { value?: unknown; error?: unknown } = await s.schedule(settled, `${name} ${method} answered`);
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    };
  }
  return gated;
}

/** What the test compares of a state: revision, the active window in order, and the compaction bookkeeping. */
function comparable(state: SessionWindowState | null) {
  if (!state) return null;
  return {
    revision: state.revision?.toString() ?? null,
    window: orderedWindow(state).map((e) => [e.event.id, e.revision.toString(), e.anchorRevision.toString()]),
    archivedOpenCalls: [...(state.archivedOpenCalls ?? new Map()).entries()].sort(),
    lastCompaction: state.lastCompaction?.compactionId ?? null,
    eventsSinceCompaction: state.eventsSinceCompaction,
    consecutiveFailures: state.consecutiveFailures,
    policy: state.policy?.strategy ?? null,
    policyRevision: state.policyRevision?.toString() ?? null,
  };
}

/** One acknowledged or refused append: its events, the answer or refusal, and the log's length when it was sent and when it was answered. */
interface AppendRecord {
  events: SessionEvent[];
  /** How its tool responses were named: `from-calls` when some were sent without a name. */
  naming: 'as-sent' | 'from-calls';
  /** The client's own `expectedRevision`, or `any`. */
  expected: bigint | 'no_stream' | 'any';
  answered: { revision: string } | null;
  refusedWith: (new (...args: never[]) => Error) | null;
  sentAt: number;
  answeredAt: number;
}

/** The log's length now, read past the scheduler. */
async function logLength(store: EventStore): Promise<number> {
  const revision = await store.streamRevision(STREAM);
  return revision === null ? 0 : Number(revision) + 1;
}

/**
 * {@link decideAppend} of `events` on the state after the first `length` events of `log`, as the
 * handler decides (an answer to a call the state no longer holds is looked up in the log): the
 * decision, or the error it raises.
 */
async function decideAfter(store: EventStore, log: RecordedEvent[], length: number, events: SessionEvent[]): Promise<{ kind: string } | Error> {
  const before = log.slice(0, length);
  const state = before.length > 0 ? foldSessionWindow(before) : null;
  const command = { type: 'AppendEvents' as const, tenantId: 't', sessionId: SESSION, events: events.map((event) => ({ event })) };
  try {
    return decideAppend(command, state);
  } catch (e) {
    if (!(e instanceof UnknownToolCallError) || state === null) return e as Error;
    try {
      return decideAppend(command, state, undefined, await callIdsInLog(store, STREAM, answeredCallIds(events), BigInt(length - 1)));
    } catch (again) {
      return again as Error;
    }
  }
}

describe('concurrent writers on one session', () => {
  it('lose nothing, write only valid appends, and keep every cache equal to the log', async () => {
    let compacted = 0;
    let refused = 0;
    let raced = 0;
    let policies = 0;
    let twins = 0;
    let stale = 0;
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(clientArb, { minLength: 2, maxLength: 4 }), async (s, clients) => {
        const store = SqliteEventStore.open(':memory:');
        try {
          const started = (p: number) => {
            const seen = scheduledStore(store, s, `process ${p}`);
            const cache = new SessionStateCache(seen);
            return {
              cache,
              append: new AppendSessionEventsHandler(seen, cache, noBus),
              compact: new CompactSessionHandler(seen, cache, new EchoSummarizer()),
              policy: new SetCompactionPolicyHandler(seen, cache, new EchoSummarizer()),
            };
          };
          const processes = [0, 1].map(started);
          const appends: AppendRecord[] = [];
          const unexpected: unknown[] = [];
          const run = async (client: (typeof clients)[number], c: number) => {
            let previous: AppendRecord | null = null;
            for (const [n, step] of client.steps.entries()) {
              const { append, compact, policy } = processes[client.process];
              if (step.kind === 'restart') {
                processes[client.process] = started(client.process);
                continue;
              }
              if (step.kind === 'compact') {
                const answer = await compact.execute(new CompactSessionCommand('t', SESSION, step.strategy, null, 'chars', false)).catch((e: unknown) => {
                  // A compaction before the first append finds no session.
                  if (!(e instanceof SessionNotFoundError)) unexpected.push(e);
                  return null;
                });
                if (answer?.outcome === 'compacted') compacted++;
                continue;
              }
              if (step.kind === 'policy') {
                await policy.execute(new SetCompactionPolicyCommand('t', SESSION, step.strategy, null, 'chars')).catch((e: unknown) => {
                  // A policy before the first append finds no session.
                  if (!(e instanceof SessionNotFoundError)) unexpected.push(e);
                });
                policies++;
                continue;
              }
              if (step.kind === 'resend' && !previous) continue;
              // The revision the client saw (a compaction may come after it, by this client or another).
              const seen = await logLength(store);
              if (step.kind === 'twin' && step.compactFirst) {
                const strategy = parseStrategy({ type: 'turn-window', maxTurns: 1 });
                await compact.execute(new CompactSessionCommand('t', SESSION, strategy, null, 'chars', false)).catch((e: unknown) => {
                  if (!(e instanceof SessionNotFoundError)) unexpected.push(e);
                });
              }
              const events =
                step.kind === 'resend'
                  ? previous!.events
                  : step.kind === 'twin'
                    ? [{ id: `c${c}s${n}u`, type: 'user' as const, text: `said by c${c}s${n}` }]
                    : eventsOf(step, `c${c}s${n}`);
              const naming = events.some((e) => e.type === 'tool' && e.responses.some((r) => r.name === '')) ? 'from-calls' : 'as-sent';
              const sentAt = await logLength(store);
              const expected = step.kind === 'resend' ? previous!.expected : step.kind === 'twin' ? (seen === 0 ? 'no_stream' : BigInt(seen - 1)) : 'any';
              const send = async (handler: AppendSessionEventsHandler) => {
                const record: AppendRecord = { events, naming, expected, answered: null, refusedWith: null, sentAt, answeredAt: 0 };
                appends.push(record);
                previous = record;
                try {
                  record.answered = await handler.execute(
                    new AppendSessionEventsCommand(
                      't',
                      SESSION,
                      events.map((event) => ({ event })),
                      expected,
                      step.kind === 'resend' && !step.withOwner ? undefined : OWNER,
                      naming,
                    ),
                  );
                } catch (e) {
                  if (e instanceof ToolCallConflictError || e instanceof UnknownToolCallError) {
                    refused++;
                    record.refusedWith = e.constructor as AppendRecord['refusedWith'];
                  } else if (e instanceof RevisionConflictError && expected !== 'any') record.refusedWith = RevisionConflictError;
                  else unexpected.push(e);
                }
                record.answeredAt = await logLength(store);
              };
              if (step.kind === 'twin') {
                twins++;
                await Promise.all(processes.map((p) => send(p.append)));
              } else await send(append);
            }
          };
          await s.waitFor(Promise.all(clients.map((client, c) => run(client, c))));

          expect(unexpected).toEqual([]);
          const log = await store.readStream(STREAM).catch(() => [] as RecordedEvent[]);
          const conversation = log.filter((e) => e.type === CONVERSATION_EVENT);
          const revisionOf = new Map(conversation.map((e) => [(e.data as ConversationEventData).event.id, e.revision]));
          // A tool response sent without a name is stored named after its call, never unnamed.
          const names = conversation.flatMap((e) => {
            const event = (e.data as ConversationEventData).event;
            return event.type === 'tool' ? event.responses.map((r) => r.name) : [];
          });
          expect(names.filter((name) => name === '')).toEqual([]);
          // Each client id at most once in the log.
          expect(revisionOf.size).toBe(conversation.length);
          const acknowledged = new Set(appends.filter((a) => a.answered).flatMap((a) => a.events.map((e) => e.id)));
          for (const a of appends) {
            const ids = a.events.map((e) => e.id);
            if (a.answered) {
              // The answer's revision is the last event written: the last of these, or the archive of a late answer right after it (DESIGN §3.3 rule 3).
              const last = log.find((e) => e.revision.toString() === a.answered!.revision);
              const lastOwn = last?.type === CONVERSATION_EVENT ? last.revision : BigInt(a.answered.revision) - 1n;
              expect(revisionOf.get(ids[ids.length - 1])).toBe(lastOwn);
            }
            // An append never acknowledged (nor resent with success) left nothing.
            else if (!ids.some((id) => acknowledged.has(id))) expect(ids.filter((id) => revisionOf.has(id))).toEqual([]);
          }
          for (const id of acknowledged) expect(revisionOf.has(id)).toBe(true);

          // Each append in the log, decided again on a fold of the log before it, is accepted.
          const written = new Map(appends.map((a) => [a.events[0].id, a.events]));
          for (const [firstId, events] of written) {
            const at = revisionOf.get(firstId);
            if (at !== undefined) expect(await decideAfter(store, log, Number(at), events)).toEqual(expect.objectContaining({ kind: 'append' }));
          }
          // A refusal for the client's revision: the request was never written, and another writer's event came after that revision.
          for (const a of appends.filter((r) => r.refusedWith === RevisionConflictError)) {
            expect(a.events.filter((e) => revisionOf.has(e.id)).map((e) => e.id)).toEqual([]);
            const after = log.filter((e) => a.expected === 'no_stream' || e.revision > (a.expected as bigint));
            expect(after.find((e) => !COMPACTION_DECISIONS.includes(e.type))).toBeDefined();
            stale++;
          }
          // A refusal held on the log as it was at some point while the append was being decided, not only on a stale cache.
          for (const a of appends.filter((r) => r.refusedWith && r.refusedWith !== RevisionConflictError)) {
            const held: boolean[] = [];
            for (let length = a.sentAt; length <= a.answeredAt; length++)
              held.push((await decideAfter(store, log, length, a.events)) instanceof a.refusedWith!);
            expect(held).toContain(true);
          }

          // Every process's cache, once it loads, holds what a fold of the whole log holds.
          const full = log.length > 0 ? foldSessionWindow(log) : null;
          const loads = processes.map((p) => p.cache.load(KEY));
          for (const state of await s.waitFor(Promise.all(loads))) expect(comparable(state)).toEqual(comparable(full));
          if (new Set(clients.map((c) => c.process)).size > 1) raced++;
        } finally {
          await store.close();
        }
      }),
      { numRuns: 300 },
    );
    // The property means something only if the races happened: refusals, compactions, two processes. Floors far
    // below chance: over 100 seeds the lowest counts were 514 refused, 28 compacted (5th percentile 40, median 50),
    // 193 raced, 384 policies, 283 twins, 237 stale.
    expect(refused).toBeGreaterThan(10);
    expect(compacted).toBeGreaterThan(10);
    expect(raced).toBeGreaterThan(30);
    expect(policies).toBeGreaterThan(10);
    expect(twins).toBeGreaterThan(30);
    expect(stale).toBeGreaterThan(0);
  });
});
