/**
 * Multi-process guarantees of the PostgreSQL adapter (issue 12): the race and SIGKILL tests every
 * shared store passes (multi-process.contract.ts), and the proof that a subscription never skips
 * an event committed late while several processes write at once. Runtime: about 75 s on the shared
 * 2-core machine under a load average of ~17 (mostly the ts-node start-ups of six child processes).
 */
import type { RecordedEvent } from '../src';
import { PostgresEventStore } from '../src/postgres';
import { spawnChild } from './fixtures/spawn-child';
import { multiProcessContract } from './multi-process.contract';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from './postgres-test-database';

jest.setTimeout(60_000);

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'runs the multi-process tests against PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((d) => d.drop())));
  const newDatabase = async (tag: string): Promise<string> => {
    const db = await createTestDatabase(`es_mp_${tag}`);
    databases.push(db);
    return db.url;
  };

  multiProcessContract('PostgreSQL', { newTarget: newDatabase, open: (url) => PostgresEventStore.connect(url) });

  describe('PostgreSQL global position under concurrent writers in several processes', () => {
    it('a live subscription delivers every committed event once, in position order, even those committed late', async () => {
      const url = await newDatabase('late');
      const reader = PostgresEventStore.connect(url, { pollIntervalMs: 2 });
      await reader.headPosition(); // schema before the children race on it
      const delivered: RecordedEvent[] = [];
      const sub = reader.subscribeToAll();
      const consumed = (async () => {
        for await (const e of sub) delivered.push(e);
      })();
      // Two processes appending 8 at a time, and one whose every commit comes 20 ms after its
      // positions were assigned: a sequence taken before commit would let the reader pass its gap.
      const children = [spawnChild(['burst', url, '400', 'a']), spawnChild(['burst', url, '400', 'b']), spawnChild(['late', url, '60', 'late'])];
      const exits = await Promise.all(children.map((c) => c.exited));
      children.forEach((c, i) => expect({ child: i, exit: exits[i].code, stderr: c.stderr() }).toEqual({ child: i, exit: 0, stderr: '' }));
      const acked = children.flatMap((c) => c.facts.filter((f) => f.t === 'ack').flatMap((f) => f.ids as string[]));
      const head = await reader.headPosition();
      for (let i = 0; i < 600 && (delivered.length === 0 || delivered[delivered.length - 1].position < head); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      await sub.close();
      await consumed;
      const log = await reader.readAll({ maxCount: 100_000 });
      await reader.close();

      expect(log).toHaveLength(acked.length);
      expect(new Set(log.map((e) => e.id))).toEqual(new Set(acked));
      // The subscription saw exactly the log: nothing skipped, nothing twice, in position order.
      expect(delivered.map((e) => e.id)).toEqual(log.map((e) => e.id));
      for (let i = 1; i < delivered.length; i++) expect(delivered[i].position).toBe(delivered[i - 1].position + 1n);
      process.stderr.write(`late commits: ${acked.length} events from 3 processes, all delivered once in order\n`);
    });
  });
});
