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
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { logsWithLateAnswerArchived, randomLogOps, writeRandomSessionLog, type RandomLogOp } from '../../../../test/support/random-session-log';
import { EVENTS_ARCHIVED, sessionKey, sessionStream, type EventsArchivedData } from '../events/session-stream-events';
import { listCompactions } from '../read-side/queries/compaction-history-query';
import { compactionHistoryItem } from '../read-side/queries/compaction-history-item';
import { listLog } from '../read-side/queries/session-log-query';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';

const RUNS = Number(process.env.FC_RUNS ?? 30);

const opArb = randomLogOps({ maxAnswered: 0, systemPrompts: true, rollingSummary: false });

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

  let run = 0;
  /**
   * Writes `ops` as a new session, projects its log and checks every compaction's history item
   * against the log's flags; resolves to the number of late answers the items name archived on arrival.
   */
  async function checkedAudit(ops: readonly RandomLogOp[]): Promise<number> {
    const sessionId = `ab${run++}`;
    const key = sessionKey('t', sessionId);
    await writeRandomSessionLog(store, sessionId, ops);
    const log = await store.readStream(sessionStream(key));
    if (log.length === 0) return 0;
    const readModels = ReadModelStore.open(':memory:');
    let onArrival = 0;
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
        onArrival += item.archivedOnArrival.length;
      }
    } finally {
      readModels.close();
    }
    return onArrival;
  }

  it('archivedIds and archivedOnArrival of each compaction name exactly the log events archived by it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 20 }), async (ops) => {
        await checkedAudit(ops);
      }),
      { numRuns: RUNS },
    );
  });

  // The property above is only meaningful if late answers were archived on arrival: these logs all hold one
  // (a count of the random logs above that happened to hold them, > 3, was a threshold on chance: over 60 seeds
  // it ranged 3 to 24, median 15.5, and failed one).
  it('so do they on logs that each hold a late answer archived on arrival', async () => {
    let withOnArrival = 0;
    await fc.assert(
      fc.asyncProperty(logsWithLateAnswerArchived(opArb, 10), async (ops) => {
        const onArrival = await checkedAudit(ops);
        expect({ ops, onArrival: onArrival > 0 }).toEqual({ ops, onArrival: true });
        withOnArrival++;
      }),
      { numRuns: RUNS },
    );
    expect(withOnArrival).toBe(RUNS);
  });
});
