/**
 * A recall cursor made by one replica and followed on another whose read models are behind the
 * cursor's first page: the pages hold the hits up to the position that first page was answered
 * at, so the replica waits for them (as for a `minPosition`) instead of answering from read
 * models that lack some (the client would never see those hits: a short or empty page).
 */
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { AcknowledgedPositions } from '../write-side/acknowledged-positions';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from '../write-side/append-session-events';
import { SessionStateCache } from '../write-side/session-state-cache';
import { DEFAULT_SESSION_SETTINGS } from '../write-side/auto-compaction';
import { SessionReads } from './session-reads';

describe('a recall cursor followed on a replica behind its first page', () => {
  let store: SqliteEventStore;
  beforeEach(async () => {
    store = SqliteEventStore.open(':memory:');
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus);
    for (let i = 1; i <= 6; i++)
      await append.execute(new AppendSessionEventsCommand('t', 'rc', [{ event: { id: `e${i}`, type: 'user', text: `zqword ${'filler '.repeat(i)}` } }]));
  });
  afterEach(async () => {
    await store.close();
  });

  /** A replica whose projector is not running: its read models hold what `applyBatch` gave them. */
  const replica = (maxWaitMs: number) => {
    const projector = new SessionProjector(ReadModelStore.open(':memory:'));
    const reads = new SessionReads(store, projector.store, projector, { ...DEFAULT_SESSION_SETTINGS, maxWaitMs }, new AcknowledgedPositions());
    return { projector, reads };
  };
  type Page = { items: Array<{ eventId: string }>; nextCursor?: string };
  const ids = (page: unknown) => (page as Page).items.map((h) => h.eventId);

  it('given the first page on an up-to-date replica, when the next page is asked of one that catches up meanwhile, then it waits and answers e4 e5 e6', async () => {
    const events = await store.readAll();
    const a = replica(1000);
    a.projector.applyBatch(events);
    const first = (await a.reads.recall({ tenantId: 't', q: 'zqword', limit: 3 })) as Page;
    expect(ids(first)).toEqual(['e1', 'e2', 'e3']);
    const b = replica(5000);
    b.projector.applyBatch(events.slice(0, 3));
    const second = b.reads.recall({ tenantId: 't', q: 'zqword', limit: 3, cursor: first.nextCursor });
    setTimeout(() => b.projector.applyBatch(events), 50);
    expect(ids(await second)).toEqual(['e4', 'e5', 'e6']);
  });

  it('given a replica that stays behind, when the next page is asked of it, then it answers 503 projection_behind, not a page without the hits it lacks', async () => {
    const events = await store.readAll();
    const a = replica(1000);
    a.projector.applyBatch(events);
    const first = (await a.reads.recall({ tenantId: 't', q: 'zqword', limit: 3 })) as Page;
    const b = replica(100);
    b.projector.applyBatch(events.slice(0, 3));
    await expect(b.reads.recall({ tenantId: 't', q: 'zqword', limit: 3, cursor: first.nextCursor })).rejects.toMatchObject({ code: 'projection_behind' });
  });

  it('given a cursor made past the end of the log, then it answers 400 invalid_query naming cursor', async () => {
    const b = replica(100);
    const cursor = Buffer.from(JSON.stringify({ v: 2, f: 'x', o: 'newest', a: '1000000', p: '5' })).toString('base64url');
    await expect(b.reads.recall({ tenantId: 't', q: 'zqword', cursor })).rejects.toMatchObject({
      code: 'invalid_query',
      parameter: 'cursor',
      message:
        "cursor: is not a cursor this service made: its paging's position 1000000 is past the end of this service's log (6); search again without cursor (the first page) and pass its nextCursor unchanged",
    });
  });
});
