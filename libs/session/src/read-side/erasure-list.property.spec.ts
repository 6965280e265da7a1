import fc from 'fast-check';
import type { RecordedEvent } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { dumpReadModels } from './read-model-dump';
import { listErasures, latestErasure, type ErasureRecordRow } from './queries/erasure-query';
import { SESSION_ERASED, erasureStream, type SessionErasedData } from '../events/erasure-events';

/**
 * The erasures read model (`GET /v1/erasures`): whatever erasure records the log holds, for
 * whichever tenants, sessions and lives,
 * - paging a tenant's list with any page size gives each of its records once, newest first, and
 *   nothing of another tenant;
 * - each row's `firstRevision` is the revision after the same session id's previous life's last (0
 *   for its first), `lastRevision` the record's, `requestedBy` the record's (null without one);
 * - the rows are the same when the records are applied again or in other batches (a rebuild).
 */

/** An erasure record of `tenant`'s stream at `position`. */
function record(tenant: string, position: bigint, data: SessionErasedData): RecordedEvent {
  return {
    streamId: erasureStream(tenant),
    revision: position,
    position,
    id: `e${position}`,
    type: SESSION_ERASED,
    data,
    metadata: {},
    created: new Date(Date.UTC(2026, 11, 3, 0, 0, Number(position))),
  };
}

/** Records of lives of sessions: per (tenant, session) each life ends past the one before. */
const records = fc
  .array(
    fc.record({
      tenant: fc.constantFrom('t1', 't2'),
      session: fc.constantFrom('a', 'b', 'c'),
      events: fc.integer({ min: 1, max: 5 }),
      requestedBy: fc.option(
        fc.record(
          {
            keyLabel: fc.constantFrom('API_KEYS#1', 'API_KEYS#2'),
            requestId: fc.string(),
            requestIdFrom: fc.constantFrom('client' as const, 'service' as const),
            via: fc.constant('http' as const),
          },
          { requiredKeys: ['via'] },
        ),
        { nil: undefined },
      ),
    }),
    { maxLength: 30 },
  )
  .map((lives) => {
    const lastOf = new Map<string, bigint>();
    return lives.map(({ tenant, session, events, requestedBy }, i) => {
      const key = `${tenant}/${session}`;
      const first = (lastOf.get(key) ?? -1n) + 1n;
      const last = first + BigInt(events) - 1n;
      lastOf.set(key, last);
      const data: SessionErasedData = {
        sessionId: session,
        erasedEvents: events,
        erasedAt: `2026-12-03T00:00:${String(i).padStart(2, '0')}.000Z`,
        lastRevision: String(last),
        ...(requestedBy === undefined ? {} : { requestedBy }),
      };
      return { tenant, first, event: record(tenant, BigInt(i + 1), data) };
    });
  });

const allPages = (store: ReadModelStore, tenantId: string, limit: number): ErasureRecordRow[] => {
  const rows: ErasureRecordRow[] = [];
  let cursor: string | undefined;
  do {
    const page = listErasures(store, { tenantId, limit, cursor });
    rows.push(...page.erasures);
    cursor = page.nextCursor;
  } while (cursor);
  return rows;
};

describe('erasures read model', () => {
  it('pages each tenant’s erasures once, newest first, with their lives, the same after a rebuild', () => {
    fc.assert(
      fc.property(records, fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 10 }), (lives, limit, batch) => {
        const store = ReadModelStore.open(':memory:');
        const projector = new SessionProjector(store);
        for (let i = 0; i < lives.length; i += batch) projector.applyBatch(lives.slice(i, i + batch).map((l) => l.event));
        for (const tenant of ['t1', 't2']) {
          const expected = lives
            .filter((l) => l.tenant === tenant)
            .reverse()
            .map(({ first, event }) => {
              const data = event.data as SessionErasedData;
              return {
                sessionId: data.sessionId,
                erasedAt: data.erasedAt,
                erasedEvents: data.erasedEvents,
                firstRevision: first,
                lastRevision: BigInt(data.lastRevision!),
                position: event.position,
                requestedBy: data.requestedBy ?? null,
              };
            });
          expect(allPages(store, tenant, limit)).toEqual(expected);
          for (const session of ['a', 'b', 'c'])
            expect(latestErasure(store, tenant, session)?.position ?? null).toBe(expected.find((e) => e.sessionId === session)?.position ?? null);
        }
        // Rebuilt from nothing, in one batch: the same rows.
        const rebuilt = ReadModelStore.open(':memory:');
        new SessionProjector(rebuilt).applyBatch(lives.map((l) => l.event));
        expect(dumpReadModels(rebuilt)).toEqual(dumpReadModels(store));
        store.close();
        rebuilt.close();
      }),
      { numRuns: 60 },
    );
  });
});
