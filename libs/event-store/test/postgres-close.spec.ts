/**
 * `PostgresEventStore.close()` settles what waits on the store at the close: operations queued for a
 * connection (all busy) or waiting for one being opened fail at once with EventStoreClosedError, and so
 * does every operation after the close; statements running finish. Before, `pg`'s `Pool.end()` left its
 * queue alone: those operations failed `connectionTimeoutMs` after close() had returned ("timeout
 * exceeded when trying to connect"), inside the next test suite of the same jest process, or as
 * unhandled rejections during a service's shutdown.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { EventData } from '../src';
import { PostgresEventStore } from '../src/postgres';
import { useStalledPostgresServer } from '../../../test/support/stalled-postgres-server';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from './postgres-test-database';

const skipReason = postgresUnavailableReason();
const ev = (): EventData => ({ id: randomUUID(), type: 'T', data: { n: 1 } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `work` with the time it settled at (ms after `since()`, a `Date.now()` read then), and how. */
function timed<T>(work: Promise<T>, since: () => number): Promise<{ atMs: number; ok?: T; error?: { name: string; message: string } }> {
  return work.then(
    (ok) => ({ atMs: Date.now() - since(), ok }),
    (error: Error) => ({ atMs: Date.now() - since(), error: { name: error.name, message: error.message } }),
  );
}

/** Waits (bounded) until `check()` is true. */
async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) await sleep(20);
}

describeUnlessSkipped(skipReason, 'PostgreSQL: close() settles every operation waiting for a connection at once', () => {
  let db: TestDatabase;
  let locker: Client;
  beforeAll(async () => {
    db = await createTestDatabase('es_close');
    const setup = PostgresEventStore.connect(db.url);
    await setup.appendToStream('session-a', [ev()]);
    await setup.close();
    locker = new Client({ connectionString: db.url });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await db.drop();
  });

  it('a pool of 1 held busy, operations queued: they fail with EventStoreClosedError at the close, the running one finishes, later ones fail at once', async () => {
    // a connect timeout the test would see: the queued operations used to fail only then, after close()
    const store = PostgresEventStore.connect(db.url, { maxConnections: 1, connectionTimeoutMs: 4000, statementTimeoutMs: 20_000 });
    let closedAt = 0;
    const sinceClose = () => closedAt;
    await store.headPosition();
    await locker.query('BEGIN');
    let locked = true;
    try {
      await locker.query('SELECT * FROM es_head FOR UPDATE');
      // holds the only connection, waiting for the lock
      const running = timed(store.appendToStream(`session-${randomUUID()}`, [ev()]), sinceClose);
      await until(async () => {
        const { rows } = await locker.query<{ n: string }>("SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [
          db.name,
        ]);
        return rows[0].n === '1';
      });
      const queued = [
        store.appendToStream(`session-${randomUUID()}`, [ev()]) as Promise<unknown>,
        store.readStream('session-a'),
        store.headPosition(),
        store.deleteStream(`session-${randomUUID()}`),
        store.probeWrite(),
      ].map((work) => timed(work, sinceClose));
      await until(() => store.poolConnections().waiting === 5);
      expect(store.poolConnections()).toEqual({ total: 1, idle: 0, waiting: 5 });

      closedAt = Date.now();
      const closing = timed(store.close(), sinceClose);
      const settled = await Promise.all(queued);
      // was: each failed about 4000 ms after the close (the pool's connect timeout), "timeout exceeded when trying to connect"
      for (const outcome of settled) {
        expect(outcome.error).toMatchObject({ name: 'EventStoreClosedError', message: expect.stringMatching(/PostgreSQL event store is closed/) });
        expect(outcome.atMs).toBeLessThan(1000);
      }
      expect(store.poolConnections().waiting).toBe(0);
      // later operations fail at once, the claims too
      await expect(store.readStream('session-a')).rejects.toMatchObject({ name: 'EventStoreClosedError' });
      await expect(store.appendToStream('session-a', [ev()])).rejects.toMatchObject({ name: 'EventStoreClosedError' });
      await expect(store.tryClaim('auto-compaction x')).rejects.toMatchObject({ name: 'EventStoreClosedError' });

      // the running append holds its connection until the lock is gone: then it is written, and close() resolves
      await sleep(200);
      expect(await Promise.race([closing.then(() => 'closed'), sleep(0).then(() => 'pending')])).toBe('pending');
      await locker.query('ROLLBACK');
      locked = false;
      expect((await running).ok).toMatchObject({ nextExpectedRevision: 0n });
      expect((await closing).error).toBeUndefined();
    } finally {
      if (locked) await locker.query('ROLLBACK');
      await store.close();
    }
  });

  describe('a server that accepts connections and never answers them', () => {
    const server = useStalledPostgresServer('silent');

    it('an operation waiting for a connection being opened, and a claim being asked for, fail with EventStoreClosedError at the close', async () => {
      const silent = PostgresEventStore.connect(`postgres://postgres@127.0.0.1:${server.port}/silent`, { connectionTimeoutMs: 1500 });
      let closedAt = 0;
      const sinceClose = () => closedAt;
      const read = timed(silent.readStream('session-a'), sinceClose);
      const claim = timed(silent.tryClaim('auto-compaction y'), sinceClose);
      await until(() => server.sockets.length >= 2, 5000);
      closedAt = Date.now();
      const closing = timed(silent.close(), sinceClose);
      const [readOutcome, claimOutcome] = await Promise.all([read, claim]);
      // was: the read failed at the connect timeout (1500 ms), "timeout exceeded when trying to connect"
      expect(readOutcome.error).toMatchObject({ name: 'EventStoreClosedError' });
      expect(readOutcome.atMs).toBeLessThan(500);
      expect(claimOutcome.error).toMatchObject({ name: 'EventStoreClosedError' });
      expect(claimOutcome.atMs).toBeLessThan(500);
      // close() itself resolves once the connections being opened gave up (the driver cannot abort them): within their connect timeout
      const closed = await closing;
      expect(closed.error).toBeUndefined();
      expect(closed.atMs).toBeLessThan(1500 + 1000);
    });
  });
});
