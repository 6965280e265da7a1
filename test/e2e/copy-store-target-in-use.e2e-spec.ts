/**
 * `npm run copy-store` into a target something else uses (newcomer ncdata69 F1):
 * - A PostgreSQL database a replica already ran on (schema set up, no event yet) passed the "empty
 *   target" check; the replica's appends mixed with the copy's, the copy failed on a duplicate key and
 *   its clean-up (TRUNCATE) deleted an append the replica had acknowledged. Now the copy marks the
 *   target, then refuses it (CopyRefusedError: exit code 2, its mark taken back, nothing written)
 *   while a service's connection (`application_name` session-memory-compaction…) is on the database;
 *   another program's (psql) is no reason.
 * - A failed copy removes only what it wrote, and only when nothing else wrote: a target written by
 *   something else meanwhile keeps everything (those writes, the copy's rows, its mark) and the
 *   message says the target needs attention. PostgreSQL and SQLite targets (a SQLite file is not removed then).
 * - A SQLite target file another connection has open (a service on it as SQLITE_EVENTS_FILE) is
 *   refused, after the mark, and a partial copy held open is not removed by --empty-partial-target.
 * PostgreSQL parts skip with one line without a server (CI runs them).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { SqliteEventStore, storeWith, type EventStore } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { copyIntoTarget } from '../../apps/session-service/src/store-copy/copy-into-target';
import { CopyFailedError, CopyRefusedError } from '../../apps/session-service/src/store-copy/copy-errors';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { postgresState, sqliteState } from '../support/copy-target-state';

jest.setTimeout(120_000);

const STREAMS = 10;
const PER_STREAM = 10;

let root: string;
let sourceFile: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'copy-in-use-'));
  sourceFile = path.join(root, 'source.sqlite');
  const source = SqliteEventStore.open(sourceFile);
  for (let s = 0; s < STREAMS; s++)
    await source.appendToStream(
      `session-default.s${s}`,
      Array.from({ length: PER_STREAM }, (_, i) => ({ id: randomUUID(), type: 'ConversationEventAppended', data: { text: `stream ${s} event ${i}` } })),
    );
  await source.close();
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/**
 * The source, read through `source`, whose second page read first runs `intrude` (another writer on
 * the target, as a replica pointed at it would be, after the copy's checks).
 */
function sourceWithIntruder(source: EventStore, intrude: () => Promise<void>): EventStore {
  let pages = 0;
  return storeWith(source, {
    readAll: async (options) => {
      if (pages++ === 1) await intrude();
      return source.readAll(options);
    },
  });
}

const INTRUDER = 'session-default.intruder';
const intruderEvent = (): { id: string; type: string; data: object } => ({
  id: randomUUID(),
  type: 'ConversationEventAppended',
  data: { text: 'acknowledged' },
});

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'copy-store into a PostgreSQL database in use', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase('wtcopy_inuse');
  });
  afterEach(async () => {
    await db?.drop();
  });

  it("is refused while a service is connected (its schema set up, no event yet), the mark taken back; an operator's psql is no reason", async () => {
    const replica = PostgresEventStore.connect(db.url);
    await replica.headPosition();
    const psql = new Client({ connectionString: db.url, application_name: 'psql' });
    await psql.connect();
    const source = SqliteEventStore.open(sourceFile);
    try {
      const refused = copyIntoTarget(source, db.url, { pageSize: 7 });
      await expect(refused).rejects.toThrow(CopyRefusedError);
      await expect(refused).rejects.toThrow(
        /^the target is in use: connection pid \d+ "session-memory-compaction" of user \S+.*copy-store copies only into a store no service uses.*nothing of this copy was written \(its mark es_copy_in_progress was removed again\)\. Stop every service \(and rebuild-read-models\) on the target, run the copy again, and point replicas at the target only once the copy has been verified \(docs\/stores\.md, "Switching stores", step 4\)$/,
      );
      expect(await postgresState(db.url)).toEqual({ events: 0, marked: false });
      // The replica stopped (psql still connected): the same copy runs.
      await replica.close();
      const summary = await copyIntoTarget(source, db.url, { pageSize: 7 });
      expect(summary.events).toBe(STREAMS * PER_STREAM);
      expect(await postgresState(db.url)).toEqual({ events: STREAMS * PER_STREAM, marked: false });
    } finally {
      await replica.close();
      await psql.end();
      await source.close();
    }
  });

  it('a failed copy keeps what something else wrote into the target meanwhile (and its own rows and mark), saying the target needs attention', async () => {
    const source = SqliteEventStore.open(sourceFile);
    // Connected after the copy's check (named as no service, as a replica started then would be refused by the mark).
    const other = PostgresEventStore.connect(db.url, { acceptCopyInProgress: true, applicationName: 'intruder' });
    let acknowledged: bigint | undefined;
    try {
      const failure = copyIntoTarget(
        sourceWithIntruder(source, async () => {
          acknowledged = (await other.appendToStream(INTRUDER, [intruderEvent()])).position;
        }),
        db.url,
        { pageSize: 7 },
      );
      await expect(failure).rejects.toThrow(CopyFailedError);
      await expect(failure).rejects.toThrow(
        /^the copy failed: .*duplicate key.*; something else wrote into the target during the copy \(1 event this copy did not write, the first at position 8 of stream session-default\.intruder\): a service \(or another program\) is using it, so nothing was removed: .*The target needs attention: stop every service using it/,
      );
      expect(acknowledged).toBe(8n);
      expect(await postgresState(db.url)).toEqual({ events: 8, marked: true });
      expect((await other.readStream(INTRUDER)).map((e) => e.position)).toEqual([8n]);
    } finally {
      await other.close();
      await source.close();
    }
  });
});

describe('copy-store into a SQLite file in use', () => {
  it('a new target file another connection opened before the mark is refused, the file left to it, the mark taken back', async () => {
    const file = path.join(root, 'opened.sqlite');
    const source = SqliteEventStore.open(sourceFile);
    let service: Database.Database | undefined;
    try {
      const refused = copyIntoTarget(source, file, {
        // A service started on the path as the copy created it, before the mark: it has the file open.
        onOpened: () => {
          service = new Database(file);
          service.prepare('SELECT count(*) FROM sqlite_master').get();
        },
      });
      await expect(refused).rejects.toThrow(CopyRefusedError);
      await expect(refused).rejects.toThrow(
        /^the target is in use: another connection has the file open \(a service or rebuild-read-models on it as SQLITE_EVENTS_FILE/,
      );
      expect(fs.existsSync(file)).toBe(true);
      expect(sqliteState(file)).toEqual({ events: 0, marked: false });
    } finally {
      service?.close();
      await source.close();
    }
  });

  it('--empty-partial-target does not remove a partial copy another connection has open', async () => {
    const file = path.join(root, 'partial.sqlite');
    const partial = SqliteEventStore.open(file, { acceptCopyInProgress: true });
    await partial.logCopy().markCopyInProgress({ started: new Date(), source: 'an old source' });
    await partial.appendToStream(INTRUDER, [intruderEvent()]);
    const source = SqliteEventStore.open(sourceFile);
    try {
      const refused = copyIntoTarget(source, file, { emptyPartialTarget: true });
      await expect(refused).rejects.toThrow(CopyRefusedError);
      await expect(refused).rejects.toThrow(/--empty-partial-target refused: the file holds a partial copy .* but another connection has it open/);
      expect(sqliteState(file)).toEqual({ events: 1, marked: true });
    } finally {
      await partial.close();
      await source.close();
    }
    // Closed: the partial copy is emptied and copied again.
    const source2 = SqliteEventStore.open(sourceFile);
    try {
      expect((await copyIntoTarget(source2, file, { emptyPartialTarget: true })).events).toBe(STREAMS * PER_STREAM);
    } finally {
      await source2.close();
    }
  });

  it('a failed copy keeps the file when something else wrote into it meanwhile, saying the target needs attention', async () => {
    const file = path.join(root, 'intruded.sqlite');
    const source = SqliteEventStore.open(sourceFile);
    let other: SqliteEventStore | undefined;
    try {
      const failure = copyIntoTarget(
        sourceWithIntruder(source, async () => {
          other = SqliteEventStore.open(file, { acceptCopyInProgress: true });
          await other.appendToStream(INTRUDER, [intruderEvent()]);
        }),
        file,
        { pageSize: 7 },
      );
      await expect(failure).rejects.toThrow(CopyFailedError);
      await expect(failure).rejects.toThrow(
        /; something else wrote into the target during the copy \(1 event this copy did not write, the first at position 8 of stream session-default\.intruder\): .*The target needs attention/,
      );
      expect(sqliteState(file)).toEqual({ events: 8, marked: true });
    } finally {
      await other?.close();
      await source.close();
    }
  });
});
