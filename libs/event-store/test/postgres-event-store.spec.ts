import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { EventData } from '../src';
import { PostgresEventStore } from '../src/postgres';
import { eventStoreContract } from './event-store.contract';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from './postgres-test-database';

const skipReason = postgresUnavailableReason();
const ev = (data: unknown = {}, id = randomUUID()): EventData => ({ id, type: 'T', data });

describeUnlessSkipped(skipReason, 'runs the contract against PostgreSQL', () => {
  let db: TestDatabase;
  eventStoreContract('PostgreSQL', {
    async setup() {
      db = await createTestDatabase('es_contract');
      return PostgresEventStore.connect(db.url, { pollIntervalMs: 25 });
    },
    teardown: () => db.drop(),
  });

  describe('PostgresEventStore specifics', () => {
    let own: TestDatabase;
    let store: PostgresEventStore;
    beforeAll(async () => {
      own = await createTestDatabase('es_pg');
      store = PostgresEventStore.connect(own.url, { pollIntervalMs: 25 });
    });
    afterAll(async () => {
      await store.close();
      await own.drop();
    });

    it('probeWrite resolves while the server takes writes, writing nothing, and fails as an append does where writes are refused (read-only transactions)', async () => {
      await store.appendToStream('session-probe', [ev()]);
      const head = await store.headPosition();
      await expect(store.probeWrite()).resolves.toBeUndefined();
      expect(await store.headPosition()).toBe(head);
      // Every transaction read-only, as on a standby or with default_transaction_read_only (SQLSTATE 25006).
      const url = new URL(own.url);
      url.searchParams.set('options', '-c default_transaction_read_only=on');
      const readOnly = PostgresEventStore.connect(url.toString());
      try {
        expect(await readOnly.headPosition()).toBe(head);
        await expect(readOnly.appendToStream('session-probe', [ev()])).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
        await expect(readOnly.probeWrite()).rejects.toMatchObject({ name: 'EventStoreUnavailableError', cause: { code: '25006' } });
      } finally {
        await readOnly.close();
      }
    });

    it('creates its schema once even when several stores open the same empty database together', async () => {
      const fresh = await createTestDatabase('es_schema');
      const stores = [0, 1, 2, 3].map(() => PostgresEventStore.connect(fresh.url));
      try {
        const results = await Promise.all(stores.map((s, i) => s.appendToStream(`session-${i}`, [ev({ i })])));
        expect(results.map((r) => r.nextExpectedRevision)).toEqual([0n, 0n, 0n, 0n]);
        expect(new Set(results.map((r) => r.position)).size).toBe(4);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await fresh.drop();
      }
    });

    it('concurrent appends: every stream stays gapless and global positions are contiguous in commit order', async () => {
      const streams = ['session-c1', 'session-c2', 'session-c3'];
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => store.appendToStream(streams[i % 3], [ev({ i }), ev({ i, second: true })])));
      for (const s of streams) {
        const events = await store.readStream(s);
        expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => BigInt(i)));
      }
      const all = await store.readAll({ maxCount: 10_000 });
      for (let i = 1; i < all.length; i++) expect(all[i].position).toBe(all[i - 1].position + 1n);
      expect(new Set(results.map((r) => r.position)).size).toBe(60);
    });

    it('the same new stream created by two appends at once: one wins, the other gets the typed error', async () => {
      const outcomes = await Promise.allSettled([
        store.appendToStream('session-new', [ev({ a: 1 })], { expectedRevision: 'no_stream' }),
        store.appendToStream('session-new', [ev({ b: 1 })], { expectedRevision: 'no_stream' }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: { name: 'WrongExpectedRevisionError', actual: 0n } });
      expect(await store.readStream('session-new')).toHaveLength(1);
    });

    it('a deletion racing appends that start the stream again never leaves a revision without its events, nor deletes an event written after it', async () => {
      const other = PostgresEventStore.connect(own.url);
      try {
        for (let round = 0; round < 40; round++) {
          const s = `session-again-${round}`;
          await store.appendToStream(s, [ev(), ev(), ev()]);
          const append = (st: PostgresEventStore) => st.appendToStream(s, [ev()]);
          await Promise.all([store.deleteStream(s), other.deleteStream(s), append(other), append(store), append(other)]);
          const events = await store.readStream(s);
          // The revision row matches the events, which are gapless from the first one of the new
          // start (no event of a new start deleted under it), after the deleted revisions.
          const first = events.length > 0 ? events[0].revision : 0n;
          expect({ round, revision: await store.streamRevision(s), revisions: events.map((e) => e.revision) }).toEqual({
            round,
            revision: events.length > 0 ? events[events.length - 1].revision : null,
            revisions: events.map((_e, i) => first + BigInt(i)),
          });
          if (events.length > 0) expect(first).toBeGreaterThanOrEqual(3n);
        }
      } finally {
        await other.close();
      }
    });

    it('erasure is a hard delete: no row of the stream is left in the tables; positions are not reused', async () => {
      const r = await store.appendToStream('session-erase', [ev({ secret: 'RESIDUE' }), ev()]);
      await store.deleteStream('session-erase');
      const client = new Client({ connectionString: own.url });
      await client.connect();
      try {
        const { rows } = await client.query("SELECT count(*)::int AS n FROM es_events WHERE stream = 'session-erase' OR data LIKE '%RESIDUE%'");
        expect(rows[0].n).toBe(0);
        // Only the stream's name and last revision stay (revisions are never reused), marked deleted.
        expect((await client.query("SELECT revision::int AS revision, deleted FROM es_streams WHERE stream = 'session-erase'")).rows).toEqual([
          { revision: 1, deleted: true },
        ]);
      } finally {
        await client.end();
      }
      expect(await store.headPosition()).toBeGreaterThanOrEqual(r.position);
      const again = await store.appendToStream('session-erase', [ev()], { expectedRevision: 'no_stream' });
      expect(again.nextExpectedRevision).toBe(2n);
      expect(again.position).toBeGreaterThan(r.position);
    });

    it('an unreachable server gives EventStoreUnavailableError on every call', async () => {
      const down = PostgresEventStore.connect('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMs: 1000 });
      try {
        await expect(down.appendToStream('session-x', [ev()])).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
        await expect(down.readAll()).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
        await expect(down.streamRevision('session-x')).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
      } finally {
        await down.close();
      }
    });

    it('a server that takes no writes (a standby during failover: SQLSTATE 25006) gives EventStoreUnavailableError, and reads still work', async () => {
      await store.appendToStream('session-ro', [ev({ n: 1 })]);
      const readOnlyUrl = `${own.url}${own.url.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c default_transaction_read_only=on')}`;
      const standby = PostgresEventStore.connect(readOnlyUrl);
      try {
        await expect(standby.appendToStream('session-ro', [ev({ n: 2 })])).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
        expect(await standby.readStream('session-ro')).toHaveLength(1);
      } finally {
        await standby.close();
      }
    });
  });
});
