/**
 * The audit's promise over random logs written by the real handlers (appends with tool calls
 * answered, left open and abandoned; late answers archived on arrival, alone or with the next turn;
 * compactions by every strategy, summaries and failed summaries), projected into the read models:
 * for every recorded compaction, the ids of its history item (`archivedIds`, what the decision
 * archived, and `archivedOnArrival`, the late answers archived afterwards and attributed to it)
 * are exactly the log's events flagged `archivedBy` it, each named once; and each on-arrival
 * entry names the `EventsArchived` (`onArrival: true`) of the log that archived it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent, type Strategy, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { EVENTS_ARCHIVED, sessionKey, sessionStream, type EventsArchivedData } from '../events/session-stream-events';
import { listCompactions } from '../read-side/queries/compaction-history-query';
import { compactionHistoryItem } from '../read-side/queries/compaction-history-item';
import { listLog } from '../read-side/queries/session-log-query';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
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

type Op = { kind: 'turn'; open: boolean; withLate: boolean; system: boolean } | { kind: 'late' } | { kind: 'compact'; strategy: Strategy; fail: boolean };

const strategyArb: fc.Arbitrary<Strategy> = fc.oneof(
  fc.integer({ min: 1, max: 4 }).map((maxEvents) => parseStrategy({ type: 'sliding-window', maxEvents })),
  fc.integer({ min: 1, max: 2 }).map((maxTurns) => parseStrategy({ type: 'turn-window', maxTurns })),
  fc.integer({ min: 1, max: 120 }).map((maxTokens) => parseStrategy({ type: 'token-count', maxTokens })),
  fc.integer({ min: 2, max: 4 }).map((maxEventsToKeep) => parseStrategy({ type: 'recursive-summarization', maxEventsToKeep, overlapSize: 1 })),
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('turn' as const), open: fc.boolean(), withLate: fc.boolean(), system: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'late' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('compact' as const), strategy: strategyArb, fail: fc.boolean() }) },
);

describe('events archived by a compaction: history item = log flags', () => {
  let dir: string;
  let store: EventStore;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archived-by-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('archivedIds and archivedOnArrival of each compaction name exactly the log events archived by it', async () => {
    let run = 0;
    let onArrivalSeen = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 20 }), async (ops) => {
        const sessionId = `ab${run++}`;
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
          // A new system prompt supersedes the last one: every later pass archives that one.
          const events: SessionEvent[] = [...late, ...(op.system ? [{ id: `s${m}`, type: 'system' as const, text: `rules ${m}` }] : [])];
          events.push({ id: `u${m}`, type: 'user', text: `question ${m}` });
          if (op.open) {
            events.push({ id: `o${m}`, type: 'assistant', text: null, toolCalls: [{ id: `open-${m}`, name: 'g', arguments: '{}' }] });
            open.push({ id: `open-${m}`, compacted: false });
          } else events.push({ id: `a${m}`, type: 'assistant', text: `answer ${m}` });
          await send(events);
        }
        const log = await store.readStream(sessionStream(key));
        if (log.length === 0) return;
        const readModels = ReadModelStore.open(':memory:');
        try {
          new SessionProjector(readModels).applyBatch(log);
          const rows = listLog(readModels, 't', sessionId, 0n, 1000)!.events;
          for (const item of listCompactions(readModels, 't', sessionId)!.map(compactionHistoryItem)) {
            const named = [...item.archivedIds, ...item.archivedOnArrival.map((a) => a.eventId)];
            const flagged = rows.filter((r) => r.archivedBy === item.compactionId).map((r) => r.eventId!);
            const at = `compaction ${item.compactionId} (${item.outcome})`;
            expect({ at, named: [...named].sort(), once: new Set(named).size === named.length }).toEqual({ at, named: [...flagged].sort(), once: true });
            for (const a of item.archivedOnArrival) {
              const archiving = log.find((e) => e.revision.toString() === a.revision)!;
              expect({ at, type: archiving.type, position: archiving.position.toString(), data: archiving.data }).toEqual({
                at,
                type: EVENTS_ARCHIVED,
                position: a.position,
                data: { compactionId: item.compactionId, archivedIds: [a.eventId], onArrival: true } satisfies EventsArchivedData,
              });
            }
            onArrivalSeen += item.archivedOnArrival.length;
          }
        } finally {
          readModels.close();
        }
      }),
      { numRuns: RUNS },
    );
    // Only meaningful if late answers were archived on arrival.
    expect(onArrivalSeen).toBeGreaterThan(3);
  });
});
