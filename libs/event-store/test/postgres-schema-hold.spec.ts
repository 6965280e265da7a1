/**
 * `PostgresEventStore.holdSchemaCreation` (newcomer ncpg73 F3): while held, a database without the store's tables
 * reads as an empty log (head 0n) and nothing is created in it, so a start refused by its checks leaves it as found;
 * released, the next operation sets it up. And the setup refuses events past `es_head` (a `pg_restore` that collided
 * with a schema created before it) with EventStoreHeadBehindError, changing nothing. Against a database of its own.
 */
import { EventStoreHeadBehindError, EventStoreUnavailableError } from '../src/errors';
import { PostgresEventStore } from '../src/postgres/postgres-event-store';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, runSql, type TestDatabase } from './postgres-test-database';

const tables = async (url: string) =>
  (await runSql<{ t: string }>(url, "SELECT tablename AS t FROM pg_tables WHERE tablename LIKE 'es\\_%' ORDER BY 1")).map((r) => r.t);

describeUnlessSkipped(postgresUnavailableReason(), 'PostgreSQL schema creation held, and events past the head', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase('schema_hold');
  });
  afterEach(() => db.drop());

  it('held: a new database reads as an empty log and is left as found; released: set up', async () => {
    const store = PostgresEventStore.connect(db.url);
    try {
      store.holdSchemaCreation();
      expect(await store.headPosition()).toBe(0n);
      await expect(store.appendToStream('s', [{ id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} }])).rejects.toBeInstanceOf(
        EventStoreUnavailableError,
      );
      expect(await tables(db.url)).toEqual([]);
      store.releaseSchemaCreation();
      await store.appendToStream('s', [{ id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} }]);
      expect(await store.headPosition()).toBe(1n);
      expect(await tables(db.url)).toEqual(['es_events', 'es_head', 'es_schema', 'es_streams']);
    } finally {
      await store.close();
    }
  });

  it('refuses events past es_head (a collided restore) before changing anything', async () => {
    const first = PostgresEventStore.connect(db.url);
    for (const n of [1, 2, 3]) await first.appendToStream('s', [{ id: `3f1c1a8e-0000-4000-8000-00000000000${n}`, type: 'T', data: {} }]);
    await first.close();
    await runSql(db.url, 'UPDATE es_head SET position = 0');
    const store = PostgresEventStore.connect(db.url);
    try {
      const refused = await store.headPosition().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(EventStoreHeadBehindError);
      expect(refused).toMatchObject({ head: 0n, last: 3n });
      expect(await runSql(db.url, 'SELECT position::text AS p FROM es_head')).toEqual([{ p: '0' }]);
    } finally {
      await store.close();
    }
  });
});
