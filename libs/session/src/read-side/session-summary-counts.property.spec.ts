import * as fc from 'fast-check';
import type { RecordedEvent } from '@lib/event-store';
import { ERASURE_STREAM_PREFIX, SESSION_ERASED, type SessionErasedData } from '../events/erasure-events';
import {
  CONVERSATION_EVENT,
  type CompactionCompletedData,
  type CompactionFailedData,
  type SummarizerIdentity,
  type SummaryInsertedData,
} from '../events/session-stream-events';
import { compactionHistoryItem } from './queries/compaction-history-item';
import { listCompactions, type CompactionRecord } from './queries/compaction-history-query';
import { dumpReadModels } from './read-model-dump';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { getSessionSummary } from './queries/session-summary-query';
import { RecordedSessionLog, assistant, user } from './testing/recorded-session-log';

const SESSIONS = ['a', 'b'];
const IDS = ['e1', 'e2', 'e3', 'e4', 'e5'];

/** One step of a session's history. */
type Step =
  | { kind: 'append'; session: string; id: string }
  | {
      kind: 'compact';
      session: string;
      compaction: number;
      archive: string[];
      summary: boolean;
      outcome: 'compacted' | 'noop';
      stillFires: boolean | null;
      spent: SummarizerIdentity | null;
    }
  | { kind: 'fail'; session: string; compaction: number; archive: string[]; spent: SummarizerIdentity | null }
  | { kind: 'policy'; session: string }
  | { kind: 'erase'; session: string; byRevision: boolean };

const session = fc.constantFrom(...SESSIONS);
const figure = fc.integer({ min: 0, max: 5000 });
const usage = fc.record(
  { calls: figure, promptTokens: figure, completionTokens: figure, retries: figure, unreportedUsageCalls: figure },
  { requiredKeys: ['calls', 'promptTokens', 'completionTokens'] },
);
/** A decision's summarizer as any build recorded it: figures absent in older ones, a discarded part or not; or none. */
const spent: fc.Arbitrary<SummarizerIdentity | null> = fc.option(
  fc
    .record(
      { kind: fc.constantFrom('openai-compatible', 'extractive'), model: fc.constant('gpt-4o'), usage, discarded: usage },
      { requiredKeys: ['kind', 'model', 'usage'] },
    )
    .map(({ usage: u, ...rest }) => ({ ...rest, ...u })),
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), session, id: fc.constantFrom(...IDS) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      session,
      // A small pool of compaction ids: a record of an id already recorded replaces it.
      compaction: fc.integer({ min: 0, max: 3 }),
      archive: fc.subarray(IDS),
      summary: fc.boolean(),
      outcome: fc.constantFrom('compacted' as const, 'noop' as const),
      stillFires: fc.constantFrom(true, false, null),
      spent,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('fail' as const), session, compaction: fc.integer({ min: 0, max: 3 }), archive: fc.subarray(IDS), spent }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('policy' as const), session }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('erase' as const), session, byRevision: fc.boolean() }) },
);

/** The events of `steps`, global positions renumbered 1, 2, … (erasure records included). */
function eventsOf(steps: readonly Step[]): RecordedEvent[] {
  const log = new RecordedSessionLog();
  const events: RecordedEvent[] = [];
  const take = () => events.push(...log.events.splice(0));
  for (const s of steps) {
    if (s.kind === 'append') log.append(s.session, (s.id < 'e3' ? user : assistant)(s.id, `text of ${s.id}`));
    else if (s.kind === 'compact') {
      const id = `c${s.compaction}`;
      if (s.archive.length > 0) log.archive(s.session, id, s.archive);
      // a decision recorded before CompactionCompleted carried its summarizer names it on its SummaryInserted only
      const inserted = s.summary ? (log.summary(s.session, id, s.archive[0] ?? 'e1', 'summary text').data as SummaryInsertedData) : null;
      const completed = log.completed(s.session, id).data as CompactionCompletedData;
      completed.outcome = s.outcome;
      if (s.stillFires !== null) completed.triggerStillFires = s.stillFires;
      if (inserted && s.spent) inserted.summarizer = s.spent;
      if (s.spent && (!inserted || s.compaction % 2 === 0)) completed.summarizer = s.spent;
    } else if (s.kind === 'fail') {
      const failed = log.failed(s.session, `c${s.compaction}`, s.archive).data as CompactionFailedData;
      if (s.spent) failed.summarizer = s.spent;
    } else if (s.kind === 'policy') log.policy(s.session);
    else {
      take();
      const own = events.filter((e) => e.streamId.endsWith(`.${s.session}`));
      if (own.length === 0) continue;
      const data: SessionErasedData = { sessionId: s.session, erasedEvents: own.length, erasedAt: '2024-07-01T00:00:00.000Z' };
      if (s.byRevision) data.lastRevision = String(own[own.length - 1].revision);
      events.push({
        id: `erasure-${events.length}`,
        type: SESSION_ERASED,
        data,
        metadata: {},
        streamId: `${ERASURE_STREAM_PREFIX}default`,
        revision: 0n,
        position: 0n,
        created: new Date('2024-07-01T00:00:00.000Z'),
      });
    }
    take();
  }
  return events.map((e, i) => ({ ...e, position: BigInt(i + 1) }));
}

/** The session's summarizer totals as its compaction history shows them: every item's `summarizer` figures, summed, but the extractive summarizer's (it calls no endpoint). */
function spendOfHistory(records: readonly CompactionRecord[]) {
  const zero = () => ({ calls: 0, retries: 0, unreportedUsageCalls: 0, usage: { promptTokens: 0, completionTokens: 0 } });
  const total = { ...zero(), discarded: zero() };
  const add = (into: ReturnType<typeof zero>, f: ReturnType<typeof zero>) => {
    into.calls += f.calls;
    into.retries += f.retries;
    into.unreportedUsageCalls += f.unreportedUsageCalls;
    into.usage.promptTokens += f.usage.promptTokens;
    into.usage.completionTokens += f.usage.completionTokens;
  };
  for (const record of records) {
    const s = compactionHistoryItem(record).summarizer;
    if (!s || s.kind === 'extractive') continue;
    add(total, s);
    if (s.discarded) add(total.discarded, s.discarded);
  }
  return total;
}

/** The summary's counts as read models before version 12 computed them: over the session's log and compactions. */
function recounted(store: ReadModelStore, sessionId: string) {
  const row = store.db.prepare("SELECT session_key AS key FROM sessions WHERE tenant_id = 'default' AND session_id = ?").get(sessionId) as
    { key: string } | undefined;
  if (!row) return null;
  const count = (sql: string) => (store.db.prepare(sql).get(row.key) as { n: number }).n;
  return {
    eventCount: count(`SELECT COUNT(*) AS n FROM session_log WHERE session_key = ? AND type = '${CONVERSATION_EVENT}'`),
    compactionCount: count("SELECT COUNT(*) AS n FROM compactions WHERE session_key = ? AND outcome = 'compacted'"),
    failedCompactionCount: count("SELECT COUNT(*) AS n FROM compactions WHERE session_key = ? AND outcome = 'failed'"),
    noopCompactionCount: count("SELECT COUNT(*) AS n FROM compactions WHERE session_key = ? AND outcome = 'noop'"),
    summarizerSpend: spendOfHistory(listCompactions(store, 'default', sessionId) ?? []),
    triggerStillFires: (() => {
      const fires = store.db
        .prepare(
          "SELECT json_extract(data_json, '$.triggerStillFires') AS v FROM compactions WHERE session_key = ? AND outcome != 'failed' ORDER BY revision DESC LIMIT 1",
        )
        .get(row.key) as { v: number | null } | undefined;
      return fires === undefined || fires.v === null ? null : fires.v === 1;
    })(),
  };
}

describe('session summary counts kept on the sessions row (read models 12; summarizer totals 18)', () => {
  it('equal the counts (and the summarizer totals of the compaction history, F6) recomputed from the log and compactions after any history of appends, archives, compactions and erasures, however it is batched, and a rebuild gives the same rows', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 10 }), (steps, cuts) => {
        const events = eventsOf(steps);
        const live = ReadModelStore.open(':memory:');
        const projector = new SessionProjector(live);
        for (let i = 0, c = 0; i < events.length; c++) {
          const size = cuts[c % cuts.length];
          projector.applyBatch(events.slice(i, i + size));
          i += size;
        }
        for (const sessionId of SESSIONS) {
          const summary = getSessionSummary(live, 'default', sessionId, 'chars');
          const expected = recounted(live, sessionId);
          if (expected === null) expect(summary).toBeNull();
          else
            expect({
              eventCount: summary!.eventCount,
              compactionCount: summary!.compactionCount,
              failedCompactionCount: summary!.failedCompactionCount,
              noopCompactionCount: summary!.noopCompactionCount,
              summarizerSpend: summary!.summarizerSpend,
              triggerStillFires: summary!.triggerStillFires,
            }).toEqual(expected);
        }
        const rebuilt = ReadModelStore.open(':memory:');
        new SessionProjector(rebuilt).applyBatch(events);
        expect(dumpReadModels(rebuilt).sessions).toEqual(dumpReadModels(live).sessions);
        live.close();
        rebuilt.close();
      }),
      { numRuns: 150 },
    );
  });
});
