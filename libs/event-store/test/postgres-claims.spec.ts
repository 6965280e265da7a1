import { Client } from 'pg';
import { PostgresEventStore } from '../src/postgres';
import { claimLockKey } from '../src/postgres/postgres-claims';
import { EventStoreUnavailableError } from '../src';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from './postgres-test-database';
import { claimsContract } from './claims.contract';

const skipReason = postgresUnavailableReason();

describeUnlessSkipped(skipReason, 'PostgreSQL claims (tryClaim): at most one process holds a name, never a process that is gone', () => {
  let db: TestDatabase;
  let a: PostgresEventStore;
  let b: PostgresEventStore;
  let admin: Client;
  beforeAll(async () => {
    db = await createTestDatabase('es_claims');
    admin = new Client({ connectionString: db.url });
    await admin.connect();
  });
  beforeEach(() => {
    // two stores: two processes' connections, as two replicas have
    a = PostgresEventStore.connect(db.url);
    b = PostgresEventStore.connect(db.url);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });
  afterAll(async () => {
    await admin.end();
    await db.drop();
  });

  // the store-agnostic part (also run for SQLite: sqlite-claims.spec.ts)
  claimsContract('PostgreSQL', { target: () => db.url, open: () => PostgresEventStore.connect(db.url) });

  it('drops the claims of a connection the server ended, and claims again on a new connection', async () => {
    expect(await a.tryClaim('auto-compaction s3')).not.toBeNull();
    expect(await b.tryClaim('auto-compaction s3')).toBeNull();
    // the holder's dedicated connection dies (a crashed replica, a restarted server, a dropped network)
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'session-memory-compaction claims' AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory')",
    );
    let got = null;
    for (let i = 0; i < 50 && !got; i++) got = await b.tryClaim('auto-compaction s3');
    expect(got).not.toBeNull();
    // the store whose connection died claims again on a new one (after at most one refused attempt)
    const again = await a.tryClaim('auto-compaction s4').catch((err: unknown) => err);
    const retried = again instanceof EventStoreUnavailableError ? await a.tryClaim('auto-compaction s4') : again;
    expect(retried).not.toBeNull();
  });

  it('takes no connection of the pool, and answers EventStoreUnavailableError when the server cannot be reached', async () => {
    await a.tryClaim('auto-compaction s5');
    expect(a.poolConnections().total).toBe(0);
    const unreachable = PostgresEventStore.connect('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMs: 500 });
    await expect(unreachable.tryClaim('x')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    await unreachable.close();
  });

  it('never sends a statement on its dedicated connection while another one runs there (claims and releases asked together)', async () => {
    // node-postgres queues a second query on a busy client, deprecated and gone in pg 9 ("client.query() called when the client is already executing a query")
    const original = Reflect.get(Client.prototype, 'query') as (...args: unknown[]) => unknown;
    const running = new Map<Client, number>();
    let most = 0;
    const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
      const result = original.apply(this, args);
      if (!(result instanceof Promise)) return result as never;
      running.set(this, (running.get(this) ?? 0) + 1);
      most = Math.max(most, running.get(this)!);
      return result.finally(() => running.set(this, running.get(this)! - 1)) as never;
    });
    try {
      const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => a.tryClaim(`auto-compaction many ${i}`)));
      expect(claims.every((c) => c !== null)).toBe(true);
      await Promise.all([...claims.map((c) => c!.release()), ...Array.from({ length: 4 }, (_, i) => a.tryClaim(`auto-compaction more ${i}`))]);
    } finally {
      spy.mockRestore();
    }
    expect(most).toBe(1);
  });

  it('derives a signed 64-bit key per name (pure, stable)', () => {
    expect(claimLockKey('a')).toBe(claimLockKey('a'));
    expect(claimLockKey('a')).not.toBe(claimLockKey('b'));
    const key = BigInt(claimLockKey('auto-compaction ["default","s"]'));
    expect(key >= -(2n ** 63n) && key < 2n ** 63n).toBe(true);
  });
});
