/**
 * `npm run copy-store` (newcomer ncmigrate F1): moving from the embedded SQLite store to
 * PostgreSQL. Re-importing through the API lost the compaction history, the erasure records and
 * the deleted streams, the revisions (a session written again after its erasure restarted at 0)
 * and the times recorded. The copy carries the log verbatim: a service started on the target
 * answers as the source's did (sessions, windows, compaction history and decisions, erasures,
 * recall, the log), revisions continue after the erased life, and the source's read models are
 * accepted as they are (positions and event identities kept). Refused: a target that is not empty
 * (nothing written); failed and emptied again: a source written during the copy. SQLite → SQLite too,
 * and the command line itself (exit codes, summary line).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { SqliteEventStore, storeWith, type EventStore } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { copyLog } from '../../apps/session-service/src/store-copy/copy-log';
import { copyIntoTarget } from '../../apps/session-service/src/store-copy/copy-into-target';
import { CopyFailedError, CopyRefusedError } from '../../apps/session-service/src/store-copy/copy-errors';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from '../support/service-harness';
import { REPO_ROOT } from '../support/service-process';
import { runNode } from '../support/run-node';

jest.setTimeout(240_000);

const json = { 'content-type': 'application/json' };

async function say(h: Harness, session: string, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++)
    await h
      .http()
      .post(`/v1/sessions/${session}/messages`)
      .set(json)
      .send({
        messages: [
          {
            id: `${session}-m${i}`,
            role: i % 2 ? 'user' : 'assistant',
            content: `${session} message ${i} about the reservation number XK${i}Q and its refund`,
          },
        ],
      })
      .expect(201);
}

/** Writes the source's history: compactions (one with a summary), an erasure, a session erased and written again. */
async function writeHistory(h: Harness): Promise<void> {
  await say(h, 'a', 1, 12);
  await h
    .http()
    .post('/v1/sessions/a/compactions')
    .set(json)
    .send({ strategy: { type: 'token-count', maxTokens: 60 }, estimator: 'cl100k_base' })
    .expect(200);
  await say(h, 'b', 1, 14);
  const summary = await h
    .http()
    .post('/v1/sessions/b/compactions')
    .set(json)
    .send({ strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 40 } })
    .expect(200);
  expect(summary.body.outcome).toBe('compacted');
  await h
    .http()
    .put('/v1/sessions/b/policy')
    .set(json)
    .send({ strategy: { type: 'token-count', maxTokens: 80 }, trigger: { type: 'token-count', threshold: 200 } })
    .expect(200);
  await say(h, 'gone', 1, 5);
  await h.http().delete('/v1/sessions/gone').expect(200);
  await say(h, 'again', 1, 6);
  await h.http().delete('/v1/sessions/again').expect(200);
  await say(h, 'again', 7, 9);
}

/** Everything a client reads of the sessions (bodies as answered), to compare source and target. */
async function readAll(h: Harness): Promise<Record<string, unknown>> {
  const got = async (url: string, status = 200) => (await h.http().get(url).expect(status)).body as unknown;
  const out: Record<string, unknown> = {
    sessions: await got('/v1/sessions?limit=100'),
    erasures: await got('/v1/erasures'),
    gone: await got('/v1/sessions/gone', 404),
    recallArchived: await got('/v1/recall?q=reservation&archived=true&limit=50'),
    recallActive: await got('/v1/recall?q=refund&archived=false&limit=50'),
  };
  for (const s of ['a', 'b', 'again']) {
    out[s] = await got(`/v1/sessions/${s}`);
    out[`${s}.window`] = await got(`/v1/sessions/${s}/window`);
    out[`${s}.events`] = await got(`/v1/sessions/${s}/events?fromRevision=0&limit=1000`);
    out[`${s}.policy`] = await got(`/v1/sessions/${s}/policy`);
    const compactions = (await got(`/v1/sessions/${s}/compactions?limit=50`)) as {
      compactions?: { compactionId: string }[];
      items?: { compactionId: string }[];
    };
    out[`${s}.compactions`] = compactions;
    for (const c of compactions.compactions ?? compactions.items ?? []) {
      out[`${s}.compaction.${c.compactionId}`] = await got(`/v1/sessions/${s}/compactions/${c.compactionId}`);
      out[`${s}.recall.${c.compactionId}`] = await got(`/v1/recall?q=reservation&compactionId=${c.compactionId}`);
    }
  }
  return out;
}

async function untilReady(h: Harness): Promise<void> {
  const until = Date.now() + 90_000;
  while ((await h.http().get('/health/ready')).status !== 200) {
    if (Date.now() > until) throw new Error('/health/ready did not answer 200 within 90 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Rows of the source file counted by SQLite itself (not by the code under test). */
function sourceCounts(file: string): { events: number; streams: number; deleted: number; head: number } {
  const db = new Database(file, { readonly: true });
  try {
    const one = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n);
    return {
      events: one('SELECT count(*) AS n FROM events'),
      streams: one('SELECT count(DISTINCT stream) AS n FROM events'),
      deleted: one('SELECT count(*) AS n FROM deleted_streams'),
      head: one("SELECT seq AS n FROM sqlite_sequence WHERE name = 'events'"),
    };
  } finally {
    db.close();
  }
}

let root: string;
let sourceDir: string;
let sourceFile: string;
let before: Record<string, unknown>;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'copy-store-'));
  sourceDir = path.join(root, 'source');
  sourceFile = path.join(sourceDir, 'events.sqlite');
  const h = await startService({ dataDir: sourceDir });
  try {
    await writeHistory(h);
    before = await readAll(h);
  } finally {
    await h.stop();
  }
  // The history the spec depends on is there.
  const compactions = before['b.compactions'] as { compactions?: unknown[]; items?: unknown[] };
  expect((compactions.compactions ?? compactions.items ?? []).length).toBeGreaterThan(0);
  expect((before.erasures as { erasures: unknown[] }).erasures).toHaveLength(2);
  expect(Object.keys(before).filter((k) => k.includes('.compaction.'))).toHaveLength(2);
  expect((before.recallArchived as { items: unknown[] }).items.length).toBeGreaterThan(0);
  expect((before['b.events'] as { events: { type: string }[] }).events.map((e) => e.type)).toContain('SummaryInserted');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'copy-store: SQLite → PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('copystore');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('copies the log verbatim: a service on the target answers as the source did, revisions continue after the erased life, the source read models are accepted', async () => {
    const counts = sourceCounts(sourceFile);
    const source = SqliteEventStore.open(sourceFile);
    const target = PostgresEventStore.connect(db.url);
    const lines: string[] = [];
    try {
      const summary = await copyLog(source, target, { pageSize: 7, progressEvents: 20, say: (l) => lines.push(l) });
      expect({ events: summary.events, streams: summary.streams, deleted: summary.deletedStreams, head: summary.head }).toEqual({
        events: counts.events,
        streams: counts.streams,
        deleted: counts.deleted,
        head: BigInt(counts.head),
      });
      expect(lines.some((l) => /… \d+ events copied, at position \d+ of \d+/.test(l))).toBe(true);
      // Positions kept: the event at every source position is the same event in the target.
      const a = await source.readAll({ maxCount: 100_000 });
      const b = await target.readAll({ maxCount: 100_000 });
      expect(b.map((e) => [e.position, e.streamId, e.revision, e.id, e.created.toISOString()])).toEqual(
        a.map((e) => [e.position, e.streamId, e.revision, e.id, e.created.toISOString()]),
      );
    } finally {
      await source.close();
      await target.close();
    }

    // A replica with a new DATA_DIR projects the target's log and answers exactly as the source's service did.
    const fresh = await startService({ dataDir: path.join(root, 'replica'), env: { DATABASE_URL: db.url } });
    try {
      await untilReady(fresh);
      expect(await readAll(fresh)).toEqual(before);
    } finally {
      await fresh.stop();
    }

    // The source's own DATA_DIR (its read models) on the target: accepted (same positions and events), same answers; then writes continue the revisions.
    const moved = await startService({ dataDir: sourceDir, env: { DATABASE_URL: db.url } });
    try {
      await untilReady(moved);
      expect(await readAll(moved)).toEqual(before);
      const again = before.again as { revision: string };
      const erasure = (before.erasures as { erasures: { sessionId: string; lastRevision: string }[] }).erasures.find((e) => e.sessionId === 'gone')!;
      const next = await moved
        .http()
        .post('/v1/sessions/again/messages')
        .set(json)
        .send({ messages: [{ id: 'again-new', role: 'user', content: 'after the move' }] })
        .expect(201);
      expect(BigInt(next.body.revision)).toBe(BigInt(again.revision) + 1n);
      const reborn = await moved
        .http()
        .post('/v1/sessions/gone/messages')
        .set(json)
        .send({ messages: [{ id: 'gone-new', role: 'user', content: 'born again after the move' }] })
        .expect(201);
      expect(BigInt(reborn.body.revision)).toBe(BigInt(erasure.lastRevision) + 1n);
      const hits = await moved.http().get(`/v1/recall?q=move&minPosition=${reborn.body.position}`).expect(200);
      expect(hits.body.items.map((i: { eventId: string }) => i.eventId).sort()).toEqual(['again-new', 'gone-new']);
    } finally {
      await moved.stop();
    }
  });

  it("refuses a target it cannot reach or log into, or whose es_* tables are not the service's (CopyRefusedError: exit code 2), nothing written", async () => {
    const source = SqliteEventStore.open(sourceFile);
    const foreign = await createTestDatabase('copystore_foreign');
    const unreachable = new URL(db.url);
    unreachable.port = '1';
    const missing = new URL(db.url);
    missing.pathname = `/${foreign.name}_missing`;
    const client = new Client({ connectionString: foreign.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE es_events (id text, payload text); INSERT INTO es_events VALUES ($$a$$, $$theirs$$)');
      for (const [url, cause] of [
        [unreachable.toString(), /ECONNREFUSED/],
        [missing.toString(), /does not exist/],
        [foreign.url, /the table es_events in the database is not this service's: it has no column position/],
      ] as const) {
        const target = PostgresEventStore.connect(url);
        try {
          const failure = copyLog(source, target);
          await expect(failure).rejects.toThrow(CopyRefusedError);
          await expect(failure).rejects.toThrow(/^the target cannot be used \(nothing was copied into it\): /);
          await expect(failure).rejects.toThrow(cause);
        } finally {
          await target.close().catch(() => undefined);
        }
      }
      // The other application's table is as it was, and no table of the service was made beside it.
      expect((await client.query('SELECT id, payload FROM es_events')).rows).toEqual([{ id: 'a', payload: 'theirs' }]);
      expect((await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows).toEqual([{ tablename: 'es_events' }]);
    } finally {
      await client.end();
      await source.close();
      await foreign.drop();
    }
  });

  it('refuses a target that is not empty, writing nothing into it', async () => {
    const source = SqliteEventStore.open(sourceFile);
    const target = PostgresEventStore.connect(db.url);
    try {
      const held = await target.logCopy().contents();
      expect(held.events).toBeGreaterThan(0n);
      await expect(copyLog(source, target)).rejects.toThrow(CopyRefusedError);
      await expect(copyLog(source, target)).rejects.toThrow(/the target is not empty \(\d+ events, \d+ streams, deleted ones included, head position \d+\)/);
      expect(await target.logCopy().contents()).toEqual(held);
    } finally {
      await source.close();
      await target.close();
    }
  });
});

describe('copy-store: SQLite → SQLite', () => {
  /**
   * A copy of the source file at `name` under the test root (`scratch`), opened twice: `real`, and
   * `writer`, which appends one event (id `eventId`) to `session-default.late` as another process
   * would, while a copy from `source` (`real`, watched) reads its first page.
   */
  function sourceWrittenDuringCopy(name: string, eventId: string): { scratch: string; real: SqliteEventStore; writer: SqliteEventStore; source: EventStore } {
    const scratch = path.join(root, name);
    fs.copyFileSync(sourceFile, scratch);
    const real = SqliteEventStore.open(scratch);
    const writer = SqliteEventStore.open(scratch);
    let pages = 0;
    const source: EventStore = storeWith(real, {
      readAll: async (options) => {
        const page = await real.readAll(options);
        if (pages++ === 0) await writer.appendToStream('session-default.late', [{ id: eventId, type: 'X', data: {} }]);
        return page;
      },
    });
    return { scratch, real, writer, source };
  }

  it('copies into a new file with the same log, deleted streams and head', async () => {
    const file = path.join(root, 'copy.sqlite');
    const source = SqliteEventStore.open(sourceFile);
    const target = SqliteEventStore.open(file);
    try {
      const summary = await copyLog(source, target);
      expect(summary.events).toBe(sourceCounts(sourceFile).events);
      expect(await target.readAll({ maxCount: 100_000 })).toEqual(await source.readAll({ maxCount: 100_000 }));
      expect(await target.logCopy().deletedStreams()).toEqual(await source.logCopy().deletedStreams());
      expect(await target.headPosition()).toBe(await source.headPosition());
      for (const s of ['session-default.gone', 'session-default.again']) expect(await target.streamIncarnation(s)).toBe(await source.streamIncarnation(s));
    } finally {
      await source.close();
      await target.close();
    }
  });

  it('fails when the source is written during the copy, and empties the target again', async () => {
    const { real, writer, source } = sourceWrittenDuringCopy('moving.sqlite', '6f1d2c1e-0000-4000-8000-000000000001');
    const target = SqliteEventStore.open(path.join(root, 'moved.sqlite'));
    try {
      const failure = copyLog(source, target, { pageSize: 5 });
      await expect(failure).rejects.toThrow(CopyFailedError);
      await expect(failure).rejects.toThrow(/the source's head moved from position \d+ to \d+ during the copy.*the target was emptied again/);
      expect(await target.logCopy().contents()).toEqual({ events: 0n, streams: 0n, head: 0n });
    } finally {
      await writer.close();
      await real.close();
      await target.close();
    }
  });

  it('a failed copy into a new SQLite file removes that file (and its -wal/-shm), so the same copy runs again', async () => {
    const { scratch, real, writer, source } = sourceWrittenDuringCopy('moving-again.sqlite', '6f1d2c1e-0000-4000-8000-000000000002');
    const file = path.join(root, 'rerun.sqlite');
    try {
      const failure = copyIntoTarget(source, file, { pageSize: 5 });
      await expect(failure).rejects.toThrow(CopyFailedError);
      await expect(failure).rejects.toThrow(
        `the target file ${file} was removed again (nothing of this copy is left): fix the cause and run the same copy again`,
      );
      expect(['', '-wal', '-shm', '-journal'].filter((suffix) => fs.existsSync(file + suffix))).toEqual([]);
      // The writer stopped: the same command now copies.
      const summary = await copyIntoTarget(real, file, { pageSize: 5 });
      expect(summary.events).toBe(sourceCounts(scratch).events);
      expect(fs.existsSync(file)).toBe(true);
    } finally {
      await writer.close();
      await real.close();
    }
  });

  it('the command: copies and prints the summary (exit 0); a target file that exists is refused (exit 2)', async () => {
    const file = path.join(root, 'cli.sqlite');
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: sourceDir };
    const args = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/session-service/src/copy-store.ts', '--to', file];
    const ok = await runNode(args, { cwd: REPO_ROOT, env });
    expect({ code: ok.code, stderr: ok.stderr }).toEqual({ code: 0, stderr: '' });
    const { events, deleted } = sourceCounts(sourceFile);
    expect(ok.stdout).toMatch(
      new RegExp(
        `^copied ${events} events of \\d+ streams and ${deleted} deleted streams \\(erasures\\), head position \\d+, in [\\d.]+ s \\(\\d+ events/s; verified in [\\d.]+ s more\\)$`,
        'm',
      ),
    );
    expect(ok.stdout).toMatch(/^verified: .*sha256 [0-9a-f]{64}/m);
    const again = await runNode(args, { cwd: REPO_ROOT, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^copy-store failed: --to .*cli\.sqlite: the file exists/);
  });
});
