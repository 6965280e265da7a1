/**
 * The NATS decisions feed after `npm run copy-store` (copyedge): docs/stores.md "Switching stores" says the
 * feed stays valid since the copy keeps positions and event identities. A service switched onto the
 * copied PostgreSQL store on the same `NATS_PREFIX` — with the source's DATA_DIR (its feed checkpoint)
 * or a new one (none: it starts after the stream's last message) — takes the stream's messages as
 * this log's (no `anotherLog`), publishes nothing again and continues: every decision and erasure
 * record of the copied log is in the decisions stream exactly once, in log order, under one message id.
 *
 * Against the machine's NATS server under its own prefix (skipped with one line without one; CI
 * runs it), and PostgreSQL (skipped with one line without it; CI runs it).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { COMPACTION_COMPLETED, COMPACTION_FAILED, SESSION_ERASED } from '@lib/session';
import { createTestDatabase, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from '../support/service-harness';
import { NATS_TEST_URL, describeWithNats, eventually, useNatsSuite } from '../support/nats-test';
import { LOG_POSITION_HEADER } from '../../apps/session-service/src/nats/decision-feed-publisher';
import { natsNames } from '../../apps/session-service/src/nats/nats-names';
import { copyIntoTarget } from '../../apps/session-service/src/store-copy/copy-into-target';

jest.setTimeout(240_000);

const pgSkip = postgresUnavailableReason();
if (pgSkip) process.stderr.write(`SKIPPED NATS feed after copy-store: ${pgSkip}\n`);

describeWithNats('NATS decisions feed after copy-store')('the decisions feed on a store copied by copy-store', () => {
  const nats = useNatsSuite('NATS decisions feed after copy-store');
  let root: string;
  let db: TestDatabase | undefined;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-feed-after-copy-'));
  });
  afterAll(async () => {
    await nats.close();
    await db?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const converse = async (h: Harness, session: string): Promise<void> => {
    const messages = Array.from({ length: 4 }, (_, i) => [
      { role: 'user', content: `turn ${i} of ${session}` },
      { role: 'assistant', content: `noted ${i}` },
    ]).flat();
    await h.http().post(`/v1/sessions/${session}/messages`).send({ messages }).expect(201);
  };
  const compact = async (h: Harness, session: string): Promise<void> => {
    await h
      .http()
      .post(`/v1/sessions/${session}/compactions`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
      .expect(200);
  };
  const health = async (h: Harness) => (await h.http().get('/health').expect(200)).body;
  const caughtUp = (h: Harness) =>
    eventually(
      async () => {
        const body = await health(h);
        const feed = body.nats.decisionFeed;
        return feed !== null && BigInt(feed.checkpoint) >= BigInt(body.store.headPosition) && feed.lastError === null;
      },
      30_000,
      'the decisions feed to reach the log’s head',
    );

  (pgSkip ? it.skip : it)(
    'a service switched onto the copy (old DATA_DIR, then a new one) continues the feed: each decision once, in log order, no gap',
    async () => {
      const names = natsNames(nats.prefix());
      const env = { NATS_URL: NATS_TEST_URL, NATS_PREFIX: names.prefix, NATS_ACK_WAIT_MS: '5000' };
      const sourceDir = path.join(root, 'source');
      const source = await startService({ dataDir: sourceDir, env });
      try {
        for (const s of ['s1', 's2', 's3']) {
          await converse(source, s);
          await compact(source, s);
        }
        await source.http().delete('/v1/sessions/s2').expect(200);
        await caughtUp(source);
      } finally {
        await source.stop();
      }

      db = await createTestDatabase('copyedge_feed');
      const from = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
      try {
        await copyIntoTarget(from, db.url);
      } finally {
        await from.close();
      }

      // The source's DATA_DIR (its read models and feed checkpoint) on the copy, then a new DATA_DIR (no checkpoint).
      for (const [dataDir, session] of [
        [sourceDir, 's4'],
        [path.join(root, 'fresh'), 's5'],
      ] as const) {
        const moved = await startService({ dataDir, env: { ...env, DATABASE_URL: db.url } });
        try {
          await caughtUp(moved);
          expect((await health(moved)).nats.decisionFeed.anotherLog).toBeNull();
          await converse(moved, session);
          await compact(moved, session);
          await caughtUp(moved);
        } finally {
          await moved.stop();
        }
      }

      // Every decision and erasure record of the copied log, once each, in log order (none republished, none passed over).
      const store = PostgresEventStore.connect(db.url);
      let expected: string[];
      try {
        expected = (await store.readAll({ maxCount: 100_000 }))
          .filter((e) => [COMPACTION_COMPLETED, COMPACTION_FAILED, SESSION_ERASED].includes(e.type))
          .map((e) => `${e.type} @${e.position}`);
      } finally {
        await store.close();
      }
      // s1, s3, s2's erasure record, s4, s5 (s2's decision went with its stream, and from the stream with the erasure).
      expect(expected.map((line) => line.split(' ')[0])).toEqual([
        COMPACTION_COMPLETED,
        COMPACTION_COMPLETED,
        SESSION_ERASED,
        COMPACTION_COMPLETED,
        COMPACTION_COMPLETED,
      ]);
      const info = await nats.client.jsm.streams.info(names.decisionStream);
      const published: string[] = [];
      const ids = new Set<string>();
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m = await nats.client.jsm.streams.getMessage(names.decisionStream, { seq });
        if (!m) continue;
        published.push(`${(JSON.parse(m.string()) as { type: string }).type} @${m.header.get(LOG_POSITION_HEADER)}`);
        ids.add(m.header.get('Nats-Msg-Id'));
      }
      expect(published).toEqual(expected);
      expect(ids.size).toBe(published.length);
    },
  );
});
