/**
 * Time travel (DESIGN §5) over random logs written by the real handlers: appends with tool calls
 * (answered, left open, abandoned), late answers to calls a compaction archived while open
 * (archived on arrival, alone or with the next turn in one append), compactions by every strategy
 * (summaries, failed summaries). For every revision of the log, `loadSessionWindowAt`:
 *
 * - answers the window of the first revision at or after it that ends an atomic decision (DESIGN
 *   §4), found here from the log by the rule itself: a compaction's `EventsArchived` and
 *   `SummaryInserted` are inside its decision; so is every revision from a late answer up to
 *   the on-arrival `EventsArchived` that archives it;
 * - never breaks the pairing rule (DESIGN §3.3 rule 3: no tool result without its call in the
 *   window), and its `openai` rendering passes the provider-eye check `validateOpenAiWindow`
 *   (the one the replay tool uses) with every summary in its place.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { pairToolCalls, parseStrategy, type SessionEvent, type Strategy, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore, type EventStore, type RecordedEvent } from '@lib/event-store';
import {
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  sessionKey,
  sessionStream,
  type ConversationEventData,
  type EventsArchivedData,
} from '../events/session-stream-events';
import { foldSessionWindow, orderedWindow, type SessionWindowState } from '../domain/session-window';
import { eventsToOpenAiMessages, validateOpenAiWindow } from '../domain/openai-chat-format';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { loadSessionWindowAt } from './session-loader';
import { SessionStateCache } from './session-state-cache';

const RUNS = Number(process.env.FC_RUNS ?? 30);

/** Replies with a summary, or fails, as the test's script says. */
class ScriptedSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'scripted' };
  fail = false;
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    if (this.fail) return { ok: false, reason: 'scripted failure', calls: 1, promptTokens: 0, completionTokens: 0 };
    return { ok: true, text: `summary of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 1, completionTokens: 1 };
  }
}

type Op = { kind: 'turn'; answered: number; open: boolean; withLate: boolean } | { kind: 'late' } | { kind: 'compact'; strategy: Strategy; fail: boolean };

const strategyArb: fc.Arbitrary<Strategy> = fc.oneof(
  fc.integer({ min: 1, max: 4 }).map((maxEvents) => parseStrategy({ type: 'sliding-window', maxEvents })),
  fc.integer({ min: 1, max: 2 }).map((maxTurns) => parseStrategy({ type: 'turn-window', maxTurns })),
  fc.integer({ min: 1, max: 120 }).map((maxTokens) => parseStrategy({ type: 'token-count', maxTokens })),
  fc.integer({ min: 2, max: 4 }).map((maxEventsToKeep) => parseStrategy({ type: 'recursive-summarization', maxEventsToKeep, overlapSize: 1 })),
  fc.integer({ min: 1, max: 2 }).map((keepTurns) => parseStrategy({ type: 'rolling-summary', keepTurns, summarizeAtTokens: 10 })),
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('turn' as const), answered: fc.integer({ min: 0, max: 2 }), open: fc.boolean(), withLate: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'late' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('compact' as const), strategy: strategyArb, fail: fc.boolean() }) },
);

/**
 * The revision whose window time travel at `revision` must answer, from the log by the rule of
 * DESIGN §4 (see the module doc): the first revision at or after it that is inside no decision.
 */
function committedRevision(log: readonly RecordedEvent[], revision: bigint): bigint {
  const inside = new Set<bigint>();
  const revisionOf = new Map<string, bigint>();
  for (const e of log) {
    if (e.type === CONVERSATION_EVENT) revisionOf.set((e.data as ConversationEventData).event.id, e.revision);
    if (e.type === SUMMARY_INSERTED) inside.add(e.revision);
    if (e.type !== EVENTS_ARCHIVED) continue;
    const data = e.data as EventsArchivedData;
    if (!data.onArrival) inside.add(e.revision);
    else for (const id of data.archivedIds) for (let r = revisionOf.get(id)!; r < e.revision; r++) inside.add(r);
  }
  let r = revision;
  while (inside.has(r)) r++;
  return r;
}

function comparable(state: SessionWindowState | null) {
  if (!state || state.revision === null) return null;
  return { revision: state.revision.toString(), window: orderedWindow(state).map((e) => [e.event.id, e.revision.toString(), e.anchorRevision.toString()]) };
}

/** Tool results of `events` (a window, in order) whose call is not in the window before them. */
function resultsWithoutCall(events: readonly SessionEvent[]): string[] {
  const { answersOf } = pairToolCalls(events);
  return events.filter((e, i) => e.type === 'tool' && answersOf[i].some((call) => call === undefined)).map((e) => e.id);
}

describe('time travel at every revision of random logs', () => {
  let dir: string;
  let store: EventStore;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'time-travel-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a committed window, the one after the decision holding the revision, never breaking the pairing rule', async () => {
    let run = 0;
    let insideSeen = 0;
    let lateSeen = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 20 }), async (ops) => {
        const sessionId = `tt${run++}`;
        const key = sessionKey('t', sessionId);
        const cache = new SessionStateCache(store);
        const summarizer = new ScriptedSummarizer();
        const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
        const compact = new CompactSessionHandler(store, cache, summarizer);
        // Call ids left open, oldest first, and whether a compaction ran since (it may have archived them).
        const open: Array<{ id: string; compacted: boolean }> = [];
        let n = 0;
        const lateAnswer = (): SessionEvent[] => {
          const at = open.findIndex((c) => c.compacted);
          if (at < 0) return [];
          const [{ id }] = open.splice(at, 1);
          return [{ id: `late-${id}`, type: 'tool', responses: [{ toolCallId: id, name: 'g', data: `late ${id}` }] }];
        };
        const send = (events: SessionEvent[]) =>
          append.execute(
            new AppendSessionEventsCommand(
              't',
              sessionId,
              events.map((event) => ({ event })),
            ),
          );
        for (const op of ops) {
          if (op.kind === 'compact') {
            if (n === 0) continue;
            summarizer.fail = op.fail;
            await compact.execute(new CompactSessionCommand('t', sessionId, op.strategy, null, 'chars', false));
            for (const c of open) c.compacted = true;
            continue;
          }
          const late = op.kind === 'late' || op.withLate ? lateAnswer() : [];
          if (op.kind === 'late') {
            if (late.length > 0) await send(late);
            continue;
          }
          const m = n++;
          const events: SessionEvent[] = [...late, { id: `u${m}`, type: 'user', text: `question ${m}` }];
          for (let i = 0; i < op.answered; i++) {
            // Call ids are reused across turns once answered, as real agents do.
            events.push({ id: `c${m}-${i}`, type: 'assistant', text: null, toolCalls: [{ id: `call-${i}`, name: 'f', arguments: '{}' }] });
            events.push({ id: `t${m}-${i}`, type: 'tool', responses: [{ toolCallId: `call-${i}`, name: 'f', data: `result ${m}` }] });
          }
          if (op.open) {
            events.push({ id: `o${m}`, type: 'assistant', text: null, toolCalls: [{ id: `open-${m}`, name: 'g', arguments: '{}' }] });
            open.push({ id: `open-${m}`, compacted: false });
          } else events.push({ id: `a${m}`, type: 'assistant', text: `answer ${m}` });
          await send(events);
        }
        const log = await store.readStream(sessionStream(key));
        if (log.length === 0) return;
        lateSeen += log.filter((e) => e.type === EVENTS_ARCHIVED && (e.data as EventsArchivedData).onArrival).length;
        for (const e of log) {
          const expected = committedRevision(log, e.revision);
          if (expected !== e.revision) insideSeen++;
          const state = await loadSessionWindowAt(store, key, e.revision);
          const at = `revision ${e.revision} (${e.type})`;
          expect({ at, state: comparable(state) }).toEqual({ at, state: comparable(foldSessionWindow(log.filter((x) => x.revision <= expected))) });
          const events = orderedWindow(state!).map((w) => w.event);
          expect({ at, resultsWithoutCall: resultsWithoutCall(events) }).toEqual({ at, resultsWithoutCall: [] });
          const summaries = events.flatMap((w) => (w.type === 'summary' ? [{ shadowPrompt: w.shadowPrompt, text: w.text }] : []));
          expect({ at, problems: validateOpenAiWindow(eventsToOpenAiMessages(events), { summaries }) }).toEqual({ at, problems: [] });
        }
      }),
      { numRuns: RUNS },
    );
    // Only meaningful if revisions inside decisions of both kinds were asked for.
    expect(insideSeen).toBeGreaterThan(20);
    expect(lateSeen).toBeGreaterThan(3);
  });
});
