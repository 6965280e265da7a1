/**
 * `npm run copy-store`, its edges (copyedge):
 * - A copy killed part-way (SIGKILL) left an unmarked partial target: a service started on it served
 *   a partial log. The target is now marked (`es_copy_in_progress`) until verified: the service
 *   refuses to start on it (exit code 2, naming the mark and what to do), a new copy refuses it
 *   unless `--empty-partial-target`, which empties it and copies again; that option never empties
 *   a target without the mark. For a SQLite and a PostgreSQL target, each killed with SIGKILL mid-copy.
 * - A source that cannot be reached was a failure (exit code 1): now a refusal (exit code 2) naming
 *   the source and the connection error, nothing written.
 * - PostgreSQL as the source: PostgreSQL → SQLite and PostgreSQL → PostgreSQL keep positions,
 *   revisions, ids, times recorded (to the ms), deleted streams, the head and the digest.
 * PostgreSQL parts skip with one line without a server (CI runs them).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { SqliteEventStore, type EventStore, type RecordedEvent } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { copyLog } from '../../apps/session-service/src/store-copy/copy-log';
import { copyIntoTarget } from '../../apps/session-service/src/store-copy/copy-into-target';
import { CopyRefusedError } from '../../apps/session-service/src/store-copy/copy-errors';
import { LogDigest } from '../../apps/session-service/src/store-copy/log-digest';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { startService } from '../support/service-harness';
import { REPO_ROOT } from '../support/service-process';
import { runNode } from '../support/run-node';
import { postgresState, sqliteState } from '../support/copy-target-state';

jest.setTimeout(300_000);

const TS_NODE = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];
const STREAMS = 250;
const PER_STREAM = 20;
const TOTAL = STREAMS * PER_STREAM;

/** The environment of a command: nothing of this process's but PATH and HOME. */
const envOf = (more: Record<string, string>): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: process.env.HOME, ...more });

/** Writes `TOTAL` events (`STREAMS` streams of `PER_STREAM`) and deletes two streams, into `store`. */
async function fill(store: EventStore): Promise<void> {
  for (let s = 0; s < STREAMS; s++)
    await store.appendToStream(
      `session-default.s${s}`,
      Array.from({ length: PER_STREAM }, (_, i) => ({ id: randomUUID(), type: 'ConversationEventAppended', data: { text: `stream ${s} event ${i}` } })),
    );
  await store.deleteStream('session-default.s1');
  await store.deleteStream('session-default.s2');
  await store.appendToStream('session-default.s2', [{ id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'again' } }]);
}

/**
 * Starts `copy-store --to <to> --page-size 1` on the source of `env` and kills it (SIGKILL) once
 * `state` shows some events copied; resolves when it is dead.
 */
async function killMidCopy(to: string, env: NodeJS.ProcessEnv, state: () => Promise<{ events: number }>): Promise<number> {
  const child = spawn(process.execPath, [...TS_NODE, 'apps/session-service/src/copy-store.ts', '--to', to, '--page-size', '1'], { cwd: REPO_ROOT, env });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<string | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  const until = Date.now() + 120_000;
  let copied: number;
  while ((copied = (await state()).events) < 50) {
    if (child.exitCode !== null) throw new Error(`copy-store ended before it was killed: ${stderr}`);
    if (Date.now() > until) throw new Error('copy-store copied nothing within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return copied;
}

/** Runs the service (main.ts) on `env`: it must refuse to start. */
function startServiceProcess(env: NodeJS.ProcessEnv) {
  return runNode([...TS_NODE, 'apps/session-service/src/main.ts'], { cwd: REPO_ROOT, env: { ...env, PORT: '0', LOG_LEVEL: 'silent' } });
}

/** What identifies each event of a log: position, stream, revision, id, type, time recorded (ms). */
const identities = (events: RecordedEvent[]) => events.map((e) => [e.position, e.streamId, e.revision, e.id, e.type, e.created.toISOString()]);

/** The digest of `store`'s whole log, computed here. */
async function digestOf(store: EventStore): Promise<string> {
  const digest = new LogDigest();
  digest.add(await store.readAll({ maxCount: 1_000_000 }));
  return digest.result().sha256;
}

let root: string;
let sourceDir: string;
beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'copy-store-edges-'));
  sourceDir = path.join(root, 'source');
  fs.mkdirSync(sourceDir);
  const store = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
  try {
    await fill(store);
  } finally {
    await store.close();
  }
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('copy-store killed mid-copy: SQLite target', () => {
  it('leaves a marked target: the service refuses it (exit 2), a new copy refuses it, --empty-partial-target copies again; an unmarked file is never emptied', async () => {
    const target = path.join(root, 'killed.sqlite');
    const copied = await killMidCopy(target, envOf({ DATA_DIR: sourceDir }), async () => sqliteState(target));
    const partial = sqliteState(target);
    expect(partial.marked).toBe(true);
    expect(partial.events).toBeGreaterThanOrEqual(copied);
    expect(partial.events).toBeLessThan(TOTAL);

    // The service on it: refused, naming the mark and what to do.
    const service = await startServiceProcess(envOf({ DATA_DIR: path.join(root, 'on-partial'), SQLITE_EVENTS_FILE: target }));
    expect(service.code).toBe(2);
    expect(service.stderr).toMatch(
      new RegExp(
        `^configuration error: SQLITE_EVENTS_FILE=${target}: the SQLite event store ${target} holds a partial copy: its table es_copy_in_progress says copy-store began copying ${path.join(sourceDir, 'events.sqlite')} into it at \\S+ and has not finished and verified it.*: run the copy again from its source with npm run copy-store -- --to ${target} --empty-partial-target`,
        'm',
      ),
    );
    expect(fs.existsSync(path.join(root, 'on-partial', 'read-models.sqlite'))).toBe(false);
    // The store itself refuses it too (every user of the library).
    expect(() => SqliteEventStore.open(target)).toThrow(/holds a partial copy: its table es_copy_in_progress says copy-store began copying/);

    // A new copy: refused without the option (nothing changed), copies with it.
    const source = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
    try {
      const refused = copyIntoTarget(source, target);
      await expect(refused).rejects.toThrow(CopyRefusedError);
      await expect(refused).rejects.toThrow(/the file holds a partial copy: .*run the same command with --empty-partial-target/);
      expect(sqliteState(target)).toEqual(partial);
    } finally {
      await source.close();
    }
    const args = [...TS_NODE, 'apps/session-service/src/copy-store.ts', '--to', target, '--empty-partial-target'];
    const again = await runNode(args, { cwd: REPO_ROOT, env: envOf({ DATA_DIR: sourceDir }) });
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(new RegExp(`^removed the partial copy ${target} \\(copy-store began copying .* and never finished\\); copying again$`, 'm'));
    expect(again.stdout).toMatch(new RegExp(`^copied ${TOTAL - PER_STREAM * 2 + 1} events of `, 'm'));
    expect(sqliteState(target)).toEqual({ events: TOTAL - PER_STREAM * 2 + 1, marked: false });
    const copy = SqliteEventStore.open(target);
    const original = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
    try {
      expect(await copy.readAll({ maxCount: 100_000 })).toEqual(await original.readAll({ maxCount: 100_000 }));
      expect(await copy.headPosition()).toBe(await original.headPosition());
    } finally {
      await copy.close();
      await original.close();
    }

    // The option never empties a file without the mark (the finished copy, someone's database).
    const unmarked = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
    try {
      const refused = copyIntoTarget(unmarked, target, { emptyPartialTarget: true });
      await expect(refused).rejects.toThrow(CopyRefusedError);
      await expect(refused).rejects.toThrow(/the file exists: .*--empty-partial-target removes only a partial copy this command marked/);
    } finally {
      await unmarked.close();
    }
    expect(sqliteState(target)).toEqual({ events: TOTAL - PER_STREAM * 2 + 1, marked: false });
  });
});

describe('copy-store --empty-partial-target: a copy still running', () => {
  it('is refused while the pid the mark names lives on this host, and empties the target once it has ended', async () => {
    const target = path.join(root, 'running.sqlite');
    // A copy in progress: its mark names a live process on this host (a sleep standing in for copy-store).
    const copier = spawn('sleep', ['60'], { stdio: 'ignore' });
    const ended = new Promise<void>((resolve) => copier.once('exit', () => resolve()));
    const marked = SqliteEventStore.open(target, { acceptCopyInProgress: true });
    await marked.appendToStream('session-default.partial', [{ id: randomUUID(), type: 'X', data: {} }]);
    await marked.logCopy().markCopyInProgress({ started: new Date(), source: '/elsewhere/events.sqlite', pid: copier.pid, host: os.hostname() });
    expect(await marked.logCopy().copyMarker()).toMatchObject({ pid: copier.pid, host: os.hostname() });
    const source = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
    try {
      const still = new RegExp(`--empty-partial-target refused: the copy that marked it .* is still running as pid ${copier.pid} on this host`);
      // The command's SQLite target (the file is not removed), and copyLog on a target store (PostgreSQL's path).
      await expect(copyIntoTarget(source, target, { emptyPartialTarget: true })).rejects.toThrow(still);
      await expect(copyLog(source, marked, { emptyPartialTarget: true })).rejects.toThrow(still);
      expect(sqliteState(target)).toEqual({ events: 1, marked: true });
      await marked.close();
      // The copy ended (killed): the same command empties the partial copy and copies again.
      copier.kill('SIGKILL');
      await ended;
      const summary = await copyIntoTarget(source, target, { emptyPartialTarget: true });
      expect(summary.events).toBe(TOTAL - PER_STREAM * 2 + 1);
      expect(sqliteState(target)).toEqual({ events: TOTAL - PER_STREAM * 2 + 1, marked: false });
    } finally {
      copier.kill('SIGKILL');
      await source.close();
    }
  });

  it('a copy records its pid and host in its mark', async () => {
    const target = SqliteEventStore.open(path.join(root, 'marked-by-copy.sqlite'), { acceptCopyInProgress: true });
    const marks: unknown[] = [];
    const watched: EventStore = Object.assign(Object.create(target) as EventStore, {
      logCopy: () => {
        const copy = target.logCopy();
        return Object.assign(Object.create(copy) as typeof copy, {
          markCopyInProgress: async (marker: Parameters<typeof copy.markCopyInProgress>[0]) => {
            await copy.markCopyInProgress(marker);
            marks.push(await copy.copyMarker());
          },
        });
      },
    });
    const source = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
    try {
      await copyLog(source, watched);
      expect(marks).toEqual([expect.objectContaining({ pid: process.pid, host: os.hostname() })]);
    } finally {
      await source.close();
      await target.close();
    }
  });
});

describe('copy-store: a source it cannot read', () => {
  it('is refused (exit code 2) naming the source and the connection error, nothing written', async () => {
    const target = path.join(root, 'never.sqlite');
    const run = await runNode([...TS_NODE, 'apps/session-service/src/copy-store.ts', '--to', target], {
      cwd: REPO_ROOT,
      env: envOf({ DATA_DIR: path.join(root, 'unused'), DATABASE_URL: 'postgres://app:secret@127.0.0.1:1/sessions' }),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^copy-store failed: the source postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/sessions cannot be read \(nothing was copied\): PostgreSQL event store: connect ECONNREFUSED 127\.0\.0\.1:1; start it, or fix DATABASE_URL/,
    );
    expect(run.stderr).not.toContain('secret');
    expect(fs.existsSync(target)).toBe(false);
  });
});

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'copy-store with PostgreSQL', () => {
  const dbs: TestDatabase[] = [];
  const newDatabase = async (tag: string) => {
    const db = await createTestDatabase(tag);
    dbs.push(db);
    return db;
  };
  afterAll(async () => {
    for (const db of dbs) await db.drop().catch(() => undefined);
  });

  it('killed mid-copy into PostgreSQL: marked; the service refuses it (exit 2); a new copy refuses it; --empty-partial-target copies again; never empties an unmarked database', async () => {
    const db = await newDatabase('copyedge_killed');
    const copied = await killMidCopy(db.url, envOf({ DATA_DIR: sourceDir }), () => postgresState(db.url));
    const partial = await postgresState(db.url);
    expect(partial.marked).toBe(true);
    expect(partial.events).toBeGreaterThanOrEqual(copied);
    expect(partial.events).toBeLessThan(TOTAL);

    const service = await startServiceProcess(envOf({ DATA_DIR: path.join(root, 'on-partial-pg'), DATABASE_URL: db.url }));
    expect(service.code).toBe(2);
    expect(service.stderr).toMatch(
      /^configuration error: DATABASE_URL=postgres:\/\/\S+: the PostgreSQL database \(DATABASE_URL\) holds a partial copy: its table es_copy_in_progress says copy-store began copying \S+events\.sqlite into it at \S+ and has not finished.*: run the copy again from its source with npm run copy-store -- --to <this DATABASE_URL> --empty-partial-target/m,
    );
    expect(fs.existsSync(path.join(root, 'on-partial-pg', 'read-models.sqlite'))).toBe(false);
    expect(await postgresState(db.url)).toEqual(partial);

    const source = SqliteEventStore.open(path.join(sourceDir, 'events.sqlite'));
    try {
      const refused = copyIntoTarget(source, db.url);
      await expect(refused).rejects.toThrow(CopyRefusedError);
      await expect(refused).rejects.toThrow(
        /^the target holds a partial copy \(\d+ events, head position \d+\): .*run the same command with --empty-partial-target/,
      );
      expect(await postgresState(db.url)).toEqual(partial);
      const lines: string[] = [];
      const summary = await copyIntoTarget(source, db.url, { emptyPartialTarget: true, say: (l) => lines.push(l) });
      expect(lines[0]).toMatch(/^emptied the partial copy in the target \(\d+ events, head position \d+; copy-store began copying/);
      expect(summary.events).toBe(TOTAL - PER_STREAM * 2 + 1);
      expect(await postgresState(db.url)).toEqual({ events: TOTAL - PER_STREAM * 2 + 1, marked: false });
      // A verified copy has no mark: the option refuses it (it is not a partial copy).
      const notPartial = copyIntoTarget(source, db.url, { emptyPartialTarget: true });
      await expect(notPartial).rejects.toThrow(/^the target is not empty .*--empty-partial-target empties only a partial copy this command marked/);
      const target = PostgresEventStore.connect(db.url);
      try {
        expect(identities(await target.readAll({ maxCount: 100_000 }))).toEqual(identities(await source.readAll({ maxCount: 100_000 })));
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
    // And the service starts on it now.
    const h = await startService({ dataDir: path.join(root, 'on-copy-pg'), env: { DATABASE_URL: db.url } });
    await h.stop();
  });

  /** Checks that `target` holds `source`'s log verbatim (positions, revisions, ids, times, deleted streams, head, digest). */
  async function expectVerbatim(source: EventStore, target: EventStore, sha256: string): Promise<void> {
    const [a, b] = [await source.readAll({ maxCount: 100_000 }), await target.readAll({ maxCount: 100_000 })];
    expect(b.length).toBe(a.length);
    expect(identities(b)).toEqual(identities(a));
    expect(b.map((e) => [e.data, e.metadata])).toEqual(a.map((e) => [e.data, e.metadata]));
    expect(await target.logCopy!().deletedStreams()).toEqual(await source.logCopy!().deletedStreams());
    expect(await target.headPosition()).toBe(await source.headPosition());
    for (const s of ['session-default.s1', 'session-default.s2', 'session-default.s3']) {
      expect(await target.streamIncarnation(s)).toBe(await source.streamIncarnation(s));
      expect(await target.streamRevision(s)).toBe(await source.streamRevision(s));
    }
    expect(await digestOf(target)).toBe(sha256);
    expect(await digestOf(source)).toBe(sha256);
  }

  it('PostgreSQL → SQLite and PostgreSQL → PostgreSQL: positions, revisions, ids, times, deleted streams, head and digest kept', async () => {
    const sourceDb = await newDatabase('copyedge_pgsource');
    const source = PostgresEventStore.connect(sourceDb.url);
    const targetDb = await newDatabase('copyedge_pgtarget');
    const intoPostgres = PostgresEventStore.connect(targetDb.url);
    const file = path.join(root, 'from-postgres.sqlite');
    try {
      await fill(source);
      // The source's times have microseconds (the server's clock); the copy keeps the milliseconds RecordedEvent holds.
      const client = new Client({ connectionString: sourceDb.url });
      await client.connect();
      const micros = (await client.query('SELECT count(*) FILTER (WHERE extract(microseconds FROM created)::bigint % 1000 <> 0) AS n FROM es_events')).rows[0]
        .n;
      await client.end();
      expect(Number(micros)).toBeGreaterThan(0);
      // PostgreSQL lists a stream deleted and not written again (s1); s2, written again, continues after its deleted life by its revisions.
      const deleted = await source.logCopy().deletedStreams();
      expect(deleted.map((d) => d.stream)).toContain('session-default.s1');

      const toSqlite = await copyIntoTarget(source, file, { pageSize: 97, sourceName: 'the PostgreSQL source' });
      const intoSqlite = SqliteEventStore.open(file);
      try {
        await expectVerbatim(source, intoSqlite, toSqlite.sha256);
      } finally {
        await intoSqlite.close();
      }
      const toPostgres = await copyLog(source, intoPostgres, { pageSize: 97 });
      expect(toPostgres.sha256).toBe(toSqlite.sha256);
      expect({ events: toPostgres.events, deleted: toPostgres.deletedStreams, head: toPostgres.head }).toEqual({
        events: TOTAL - PER_STREAM * 2 + 1,
        deleted: deleted.length,
        head: BigInt(TOTAL + 1),
      });
      await expectVerbatim(source, intoPostgres, toPostgres.sha256);
      expect((await postgresState(targetDb.url)).marked).toBe(false);
      // The copies continue as the source does: s2's next revision, a new event's position after the head.
      const next = await intoPostgres.appendToStream('session-default.s2', [{ id: randomUUID(), type: 'X', data: {} }]);
      const expected = await source.appendToStream('session-default.s2', [{ id: randomUUID(), type: 'X', data: {} }]);
      expect(next).toEqual(expected);
    } finally {
      await source.close();
      await intoPostgres.close();
    }
  });
});
