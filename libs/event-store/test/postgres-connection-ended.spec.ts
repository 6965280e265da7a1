/**
 * A pooled connection the server ends while it is checked out but between two statements (PostgreSQL stopping,
 * `pg_terminate_backend`, an administrator) must not end the process: pg's client emits `error` then, and pg-pool
 * listens only while a connection is idle. Before, a service on PostgreSQL died with "Unhandled 'error' event"
 * when its server was stopped (CI, nats-postgres-outage and postgres-outage slow specs).
 */
import { randomUUID } from 'node:crypto';
import { Client, type Pool, type PoolClient } from 'pg';
import { PostgresEventStore } from '../src/postgres';
import { isClosedBeforePostgresAnswer } from '../src/postgres/postgres-errors';
import type { PoolCheckouts } from '../src/postgres/pool-checkouts';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from './postgres-test-database';

jest.setTimeout(30_000);

describeUnlessSkipped(postgresUnavailableReason(), 'PostgreSQL: a pooled connection ended by the server while checked out', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  const id = randomUUID();
  beforeAll(async () => {
    db = await createTestDatabase('es_conn_ended');
    store = PostgresEventStore.connect(db.url);
    await store.appendToStream('s', [{ id, type: 'T', data: {} }]);
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('given connections checked out with no statement running, when the server terminates them, then no uncaught error, and the store serves the next read', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    // The store's own pool (not public: this is what its reads and writes check out); three at once, so that
    // at least two are new connections, never used by the store's own code.
    const pool = (store as unknown as { pool: Pool }).pool;
    const held: PoolClient[] = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
    const pids = await Promise.all(held.map(async (c) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid));
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
      // ended: pg marks each connection not queryable once the server's message and the socket's end arrive
      for (let i = 0; i < 100 && held.some((c) => (c as unknown as { _queryable: boolean })._queryable); i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await admin.end();
      held.forEach((c) => c.release(true));
      process.removeListener('uncaughtException', onUncaught);
    }
    expect(held.map((c) => (c as unknown as { _queryable: boolean })._queryable)).toEqual([false, false, false]);
    expect(uncaught).toEqual([]);
    expect((await store.readStream('s')).map((e) => e.id)).toEqual([id]);
  });
  it('given a connection the store opened, when PostgreSQL ends it mid-session (pg_terminate_backend, a statement running), then its error is not taken for a server that is not PostgreSQL (ncoperator F2)', async () => {
    // Through the store's own checkouts, whose failures to connect are marked as such.
    const checkouts = (store as unknown as { checkouts: PoolCheckouts<PoolClient> }).checkouts;
    const client = await checkouts.checkout();
    client.on('error', () => undefined);
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const running = client.query('SELECT pg_sleep(10)').catch((e: unknown) => e);
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    try {
      await new Promise((r) => setTimeout(r, 100));
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const cut = await running;
      expect(cut).toBeInstanceOf(Error);
      expect(isClosedBeforePostgresAnswer(cut)).toBe(false);
      const next = await client.query('SELECT 1').catch((e: unknown) => e);
      expect(next).toBeInstanceOf(Error);
      expect(isClosedBeforePostgresAnswer(next)).toBe(false);
    } finally {
      await admin.end();
      client.release(true);
    }
  });
});
