/**
 * List cursors past the end of what they page (newcomer ncaudit56 F2): a well-formed session-list
 * or erasures cursor whose position was past the log's head answered the first page again, or the
 * full list; a compaction-history cursor past the session's last revision answered an empty page
 * (read as "no more compactions"). Recall refused its cursors past the head; the lists now do too,
 * in the same words, and follow a cursor another replica made as recall does: a replica whose read
 * models are behind it waits for them, then answers the page the replica that made it answers.
 *
 * For arbitrary histories (appends to three sessions, compactions, erasures, some sessions
 * written again after their erasure) with the lists paged, at any page size, between the writes:
 * - every cursor a page gave is accepted later by the replica that made it, after every later
 *   write, and by a replica behind it, which answers, once caught up, the same page;
 * - a cursor of each list holding a key past the end (a position past the log's head, a revision
 *   past the session's last) is refused with 400 `invalid_query`, on either replica, nothing read.
 */
import type { EventBus } from '@nestjs/cqrs';
import fc from 'fast-check';
import { parseStrategy } from '@lib/compaction';
import { MAX_REVISION, SqliteEventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { InvalidQueryError } from '../read-side/invalid-query-error';
import { encodeKeysetCursor, type KeysetList } from '../read-side/keyset-cursor';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { AcknowledgedPositions } from '../write-side/acknowledged-positions';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from '../write-side/append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from '../write-side/compact-session';
import { EraseSessionCommand, EraseSessionHandler } from '../write-side/erase-session';
import { SessionStateCache } from '../write-side/session-state-cache';
import { DEFAULT_SESSION_SETTINGS } from '../write-side/auto-compaction';
import { SessionNotFoundError } from '../errors';
import { findSession } from '../read-side/queries/session-row';
import { cursorJson } from '../read-side/testing/forged-cursors';
import { SessionHistoryReads } from './session-history-reads';
import { SessionReads } from './session-reads';

jest.setTimeout(120_000);

const RUNS = Number(process.env.FC_RUNS ?? 20);
const noBus = { publish: () => undefined } as unknown as EventBus;
const TENANT = 't';
const SESSIONS = ['a', 'b', 'c'] as const;

/** A list route's page, as one read asks it: the list, its session (compactions), page size and cursor. */
interface ListRead {
  list: KeysetList;
  sessionId?: string;
  limit: number;
  cursor?: string;
}

/** The read service of a replica over `readModels` (its projector `projector`, running or not). */
function historyReads(store: SqliteEventStore, projector: SessionProjector, maxWaitMs: number): SessionHistoryReads {
  const reads = new SessionReads(store, projector.store, projector, { ...DEFAULT_SESSION_SETTINGS, maxWaitMs }, new AcknowledgedPositions());
  return new SessionHistoryReads(store, projector.store, reads);
}

/** The page `read` answers on `reads` (the list's answer: items and nextCursor). */
async function page(reads: SessionHistoryReads, read: ListRead): Promise<{ nextCursor?: string }> {
  const { limit, cursor } = read;
  if (read.list === 'sessions') return reads.sessions({ tenantId: TENANT, estimator: 'chars', limit, cursor });
  if (read.list === 'erasures') return reads.erasures({ tenantId: TENANT, limit, cursor });
  return reads.compactions(TENANT, read.sessionId!, { limit, cursor });
}

/** What `read` answers: its page, or its error's class, code and message. */
async function answer(reads: SessionHistoryReads, read: ListRead): Promise<unknown> {
  try {
    return await page(reads, read);
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { error: (error as Error).constructor.name, code, message };
  }
}

type Op =
  | { op: 'append'; sessionId: string; events: number }
  /** Two events appended, then a compaction pass (sliding window of 1 event): a decision in the history. */
  | { op: 'compact'; sessionId: string }
  | { op: 'erase'; sessionId: string }
  | { op: 'page'; limit: number };

const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ op: fc.constant('append' as const), sessionId: fc.constantFrom(...SESSIONS), events: fc.integer({ min: 1, max: 3 }) }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('compact' as const), sessionId: fc.constantFrom(...SESSIONS) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('erase' as const), sessionId: fc.constantFrom(...SESSIONS) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('page' as const), limit: fc.integer({ min: 1, max: 2 }) }) },
  ),
  { minLength: 8, maxLength: 40 },
);

/** A replica following `store` live (its projector running) with its write handlers. */
function liveReplica(store: SqliteEventStore) {
  const projector = new SessionProjector(ReadModelStore.open(':memory:'));
  projector.start(store);
  const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
  const compact = new CompactSessionHandler(store, new SessionStateCache(store), new ExtractiveSummarizer());
  const erase = new EraseSessionHandler(store, new SessionStateCache(store), projector);
  let n = 0;
  return {
    projector,
    reads: historyReads(store, projector, 5000),
    async run(op: Exclude<Op, { op: 'page' }>): Promise<void> {
      const say = (count: number) =>
        append.execute(
          new AppendSessionEventsCommand(
            TENANT,
            op.sessionId,
            Array.from({ length: count }, () => ({ event: { id: `e${++n}`, type: 'user' as const, text: `turn ${n} of ${op.sessionId}` } })),
          ),
        );
      if (op.op === 'append') await say(op.events);
      else if (op.op === 'compact') {
        // Two more events: the window holds more than the one the strategy keeps, so the pass records a decision.
        await say(2);
        const strategy = parseStrategy({ type: 'sliding-window', maxEvents: 1 });
        await compact.execute(new CompactSessionCommand(TENANT, op.sessionId, strategy, null, 'chars', false)).catch((error: unknown) => {
          if (!(error instanceof SessionNotFoundError)) throw error;
        });
      } else {
        await erase.execute(new EraseSessionCommand(TENANT, op.sessionId)).catch((error: unknown) => {
          if (!(error instanceof SessionNotFoundError)) throw error;
        });
      }
      expect(await projector.waitForPosition(await store.headPosition(), 5000)).toBe(true);
    },
  };
}

/** Pages every list of `reads` to its end at page size `limit`: the reads that carried a cursor. */
async function pagedWithCursors(reads: SessionHistoryReads, limit: number): Promise<ListRead[]> {
  const firsts: ListRead[] = [
    { list: 'sessions', limit },
    { list: 'erasures', limit },
    ...SESSIONS.map((sessionId) => ({ list: 'compactions' as const, sessionId, limit })),
  ];
  const followed: ListRead[] = [];
  for (const first of firsts) {
    let read: ListRead | undefined = first;
    while (read) {
      const answered = await answer(reads, read);
      if ((answered as { error?: string }).error !== undefined) {
        // Only a compaction history of a session with no event now has no page.
        expect({ read, answered }).toMatchObject({ read, answered: { code: 'session_not_found' } });
        break;
      }
      const { nextCursor } = answered as { nextCursor?: string };
      read = nextCursor === undefined ? undefined : { ...first, cursor: nextCursor };
      if (read) followed.push(read);
    }
  }
  return followed;
}

describe('list cursors: every cursor a page gives is followed, one past the end is refused', () => {
  let store: SqliteEventStore;
  let live: ReturnType<typeof liveReplica>;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    live = liveReplica(store);
  });
  afterEach(async () => {
    await live.projector.stop();
    await store.close();
  });
  /** Each run of a property on a log of its own: the last run's replica stopped, a new empty log and live replica. */
  const freshLog = async () => {
    await live.projector.stop();
    await store.close();
    store = SqliteEventStore.open(':memory:');
    live = liveReplica(store);
  };

  /** Runs `history` on the live replica, paging every list wherever it says: the reads with a cursor the pages gave. */
  async function cursorsOf(history: Op[]): Promise<ListRead[]> {
    const followed: ListRead[] = [];
    for (const op of history) {
      if (op.op === 'page') followed.push(...(await pagedWithCursors(live.reads, op.limit)));
      else await live.run(op);
    }
    followed.push(...(await pagedWithCursors(live.reads, 1)));
    return followed;
  }

  /** A replica whose read models hold the log up to `cut` (its projector not running: `catchUp` applies the rest). */
  async function behindReplica(cut: bigint) {
    const events = await store.readAll({ maxCount: 1_000_000 });
    const projector = new SessionProjector(ReadModelStore.open(':memory:'));
    projector.applyBatch(events.filter((e) => e.position <= cut));
    return {
      reads: historyReads(store, projector, 5000),
      /** Whether these read models hold what `read`'s cursor names: its position (sessions, erasures), its session at its revision (compactions). */
      holds(read: ListRead): boolean {
        const key = BigInt(cursorJson(read.cursor!).k as string);
        if (read.list !== 'compactions') return projector.checkpoint() >= key;
        const session = findSession(projector.store, TENANT, read.sessionId!);
        return session !== null && session.revision >= key;
      },
      /** Applies the rest of the log (once). */
      catchUp: () => {
        if (projector.checkpoint() < (events.at(-1)?.position ?? 0n)) projector.applyBatch(events.filter((e) => e.position > projector.checkpoint()));
      },
      close: () => projector.store.close(),
    };
  }

  it('given arbitrary histories, then every cursor a page gave is accepted by its replica after every later write, and a replica behind it waits for what it names, then answers the same page', async () => {
    await fc.assert(
      fc
        .asyncProperty(ops, fc.integer({ min: 0, max: 1000 }), async (history, cutAt) => {
          const followed = await cursorsOf(history);
          const head = await store.headPosition();
          const cut = (head * BigInt(cutAt)) / 1000n;
          for (const read of followed) {
            const made = (await answer(live.reads, read)) as { code?: string };
            // A compaction history whose session was erased since answers 404; any other answer is a page.
            if (made.code !== undefined) expect({ read, made }).toMatchObject({ read, made: { code: 'session_not_found' } });
            const behind = await behindReplica(cut);
            let settled = false;
            const answered = answer(behind.reads, read).finally(() => (settled = true));
            try {
              await new Promise((resolve) => setTimeout(resolve, 1));
              if (settled) {
                // Answered without waiting: from read models that hold what the cursor names (before the fix, also from
                // read models that did not: a page without what the replica that made it had), or the 404 of a session the log no longer holds.
                const early = (await answered) as { code?: string };
                expect({ read, cut, early, holds: early.code === 'session_not_found' || behind.holds(read) }).toEqual({ read, cut, early, holds: true });
                expect({ read, cut, early }).not.toMatchObject({ early: { code: 'invalid_query' } });
              } else {
                behind.catchUp();
                const late = (await answered) as { code?: string };
                if (made.code !== undefined) expect({ read, cut, code: late.code }).toEqual({ read, cut, code: made.code });
                else expect({ read, cut, answer: late }).toEqual({ read, cut, answer: made });
              }
            } finally {
              behind.catchUp();
              await answered;
              behind.close();
            }
          }
        })
        .beforeEach(freshLog),
      { numRuns: RUNS },
    );
  });

  it('given arbitrary histories, then a cursor of each list past the end (the log’s head, the session’s last revision) is refused with invalid_query, on an up-to-date and on a lagging replica', async () => {
    // How far past the end each forged key is: 0 for 2^63 − 1 (the largest key a cursor may hold), else that many past it.
    const offsets = fc.array(fc.oneof(fc.constant(1n), fc.constant(0n), fc.bigInt({ min: 1n, max: 2n ** 62n })), { minLength: 5, maxLength: 5 });
    const beyond = (end: bigint, offset: bigint) => (offset === 0n ? MAX_REVISION : end + offset);
    await fc.assert(
      fc
        .asyncProperty(ops, fc.integer({ min: 0, max: 1000 }), offsets, async (history, cutAt, pastEnd) => {
          const offsetsLeft = [...pastEnd];
          await cursorsOf(history);
          const head = await store.headPosition();
          const forged: Array<{ read: ListRead; message: string }> = [];
          for (const list of ['sessions', 'erasures'] as const) {
            const key = beyond(head, offsetsLeft.pop()!);
            forged.push({
              read: { list, limit: 1, cursor: encodeKeysetCursor(list, key) },
              message: `cursor: is not a cursor this service made: its last position ${key} is past the end of this service's log (${head}); list again without cursor (the first page) and pass its nextCursor unchanged`,
            });
          }
          for (const sessionId of SESSIONS) {
            const last = await store.streamRevision(sessionStream(sessionKey(TENANT, sessionId)));
            if (last === null) continue;
            const key = beyond(last, offsetsLeft.pop()!);
            forged.push({
              read: { list: 'compactions', sessionId, limit: 1, cursor: encodeKeysetCursor('compactions', key, sessionId) },
              message: `cursor: is not a cursor this service made: its last revision ${key} is past the session's last revision (${last}); list again without cursor (the first page) and pass its nextCursor unchanged`,
            });
          }
          const behind = await behindReplica((head * BigInt(cutAt)) / 1000n);
          try {
            for (const { read, message } of forged) {
              const refusal = { error: InvalidQueryError.name, code: 'invalid_query', message };
              expect({ read, answer: await answer(live.reads, read) }).toEqual({ read, answer: refusal });
              expect({ read, answer: await answer(behind.reads, read) }).toEqual({ read, answer: refusal });
            }
            expect(await store.headPosition()).toBe(head);
          } finally {
            behind.close();
          }
        })
        .beforeEach(freshLog),
      { numRuns: RUNS },
    );
  });
});
