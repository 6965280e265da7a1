/**
 * A replica's reads during a store outage (newcomer ncfleet54, F1): a read sent without
 * `minPosition` waits for this process's acknowledged writes, and with PostgreSQL down the
 * projector cannot apply the last of them; every read of every session then waited out
 * `maxWaitMs` and answered 503 `projection_behind` for the whole outage, although the README says
 * reads keep working while the store is down. While the projector cannot follow the log, a read
 * waits only for the acknowledged writes it shows (its session, its tenant's erasures), as while
 * the read models' disk is full: other sessions are served from the read models.
 */
import type { EventBus } from '@nestjs/cqrs';
import { EventStoreUnavailableError, SqliteEventStore, type EventStore, type RecordedEvent, type Subscription } from '@lib/event-store';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { AcknowledgedPositions, recordingAcknowledgedPositions } from '../write-side/acknowledged-positions';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from '../write-side/append-session-events';
import { SessionStateCache } from '../write-side/session-state-cache';
import { DEFAULT_SESSION_SETTINGS } from '../write-side/auto-compaction';
import { SessionReads } from './session-reads';

/** `store` as the projector sees it: `down()` fails its subscription and head reads (the store stops answering it), `up()` ends that. */
function outage(store: EventStore): { seen: EventStore; down: () => void; up: () => void } {
  let failed: Promise<never> | null = null;
  let fail: (err: Error) => void = () => undefined;
  const seen: EventStore = Object.assign(Object.create(store) as EventStore, {
    headPosition: () => (failed ? failed : store.headPosition()),
    subscribeToAll: (options?: Parameters<EventStore['subscribeToAll']>[0]): Subscription => {
      const inner = store.subscribeToAll(options);
      return {
        close: () => inner.close(),
        async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
          const events = inner[Symbol.asyncIterator]();
          for (;;) {
            if (failed) await failed;
            const next = await Promise.race([events.next(), new Promise<never>((_, reject) => (fail = reject))]);
            if (next.done) return;
            yield next.value;
          }
        },
      };
    },
  });
  return {
    seen,
    down: () => {
      const err = new EventStoreUnavailableError('connect ECONNREFUSED 127.0.0.1:5432');
      failed = Promise.reject(err);
      failed.catch(() => undefined);
      fail(err);
    },
    up: () => (failed = null),
  };
}

describe('reads while the projector cannot follow the log (the store is down)', () => {
  const window = (reads: SessionReads, sessionId: string) => reads.window('t', sessionId, { format: 'events', estimator: 'chars' });

  it("given this replica's last acknowledged write unprojected, then other sessions are served at once, and that session's read answers 503 projection_behind", async () => {
    const store = SqliteEventStore.open(':memory:');
    const positions = new AcknowledgedPositions();
    const writes = recordingAcknowledgedPositions(store, positions);
    const append = new AppendSessionEventsHandler(writes, new SessionStateCache(writes), { publish: () => undefined } as unknown as EventBus);
    const { seen, down, up } = outage(store);
    const projector = new SessionProjector(ReadModelStore.open(':memory:'), { retryDelayMs: 20, maxRetryDelayMs: 50 });
    projector.start(seen);
    const reads = new SessionReads(seen, projector.store, projector, { ...DEFAULT_SESSION_SETTINGS, maxWaitMs: 400 }, positions);
    try {
      await append.execute(new AppendSessionEventsCommand('t', 'a', [{ event: { id: 'a1', type: 'user', text: 'served' } }]));
      await expect(window(reads, 'a')).resolves.toMatchObject({ revision: '0' });
      down();
      for (let i = 0; i < 100 && projector.state().lastError === null; i++) await new Promise((r) => setTimeout(r, 10));
      expect(projector.state().lastError).toMatch(/ECONNREFUSED/);
      // acknowledged just before the projector could read it
      const { position } = await append.execute(new AppendSessionEventsCommand('t', 'b', [{ event: { id: 'b1', type: 'user', text: 'unprojected' } }]));
      expect(projector.checkpoint()).toBeLessThan(BigInt(position));

      await expect(window(reads, 'a')).resolves.toMatchObject({ sessionId: 'a', revision: '0' });
      await expect(reads.recall({ tenantId: 't', sessionId: 'a', q: 'served', limit: 5 })).resolves.toMatchObject({ items: [{ eventId: 'a1' }] });
      await expect(reads.recall({ tenantId: 'other', q: 'served', limit: 5 })).resolves.toMatchObject({ items: [] });
      // a tenant-wide read of the tenant shows session b: it waits for b's write
      expect(await reads.recall({ tenantId: 't', q: 'served', limit: 5 }).catch((e: unknown) => e)).toMatchObject({ code: 'projection_behind' });
      const refused = await window(reads, 'b').catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'projection_behind' });

      up();
      expect(await projector.waitForPosition(BigInt(position), 5000)).toBe(true);
      await expect(window(reads, 'b')).resolves.toMatchObject({ sessionId: 'b', revision: '0' });
    } finally {
      await projector.stop();
      await store.close();
    }
  });
});
