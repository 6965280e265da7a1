/**
 * A PostgreSQL database where another application already has a table of one of the service's
 * names (newcomer ncmigrate F4: its own `es_events(id serial, payload jsonb)`): the service started,
 * `/health` said unavailable, and every write answered 500. The store refuses such a database when
 * it sets up its schema, naming the table and what differs, before creating or changing anything.
 */
import { Client } from 'pg';
import { EventStoreSchemaMismatchError } from '../src/errors';
import { PostgresEventStore } from '../src/postgres/postgres-event-store';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason } from './postgres-test-database';

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describeUnlessSkipped(postgresUnavailableReason(), 'PostgreSQL event store on a database with another application’s tables', () => {
  it('given another application’s es_events, reads and appends are refused naming the table and the missing column, and nothing is created or changed', async () => {
    const db = await createTestDatabase('foreign');
    await query(db.url, `CREATE TABLE es_events (id serial PRIMARY KEY, payload jsonb); INSERT INTO es_events (payload) VALUES ('{"theirs": 1}')`);
    const store = PostgresEventStore.connect(db.url);
    try {
      const read = await store.headPosition().catch((err: unknown) => err);
      expect(read).toBeInstanceOf(EventStoreSchemaMismatchError);
      expect((read as EventStoreSchemaMismatchError).table).toBe('es_events');
      expect((read as Error).message).toBe(
        "the table es_events in the database is not this service's: it has no column position (bigint); its columns are id, payload (another application's table of the same name?)",
      );
      const append = await store
        .appendToStream('s', [{ id: '00000000-0000-4000-8000-000000000001', type: 'Test', data: {} }], { expectedRevision: 'no_stream' })
        .catch((err: unknown) => err);
      expect(append).toBeInstanceOf(EventStoreSchemaMismatchError);
      expect(await query(db.url, "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).toEqual([{ name: 'es_events' }]);
      expect(await query(db.url, 'SELECT payload FROM es_events')).toEqual([{ payload: { theirs: 1 } }]);
    } finally {
      await store.close();
      await db.drop();
    }
  });

  it('given a column of another type (es_head.position text), it is refused naming it; unrelated tables are left alone and do not matter', async () => {
    const db = await createTestDatabase('foreign');
    await query(db.url, 'CREATE TABLE users (id int PRIMARY KEY); CREATE TABLE es_head (one boolean PRIMARY KEY, position text)');
    const store = PostgresEventStore.connect(db.url);
    try {
      const read = await store.headPosition().catch((err: unknown) => err);
      expect((read as Error).message).toBe(
        "the table es_head in the database is not this service's: its column position is text, not bigint (another application's table of the same name?)",
      );
    } finally {
      await store.close();
      await db.drop();
    }
  });

  it('given the service’s own tables of an older schema (es_streams without deleted), it starts and adds the column', async () => {
    const db = await createTestDatabase('foreign');
    const first = PostgresEventStore.connect(db.url);
    await first.appendToStream('s', [{ id: '00000000-0000-4000-8000-000000000002', type: 'Test', data: {} }], { expectedRevision: 'no_stream' });
    await first.close();
    await query(db.url, 'ALTER TABLE es_streams DROP COLUMN deleted; DROP TABLE es_schema');
    const store = PostgresEventStore.connect(db.url);
    try {
      expect(await store.headPosition()).toBe(1n);
      expect(await query(db.url, "SELECT 1 AS present FROM information_schema.columns WHERE table_name = 'es_streams' AND column_name = 'deleted'")).toEqual([
        { present: 1 },
      ]);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
