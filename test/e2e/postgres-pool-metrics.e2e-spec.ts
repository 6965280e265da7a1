/**
 * `/metrics` `event_store_pool_connections{state="total"|"idle"|"waiting"}`: the PostgreSQL store's
 * pool, read at each scrape (ncpgops A3: nothing showed an exhausted pool but the 503s it caused).
 * Absent on SQLite (no pool). On a PostgreSQL database of this file's own.
 */
import * as fs from 'node:fs';
import { Client } from 'pg';
import { startService, type Harness } from '../support/service-harness';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';

jest.setTimeout(60_000);

/**
 * How many times the pool gauge and the server's count of the service's connections are looked at
 * together before their disagreement fails the test (each look: a scrape, the server's count, a scrape).
 */
const AGREEING_LOOKS_TRIES = 20;

/** The pool series of a /metrics text, by state (absent states left out). */
function poolSeries(text: string): Record<string, number> {
  return Object.fromEntries([...text.matchAll(/^event_store_pool_connections\{state="(\w+)"\} (\S+)$/gm)].map((m) => [m[1], Number(m[2])]));
}

describe('event_store_pool_connections on SQLite', () => {
  let harness: Harness | undefined;
  afterAll(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('is absent (no pool)', async () => {
    harness = await startService();
    const text = (await harness.http().get('/metrics').expect(200)).text;
    expect(text).not.toContain('event_store_pool_connections');
  });
});

describeUnlessSkipped(postgresUnavailableReason(), 'event_store_pool_connections on PostgreSQL', () => {
  let db: TestDatabase;
  let harness: Harness | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('pool_metrics');
  });
  afterAll(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
    await db?.drop();
  });

  it('serves total, idle and waiting of the pool as each scrape finds it, total within DATABASE_POOL_SIZE and as many as the server sees', async () => {
    harness = await startService({ env: { DATABASE_URL: db.url, DATABASE_POOL_SIZE: '3' } });
    const h = harness;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h
          .http()
          .post(`/v1/sessions/pool-${i}/events`)
          .send({ events: [{ id: `e${i}`, type: 'user', text: 'hello' }] })
          .expect(201),
      ),
    );
    const text = (await h.http().get('/metrics').expect(200)).text;
    expect(text).toMatch(/^# TYPE event_store_pool_connections gauge$/m);
    const pool = poolSeries(text);
    expect(Object.keys(pool).sort()).toEqual(['idle', 'total', 'waiting']);
    expect(pool.total).toBeGreaterThanOrEqual(1);
    expect(pool.total).toBeLessThanOrEqual(3);
    expect(pool.idle).toBeLessThanOrEqual(pool.total);
    expect(pool.waiting).toBe(0);
    // As many connections as the server has from the service. The pool changes between two looks
    // (the projector's poll or the scrape's head read opening a connection while the others are busy,
    // an idle one closed), and the server lists a backend a little after the pool counts it opening
    // and a little after the pool dropped it: so the server's count is compared with the gauge read
    // just before and just after it, and taken when all three agree (the pool did not move in
    // between); a gauge off from the server's count never agrees.
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    const looks: Array<[number, number, number]> = [];
    try {
      const serverCount = async (): Promise<number> => {
        const { rows } = await admin.query<{ n: string }>(
          "SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'session-memory-compaction'",
          [db.name],
        );
        return Number(rows[0].n);
      };
      const gauge = async (): Promise<number> => poolSeries((await h.http().get('/metrics').expect(200)).text).total;
      for (let attempt = 0; attempt < AGREEING_LOOKS_TRIES; attempt++) {
        const look: [number, number, number] = [await gauge(), await serverCount(), await gauge()];
        looks.push(look);
        if (look[0] === look[1] && look[1] === look[2]) break;
      }
    } finally {
      await admin.end();
    }
    const [before, server, after] = looks[looks.length - 1];
    expect({ before, server, after }).toEqual({ before: server, server, after: server });
    expect(server).toBeGreaterThanOrEqual(1);
  });
});
