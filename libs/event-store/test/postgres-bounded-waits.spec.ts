import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { EventData } from '../src';
import { PostgresEventStore } from '../src/postgres';
import { useStalledPostgresServer } from '../../../test/support/stalled-postgres-server';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from './postgres-test-database';

const skipReason = postgresUnavailableReason();
const ev = (): EventData => ({ id: randomUUID(), type: 'T', data: { n: 1 } });
const APP = 'session-memory-compaction';

/** `work` settled, or the string 'pending' when it has not after `ms` (the bound the test checks). */
async function within<T>(work: Promise<T>, ms: number): Promise<{ ok: T } | { error: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([
      work.then(
        (ok) => ({ ok }),
        (error: unknown) => ({ error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describeUnlessSkipped(skipReason, 'PostgreSQL: waits for locks and connections are bounded (F1, F2, F3, F4)', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  let locker: Client;
  beforeAll(async () => {
    db = await createTestDatabase('es_bounded');
    store = PostgresEventStore.connect(db.url, { statementTimeoutMs: 500 });
    await store.appendToStream('session-a', [ev()]);
    locker = new Client({ connectionString: db.url });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await store.close();
    await db.drop();
  });

  /** Runs `work` while `lockSql` is held by another connection's open transaction; rolls it back after. */
  async function whileLocked<T>(lockSql: string, work: () => Promise<T>): Promise<T> {
    await locker.query('BEGIN');
    await locker.query(lockSql);
    try {
      return await work();
    } finally {
      await locker.query('ROLLBACK');
    }
  }

  it.each([
    ['es_head row lock held by a maintenance transaction', 'SELECT * FROM es_head FOR UPDATE'],
    ['LOCK TABLE es_events ACCESS EXCLUSIVE (what VACUUM FULL takes)', 'LOCK TABLE es_events IN ACCESS EXCLUSIVE MODE'],
  ])('an append blocked by %s is answered EventStoreUnavailableError (55P03/57014) within the statement timeout; nothing written', async (_, lockSql) => {
    const head = await store.headPosition();
    const stream = `session-${randomUUID()}`;
    const outcome = await whileLocked(lockSql, () => within(store.appendToStream(stream, [ev()]), 5000));
    expect(outcome).not.toBe('pending');
    expect(outcome).toMatchObject({ error: { name: 'EventStoreUnavailableError', mayHaveBeenWritten: false } });
    expect(['55P03', '57014']).toContain((outcome as { error: { cause: { code: string } } }).error.cause.code);
    expect(await store.headPosition()).toBe(head);
    expect(await store.readStream(stream)).toHaveLength(0);
    // and once the lock is gone, writes go through on the same pool
    await expect(store.appendToStream(stream, [ev()])).resolves.toMatchObject({ nextExpectedRevision: 0n });
  });

  it('a write probe fails while another transaction holds es_head (as an append would), and succeeds once it is released', async () => {
    const outcome = await whileLocked('SELECT * FROM es_head FOR UPDATE', () => within(store.probeWrite(), 5000));
    expect(outcome).toMatchObject({ error: { name: 'EventStoreUnavailableError' } });
    const tableLocked = await whileLocked('LOCK TABLE es_events IN ACCESS EXCLUSIVE MODE', () => within(store.probeWrite(), 5000));
    expect(tableLocked).toMatchObject({ error: { name: 'EventStoreUnavailableError' } });
    await expect(store.probeWrite()).resolves.toBeUndefined();
  });

  it('each pooled connection has statement_timeout and lock_timeout of the configured value; 0 leaves the role settings', async () => {
    const settings = async (options: { statementTimeoutMs?: number }): Promise<unknown> => {
      const opened = PostgresEventStore.connect(db.url, options);
      try {
        // the store's own read path (private): what its pooled connections run under
        const rows = await (opened as unknown as { query<R>(sql: string): Promise<R[]> }).query<{ s: string; l: string }>(
          "SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l",
        );
        return rows[0];
      } finally {
        await opened.close();
      }
    };
    expect(await settings({ statementTimeoutMs: 1234 })).toEqual({ s: '1234ms', l: '1234ms' });
    expect(await settings({})).toEqual({ s: '30s', l: '30s' });
    await locker.query(`ALTER DATABASE ${db.name} SET statement_timeout = '7s'`);
    try {
      expect(await settings({ statementTimeoutMs: 0 })).toEqual({ s: '7s', l: '0' });
    } finally {
      await locker.query(`ALTER DATABASE ${db.name} RESET statement_timeout`);
    }
  });

  it('a store opens at most maxConnections connections under concurrent appends', async () => {
    const own = await createTestDatabase('es_poolsize');
    const small = PostgresEventStore.connect(own.url, { maxConnections: 2 });
    try {
      await Promise.all(Array.from({ length: 12 }, (_, i) => small.appendToStream(`session-${i}`, [ev()])));
      const { rows } = await locker.query<{ n: string }>('SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [
        own.name,
        APP,
      ]);
      expect(Number(rows[0].n)).toBeLessThanOrEqual(2);
      expect(Number(rows[0].n)).toBeGreaterThan(0);
    } finally {
      await small.close();
      await own.drop();
    }
  });

  it('poolConnections() tells the pool as it is: every connection busy and the appends waiting for one while es_head is locked, idle ones after', async () => {
    const small = PostgresEventStore.connect(db.url, { maxConnections: 2, statementTimeoutMs: 60_000, connectionTimeoutMs: 60_000 });
    // pg_stat_activity is read on a connection of its own, outside any transaction: within one (the
    // locker's, which holds es_head), PostgreSQL shows the activity of all sessions as it was at the
    // transaction's first read of it, so a connection reaching the lock later is never seen there.
    const observer = new Client({ connectionString: db.url });
    await observer.connect();
    let pending: Promise<unknown>[] = [];
    try {
      expect(small.poolConnections()).toEqual({ total: 0, idle: 0, waiting: 0 });
      await small.appendToStream(`session-${randomUUID()}`, [ev()]);
      expect(small.poolConnections()).toEqual({ total: 1, idle: 1, waiting: 0 });
      await whileLocked('SELECT * FROM es_head FOR UPDATE', async () => {
        pending = Array.from({ length: 5 }, () => small.appendToStream(`session-${randomUUID()}`, [ev()]));
        // Should an expectation below fail, the appends are awaited (settled) before the store closes,
        // so none settles after this test; a rejection is not an unhandled one meanwhile.
        for (const append of pending) append.catch(() => undefined);
        // Two appends hold both connections, waiting for the lock; the three others wait for a connection.
        // Opening a connection takes seconds on a loaded 2-core machine: the bound is generous.
        const deadline = Date.now() + 30_000;
        while (small.poolConnections().waiting < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(small.poolConnections()).toEqual({ total: 2, idle: 0, waiting: 3 });
        // Both connections are checked out now, but the second may still be opening or sending its
        // settings before it reaches the lock: wait (bounded) until the server shows both waiting on a
        // lock (the first on the locker's transaction, the second on the es_head row behind the first).
        // The main store's idle connection has the same database and application_name, and no lock wait.
        const lockWaiters = async (): Promise<number> => {
          const { rows } = await observer.query<{ n: string }>(
            "SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND wait_event_type = 'Lock'",
            [db.name, APP],
          );
          return Number(rows[0].n);
        };
        let waiters = await lockWaiters();
        while (waiters < 2 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          waiters = await lockWaiters();
        }
        expect(waiters).toBe(2);
        expect(small.poolConnections()).toEqual({ total: 2, idle: 0, waiting: 3 });
      });
      await Promise.all(pending);
      expect(small.poolConnections()).toEqual({ total: 2, idle: 2, waiting: 0 });
    } finally {
      // the lock is released (whileLocked): the appends end soon (closing the store before would fail
      // the ones waiting for a connection at once, EventStoreClosedError: postgres-close.spec.ts)
      await Promise.allSettled(pending);
      await observer.end();
      await small.close();
    }
  });

  describe('a pooler that accepts connections but gives them no server (pgbouncer in session mode, pool full)', () => {
    // Speaks just enough of the protocol: answers the startup message with AuthenticationOk and
    // ReadyForQuery, then never answers a query, as pgbouncer does for a client waiting for a server connection.
    const server = useStalledPostgresServer('startup');

    it('an append is answered EventStoreUnavailableError (nothing written) within the connect timeout, not left waiting', async () => {
      const stalled = PostgresEventStore.connect(`postgres://postgres@127.0.0.1:${server.port}/stalled`, { connectionTimeoutMs: 500 });
      try {
        const outcome = await within(stalled.appendToStream('session-a', [ev()]), 5000);
        expect(outcome).not.toBe('pending');
        expect(outcome).toMatchObject({ error: { name: 'EventStoreUnavailableError', mayHaveBeenWritten: false } });
        expect((outcome as { error: Error }).error.message).toMatch(/no answer to a new connection's first statement within 500 ms/);
      } finally {
        await stalled.close();
      }
    });
  });
});
