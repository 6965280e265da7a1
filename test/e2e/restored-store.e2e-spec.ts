/**
 * A store restored from an older backup and written again (newcomer ncsre): read models projected
 * before the restore reach a position the restored log also reaches, with other events. The
 * service started without a word and served a session the store no longer had (`lost`, 5 events)
 * and only part of a session written after the restore (`fresh`: 3 of 8 events). It must refuse
 * to start (configuration error on DATA_DIR naming the remedy); once the read models are rebuilt
 * (or deleted and projected again), it answers from the restored log. On the embedded SQLite store
 * (backup: `VACUUM INTO` while the service runs) and on PostgreSQL (backup: pg_dump, restore:
 * pg_restore into a new database of the same name).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { READ_MODEL_FILE_NAME, ReadModelStore, SessionProjector } from '@lib/session';
import {
  POSTGRES_ADMIN_URL,
  createTestDatabase,
  describeUnlessSkipped,
  postgresUnavailableReason,
  type TestDatabase,
} from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(120_000);

async function post(h: Harness, session: string, n: number, prefix: string): Promise<void> {
  for (let i = 1; i <= n; i++)
    await h
      .http()
      .post(`/v1/sessions/${session}/messages`)
      .send({ messages: [{ id: `${prefix}${i}`, role: 'user', content: `${prefix} ${i}` }] })
      .expect(201);
}

async function writeAndStop(start: () => Promise<Harness>, session: string, n: number, prefix: string): Promise<void> {
  const h = await start();
  await post(h, session, n, prefix);
  await h.stop();
}

/** Polls `/health/ready` until it answers 200 (at most 60 s). */
async function untilReady(h: Harness): Promise<void> {
  const until = Date.now() + 60_000;
  while ((await h.http().get('/health/ready')).status !== 200) {
    if (Date.now() > until) throw new Error('/health/ready did not answer 200 within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * After the read models were rebuilt: what the restored log holds, and nothing else; then a write,
 * and a restart on the same read models, which is not refused (their checkpoint's event, recorded
 * from the live append, is the store's).
 */
async function expectTheRestoredLog(start: () => Promise<Harness>): Promise<void> {
  const h = await start();
  try {
    // The read models were deleted or rebuilt: reads wait for the start-up catch-up only up to
    // MAX_WAIT_MS (503 projection_behind after it, e.g. on a loaded machine), so wait as an
    // operator would, for /health/ready.
    await untilReady(h);
    await h.http().get('/v1/sessions/lost').expect(404);
    expect((await h.http().get('/v1/sessions/fresh').expect(200)).body.eventCount).toBe(8);
    expect((await h.http().get('/v1/sessions/a').expect(200)).body.eventCount).toBe(1);
    await post(h, 'after', 1, 'r');
  } finally {
    await h.stop();
  }
  const again = await start();
  try {
    expect((await again.http().get('/v1/sessions/after').expect(200)).body.eventCount).toBe(1);
  } finally {
    await again.stop();
  }
}

// Position 6 (or 5 on PostgreSQL, when the replica stopped before its projector polled the last append).
const REFUSAL =
  /DATA_DIR=.*: its read models \(read-models\.sqlite\) come from another log than the event store's: they were projected up to position (\d), from the event session-default\.lost@\d .*, but the event store holds another event there \(session-default\.fresh@\d .*\).*: rebuild them from this store with npm run rebuild-read-models/;

describe('a SQLite store restored from an older backup and written again', () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'restored-store-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const copyStore = (from: string, to: string) => {
    for (const f of fs.readdirSync(to)) if (f.startsWith('events.sqlite')) fs.rmSync(path.join(to, f));
    for (const f of fs.readdirSync(from)) if (f.startsWith('events.sqlite')) fs.copyFileSync(path.join(from, f), path.join(to, f));
  };

  it('is refused at start-up with the remedy, and after it the service answers from the restored log', async () => {
    const dataDir = path.join(root, 'data');
    const backup = path.join(root, 'backup');
    const other = path.join(root, 'other');
    for (const d of [dataDir, backup, other]) fs.mkdirSync(d);
    const running = await startService({ dataDir });
    await post(running, 'a', 1, 'm');
    // The backup, taken while the service runs, as README's "Backup and restore" says (one read transaction: consistent).
    const source = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    source.exec(`VACUUM INTO '${path.join(backup, 'events.sqlite')}'`);
    source.close();
    await post(running, 'lost', 5, 'm'); // read models reach position 6
    await running.stop();
    copyStore(backup, other); // restored; another process writes to it
    await writeAndStop(() => startService({ dataDir: other }), 'fresh', 8, 'f'); // log head 9
    copyStore(other, dataDir); // this DATA_DIR gets the restored store

    await expect(startService({ dataDir })).rejects.toThrow(REFUSAL);

    // The remedy the refusal names: delete the read models (not events.sqlite); the service projects the log again.
    for (const f of fs.readdirSync(dataDir)) if (f.startsWith(READ_MODEL_FILE_NAME)) fs.rmSync(path.join(dataDir, f));
    // (With the projector in its worker thread: the checkpoint's event is recorded there too.)
    await expectTheRestoredLog(() => startService({ dataDir, env: { PROJECTOR_WORKER: 'true' } }));
  });
});

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'a PostgreSQL store restored from an older backup (pg_dump) and written again', () => {
  let db: TestDatabase;
  let root: string;
  beforeAll(async () => {
    db = await createTestDatabase('restored');
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'restored-pg-'));
  });
  afterAll(async () => {
    await db?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function admin(sql: string): Promise<void> {
    const client = new Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  it('is refused at start-up with the remedy, and after npm run rebuild-read-models the replica answers from the restored log', async () => {
    const replica = path.join(root, 'replica');
    const env = { DATABASE_URL: db.url };
    await writeAndStop(() => startService({ dataDir: replica, env }), 'a', 1, 'm');
    const dump = path.join(root, 'backup.dump');
    execFileSync('pg_dump', ['--format=custom', `--file=${dump}`, db.url], { timeout: 120_000 }); // the backup
    await writeAndStop(() => startService({ dataDir: replica, env }), 'lost', 5, 'm'); // read models reach position 6
    // The restore: the database again from the dump; another replica (its own DATA_DIR) writes to it.
    await admin(`DROP DATABASE ${db.name} WITH (FORCE)`);
    await admin(`CREATE DATABASE ${db.name}`);
    execFileSync('pg_restore', ['--no-owner', `--dbname=${db.url}`, dump], { timeout: 120_000 });
    await writeAndStop(() => startService({ dataDir: path.join(root, 'other'), env }), 'fresh', 8, 'f'); // log head 9

    await expect(startService({ dataDir: replica, env })).rejects.toThrow(REFUSAL);

    // The remedy the refusal names: what npm run rebuild-read-models does.
    const store = PostgresEventStore.connect(db.url);
    const readModels = ReadModelStore.open(path.join(replica, READ_MODEL_FILE_NAME));
    try {
      expect(await new SessionProjector(readModels).rebuild(store)).toBe(9n);
    } finally {
      readModels.close();
      await store.close();
    }
    await expectTheRestoredLog(() => startService({ dataDir: replica, env }));
  });

  // Newcomer ncdata69 F1: a failed copy-store's clean-up emptied the database under a running replica (its head went from
  // 1460 back to 1408). The replica's projector waited past its checkpoint for ever: /health said ok, appends answered 201 and
  // were never shown (404, 503 projection_behind), sessions the store no longer held were served; noticed only at a restart.
  it('a running replica whose store log goes back below its checkpoint notices it at its next read: 503 read_models_off_log, /health unavailable', async () => {
    const env = { DATABASE_URL: db.url };
    const replica = await startService({ dataDir: path.join(root, 'running'), env });
    try {
      await post(replica, 'kept', 1, 'k');
      await post(replica, 'gone', 5, 'g');
      await untilReady(replica);
      const head = await replica.service.store.headPosition();
      // What the clean-up did: the log cut back to its first event.
      const first = (await replica.service.store.readAll({ fromPosition: 0n, maxCount: 1 }))[0].position;
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query('DELETE FROM es_events WHERE position > $1', [first.toString()]);
        await client.query('DELETE FROM es_streams s WHERE NOT EXISTS (SELECT 1 FROM es_events e WHERE e.stream = s.stream)');
        await client.query('UPDATE es_head SET position = $1', [first.toString()]);
      } finally {
        await client.end();
      }
      expect(await replica.service.store.headPosition()).toBeLessThan(head);
      // A write the store takes at a position the read models passed, then a read of it: the replica finds out.
      await replica
        .http()
        .post('/v1/sessions/after/messages')
        .send({ messages: [{ id: 'a1', role: 'user', content: 'after the cut' }] });
      // Within a second or two (the projector reads the head every LOG_HEAD_CHECK_INTERVAL_MS).
      let read = await replica.http().get('/v1/sessions/after/window');
      for (
        const until = Date.now() + 10_000;
        read.body.code !== 'read_models_off_log' && Date.now() < until;
        read = await replica.http().get('/v1/sessions/after/window')
      )
        await new Promise((resolve) => setTimeout(resolve, 100));
      const health = await replica.http().get('/health');
      expect({ read: read.status, code: read.body.code, health: health.body.status, offLog: health.body.projector.lastError }).toEqual({
        read: 503,
        code: 'read_models_off_log',
        health: 'unavailable',
        offLog: expect.stringMatching(/^ReadModelsOfAnotherLogError: .*projected up to position \d+, but the event store's log ends at \d+/),
      });
      expect((await replica.http().get('/v1/sessions/gone/window')).body.code).toBe('read_models_off_log');
    } finally {
      await replica.stop();
    }
  });

  // Newcomer ncrecheck69 N2: pg_restore --clean of another log whose head reached the replica's checkpoint was followed on
  // top of the read models (/health ok, a session the store no longer held served), and a restart then passed its check.
  it('a running replica whose store log is replaced by another reaching its checkpoint notices it: 503 read_models_off_log, and a restart is refused', async () => {
    const env = { DATABASE_URL: db.url };
    const dataDir = path.join(root, 'replaced');
    const replica = await startService({ dataDir, env });
    try {
      await post(replica, 'old', 3, 'o');
      await untilReady(replica);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // a check records the checkpoint's event
      // Another log at the same positions: every event's id and time differ (what a restore of another log gives).
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query("UPDATE es_events SET id = gen_random_uuid(), created = created - interval '1 day'");
      } finally {
        await client.end();
      }
      // A write the projector may apply on top before it notices: the checkpoint then names an event of the other log.
      await replica
        .http()
        .post('/v1/sessions/new/messages')
        .send({ messages: [{ id: 'n1', role: 'user', content: 'after the swap' }] });
      let read = await replica.http().get('/v1/sessions/old/window');
      for (
        const until = Date.now() + 10_000;
        read.body.code !== 'read_models_off_log' && Date.now() < until;
        read = await replica.http().get('/v1/sessions/old/window')
      )
        await new Promise((resolve) => setTimeout(resolve, 100));
      const health = await replica.http().get('/health');
      expect({ read: read.status, code: read.body.code, health: health.body.status, error: health.body.projector.lastError }).toEqual({
        read: 503,
        code: 'read_models_off_log',
        health: 'unavailable',
        error: expect.stringMatching(/^ReadModelsOfAnotherLogError: .*is not the store's event there now/),
      });
    } finally {
      await replica.stop();
    }
    await expect(startService({ dataDir, env })).rejects.toThrow(/its read models \(read-models\.sqlite\) come from another log than the event store's/);
  });
});
