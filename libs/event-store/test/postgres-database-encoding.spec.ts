/**
 * A PostgreSQL database whose encoding is not UTF8 cannot hold the service's text (newcomer
 * ncintl F12: on a LATIN1 database, appends of `€`, Japanese or emoji answered 500 "may be
 * retried", and every summarizing compaction failed on the summary's `…`). The store refuses such
 * a database when it sets up its schema, before creating anything in it.
 */
import { Client } from 'pg';
import { EventStoreDatabaseEncodingError } from '../src/errors';
import { PostgresEventStore } from '../src/postgres/postgres-event-store';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason } from './postgres-test-database';

async function tablesOf(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
    return rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

describeUnlessSkipped(postgresUnavailableReason(), 'PostgreSQL event store on a database whose encoding is not UTF8', () => {
  it.each(['LATIN1', 'SQL_ASCII'])('given a %s database, reads and appends are refused naming the encoding, and nothing is created in it', async (encoding) => {
    const db = await createTestDatabase('encoding', { encoding });
    const store = PostgresEventStore.connect(db.url);
    try {
      const read = await store.headPosition().catch((err: unknown) => err);
      expect(read).toBeInstanceOf(EventStoreDatabaseEncodingError);
      expect((read as Error).message).toBe(
        `the database's encoding is ${encoding}, not UTF8: the service stores Unicode text (any language, emoji), which ${encoding} cannot hold`,
      );
      const append = await store
        .appendToStream('s', [{ id: '00000000-0000-4000-8000-000000000001', type: 'Test', data: { text: '東京 €' } }], { expectedRevision: 'no_stream' })
        .catch((err: unknown) => err);
      expect(append).toBeInstanceOf(EventStoreDatabaseEncodingError);
      expect(await tablesOf(db.url)).toEqual([]);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
