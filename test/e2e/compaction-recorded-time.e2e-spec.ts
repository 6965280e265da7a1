/**
 * A compaction's `recordedAt` (newcomer ncaudit56 F1): the history item, one compaction and its
 * diff give when the store recorded the decision's last event, the clock time travel by time goes
 * by, so `…/window?atTime=<recordedAt>` answers the window right after that compaction (its diff's
 * `after`, `atRevision=<revision>`), never the one before it. `at` is the deciding process's clock,
 * read before the append: fed to `atTime` it answered the window before the compaction in 38 of 43
 * decisions. Property (fast-check): every compaction of random sessions (appends, a system prompt,
 * commanded compactions by every strategy, an automatic policy), on SQLite and on PostgreSQL (a
 * database of its own; skipped when none answers). In-process services, a few seconds each.
 */
import fc from 'fast-check';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { CompactionDiffSchema, CompactionHistoryItemSchema, CompactionHistoryPageSchema } from '../../apps/session-service/src/http/response-schemas';
import { AutoCompactionScheduler } from '@lib/session';
import { usePostgresService, useService, type Harness } from '../support/service-harness';

jest.setTimeout(120_000);

type Json = Record<string, unknown>;
type Step = { append: number; system: boolean } | { compact: Json } | { policy: Json };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const strategies: Json[] = [
  { type: 'sliding-window', maxEvents: 2 },
  { type: 'turn-window', maxTurns: 1 },
  { type: 'token-count', maxTokens: 40 },
  { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 },
  { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 10 },
];
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ append: fc.integer({ min: 1, max: 3 }), system: fc.boolean() }),
  fc.record({ compact: fc.constantFrom(...strategies) }),
  fc.record({ policy: fc.constantFrom(...strategies).map((strategy) => ({ strategy, trigger: { type: 'turn-count', maxTurns: 2 }, estimator: 'chars' })) }),
);

/** The property against the service `service` gives (its store: SQLite or PostgreSQL). */
function property(prefix: string, service: () => Pick<Harness, 'http' | 'projected' | 'service'>): void {
  const http = () => service().http();
  const autoPasses = () => service().service.app.get(AutoCompactionScheduler);

  it("every compaction's recordedAt (history, one compaction, diff) is its last event's, and atTime with it answers the window right after it", async () => {
    let run = 0;
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 12 }), async (steps) => {
        const session = `${prefix}-${run++}`;
        const path = `/v1/sessions/${session}`;
        let n = 0;
        let last = '0';
        // Each run ends with a compaction that archives something: every run checks one at least.
        for (const s of [...steps, { append: 3, system: false }, { compact: strategies[0] }] satisfies Step[]) {
          if ('append' in s) {
            const events: Json[] = s.system ? [{ id: `s${n}`, type: 'system', text: `system prompt ${n}` }] : [];
            for (let t = 0; t < s.append; t++, n++) {
              events.push({ id: `u${n}`, type: 'user', text: `question ${n} about the build` }, { id: `a${n}`, type: 'assistant', text: `answer ${n}` });
            }
            last = (await http().post(`${path}/events`).send({ events }).expect(201)).body.position as string;
          } else if ('policy' in s) {
            last = (await http().put(`${path}/policy`).send(s.policy).expect(200)).body.position ?? last;
          } else {
            const answer = await http().post(`${path}/compactions`).send({ strategy: s.compact, estimator: 'chars' });
            // A session not written yet has nothing to compact (404); otherwise a pass answers.
            if (answer.status === 404) continue;
            expect(answer.status).toBe(200);
            last = answer.body.position as string;
          }
          // The automatic pass an append started is written, and the next write lands in a later
          // millisecond of the store's clock than this one's events: a time names one write (the
          // events of one millisecond resolve to the last of them, README, Time travel by time).
          await autoPasses().whenIdle();
          await sleep(2);
        }
        const head = (await http().get(path).query({ minPosition: last }).expect(200)).body as Json;
        await service().projected(head.lastPosition as string);
        const log = ((await http().get(`${path}/events?limit=1000`).expect(200)).body.events as Json[]).map((e) => ({
          revision: e.revision as string,
          recordedAt: e.recordedAt as string,
          compactionId: e.compactionId as string | undefined,
        }));
        const recordedAt = new Map(log.map((e) => [e.revision, e.recordedAt]));
        const page = (await http().get(`${path}/compactions`).query({ limit: 100, minPosition: head.lastPosition }).expect(200)).body;
        CompactionHistoryPageSchema.parse(page);
        for (const item of page.compactions as Json[]) {
          const at = `compaction ${String(item.compactionId)} (revision ${String(item.revision)}, at ${String(item.at)})`;
          // The recorded time of its last event, at or after that of each of its events.
          expect({ at, recordedAt: item.recordedAt }).toEqual({ at, recordedAt: recordedAt.get(item.revision as string) });
          for (const e of log.filter((l) => l.compactionId === item.compactionId && BigInt(l.revision) <= BigInt(item.revision as string)))
            expect({ at, before: Date.parse(e.recordedAt) <= Date.parse(item.recordedAt as string) }).toEqual({ at, before: true });
          const one = (
            await http()
              .get(`${path}/compactions/${String(item.compactionId)}`)
              .expect(200)
          ).body;
          CompactionHistoryItemSchema.parse(one);
          expect(one).toEqual(item);
          const diff = (
            await http()
              .get(`${path}/compactions/${String(item.compactionId)}/diff`)
              .expect(200)
          ).body;
          CompactionDiffSchema.parse(diff);
          expect({ at, recordedAt: diff.recordedAt }).toEqual({ at, recordedAt: item.recordedAt });

          // Fed to atTime: the window right after the compaction, as atRevision of its revision and its diff's after.
          const byTime = (await http().get(`${path}/window`).query({ atTime: item.recordedAt, estimator: 'chars' }).expect(200)).body;
          expect({ at, resolved: byTime.resolved }).toEqual({ at, resolved: { revision: item.revision, recordedAt: item.recordedAt } });
          const byRevision = (await http().get(`${path}/window`).query({ atRevision: item.revision, estimator: 'chars' }).expect(200)).body;
          expect({ at, window: { ...byTime, resolved: undefined } }).toEqual({ at, window: byRevision });
          const ids = (byTime.events as Json[]).map((e) => e.id);
          expect({ at, ids }).toEqual({ at, ids: (diff.after.events as Json[]).map((e) => e.id) });
          expect({ at, stillIn: (item.archivedIds as string[]).filter((id) => ids.includes(id)) }).toEqual({ at, stillIn: [] });
          checked++;
        }
      }),
      { numRuns: 6 },
    );
    // The property did not hold of nothing: each run's last compaction at least.
    expect(checked).toBeGreaterThanOrEqual(6);
  });
}

describe('a compaction’s recordedAt and time travel by time (SQLite)', () => {
  const service = useService();
  property('rt', () => service);
});

describeUnlessSkipped(postgresUnavailableReason(), 'a compaction’s recordedAt and time travel by time (PostgreSQL)', () => {
  const service = usePostgresService('compaction_recorded_at');
  property('rtpg', () => service);
});
