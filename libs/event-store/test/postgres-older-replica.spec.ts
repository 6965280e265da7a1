/**
 * A rolling upgrade on one PostgreSQL database (newcomer ncsre, upgrade finding 2): a replica of
 * build 02a8913 starting next to current ones runs its schema set-up, which re-creates the
 * `es_append` function with its own body (ignoring `es_streams.deleted`). Current replicas must not
 * depend on it: a session erased by them is written again at once, whatever an older replica's
 * start did. Also: the set-up says what it changed, and a database set up by a newer build is refused.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Pool } from 'pg';
import { EventStoreSchemaNewerError } from '../src/errors';
import { PostgresEventStore } from '../src/postgres/postgres-event-store';
import { POSTGRES_SCHEMA_VERSION } from '../src/postgres/postgres-schema';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from './postgres-test-database';

/** What a replica of build 02a8913 runs on every start (its schema set-up, recorded from that commit). */
const OLD_REPLICA_SCHEMA_SQL = fs.readFileSync(path.join(__dirname, 'fixtures', 'postgres-schema-02a8913.sql'), 'utf8');

async function runSql(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The schema change lines of a store started on `url` (its first call), after which it is closed. */
async function changesOfStart(url: string): Promise<string[]> {
  const store = PostgresEventStore.connect(url);
  const lines: string[] = [];
  store.reportSchemaChanges((line) => lines.push(line));
  try {
    await store.headPosition();
  } finally {
    await store.close();
  }
  return lines;
}

const event = (id: string) => ({ id, type: 'Test', data: { id } });
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;

describeUnlessSkipped(postgresUnavailableReason(), 'PostgreSQL shared with a replica of an older build', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  const lines: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase('older_replica');
    store = PostgresEventStore.connect(db.url);
    store.reportSchemaChanges((line) => lines.push(line));
    await store.headPosition();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('says once that it created the schema', () => {
    expect(lines).toEqual([`PostgreSQL event store schema created (version ${POSTGRES_SCHEMA_VERSION})`]);
  });

  it('writes a stream it deleted again, at the next revision, after a 02a8913 replica replaced es_append (and new replicas started after it)', async () => {
    await store.appendToStream('s1', [event(uuid(1))], { expectedRevision: 'no_stream' });
    await store.deleteStream('s1');
    await runSql(db.url, OLD_REPLICA_SCHEMA_SQL);
    // A session erased earlier: its next life starts after the erased revision.
    await expect(store.appendToStream('s1', [event(uuid(2))], { expectedRevision: 'no_stream' })).resolves.toMatchObject({ nextExpectedRevision: 1n });
    // A stream deleted after the old replica started, by this replica and by one started after it.
    const later = PostgresEventStore.connect(db.url);
    try {
      for (const [stream, writer] of [
        ['s2', store],
        ['s3', later],
      ] as const) {
        await writer.appendToStream(stream, [event(uuid(stream === 's2' ? 3 : 5))], { expectedRevision: 'no_stream' });
        await writer.deleteStream(stream);
        await expect(writer.appendToStream(stream, [event(uuid(stream === 's2' ? 4 : 6))], { expectedRevision: 'no_stream' })).resolves.toMatchObject({
          nextExpectedRevision: 1n,
        });
        expect(await writer.streamRevision(stream)).toBe(1n);
      }
    } finally {
      await later.close();
    }
  });

  it('says what it changed when it starts on a database a 02a8913 replica set up (added column, created function, recorded version)', async () => {
    const old = await createTestDatabase('older_schema');
    const upgraded = PostgresEventStore.connect(old.url);
    try {
      await runSql(old.url, OLD_REPLICA_SCHEMA_SQL);
      const changes: string[] = [];
      upgraded.reportSchemaChanges((line) => changes.push(line));
      await upgraded.headPosition();
      expect(changes).toEqual([
        `PostgreSQL event store schema set up for version ${POSTGRES_SCHEMA_VERSION}: ALTER TABLE es_streams ADD COLUMN deleted; ALTER TABLE es_events ALTER COLUMN created SET DEFAULT clock_timestamp() (was now()); created function es_append_v2; created function es_append_in_life_v1; recorded schema version ${POSTGRES_SCHEMA_VERSION} (was none)`,
      ]);
      // Started again on it (a restart): nothing changes, nothing said.
      expect(await changesOfStart(old.url)).toEqual([]);
    } finally {
      await upgraded.close();
      await old.drop();
    }
  });

  it('adds the life-checked append function to a database an earlier version-2 build set up, and says so', async () => {
    const earlier = await createTestDatabase('v2_without_life');
    const first = PostgresEventStore.connect(earlier.url);
    try {
      await first.headPosition();
      await first.close();
      await runSql(earlier.url, 'DROP FUNCTION es_append_in_life_v1(text, text, bigint, uuid[], text[], text[], text[], uuid[])');
      const upgraded = PostgresEventStore.connect(earlier.url);
      const changes: string[] = [];
      upgraded.reportSchemaChanges((line) => changes.push(line));
      await upgraded.appendToStream('s', [event(uuid(7))], { expectedRevision: 'no_stream', incarnation: 0n });
      await upgraded.close();
      expect(changes).toEqual([`PostgreSQL event store schema set up for version ${POSTGRES_SCHEMA_VERSION}: created function es_append_in_life_v1`]);
    } finally {
      await earlier.drop();
    }
  });

  it("stamps events with the server's clock under the head lock on a database an earlier build set up (DEFAULT now()), says so once, and an older replica's appends get ordered times too", async () => {
    const earlier = await createTestDatabase('created_now');
    try {
      expect(await changesOfStart(earlier.url)).toEqual([`PostgreSQL event store schema created (version ${POSTGRES_SCHEMA_VERSION})`]);
      // What builds before 2026-12-03 created: the transaction's start time, taken before the head lock.
      await runSql(earlier.url, 'ALTER TABLE es_events ALTER COLUMN created SET DEFAULT now()');
      expect(await changesOfStart(earlier.url)).toEqual([
        `PostgreSQL event store schema set up for version ${POSTGRES_SCHEMA_VERSION}: ALTER TABLE es_events ALTER COLUMN created SET DEFAULT clock_timestamp() (was now())`,
      ]);
      // A 02a8913 replica starts beside it (its set-up leaves the default) and appends through its own es_append, 20 at once.
      await runSql(earlier.url, OLD_REPLICA_SCHEMA_SQL);
      const old = new Pool({ connectionString: earlier.url, max: 20 });
      // pool.end() resolves before every backend has gone; the DROP … WITH (FORCE) below may end a lingering
      // one (57P01), which a pool without an error listener throws as an unhandled error (seen once in CI).
      old.on('error', () => undefined);
      try {
        await Promise.all(
          Array.from({ length: 20 }, async (_, w) => {
            for (let a = 0; a < 5; a++) {
              const ids = [uuid(1000 + w * 10 + a * 2), uuid(1001 + w * 10 + a * 2)];
              await old.query("SELECT * FROM es_append($1, 'any', $2::uuid[], $3, $4, $5)", [`old-${w}`, ids, ['Test', 'Test'], ['{}', '{}'], [null, null]]);
            }
          }),
        );
        const { rows } = await old.query<{ position: string; created: Date }>('SELECT position, created FROM es_events ORDER BY position');
        expect(rows).toHaveLength(200);
        const backwards = rows.slice(1).filter((row, i) => row.created.getTime() < rows[i].created.getTime());
        expect(backwards).toEqual([]);
      } finally {
        await old.end();
      }
      expect(await changesOfStart(earlier.url)).toEqual([]);
    } finally {
      await earlier.drop();
    }
  });

  it('refuses a database whose recorded schema version is newer than this build knows, naming both', async () => {
    const newer = await createTestDatabase('newer_schema');
    try {
      const first = PostgresEventStore.connect(newer.url);
      await first.headPosition();
      await first.close();
      await runSql(newer.url, `UPDATE es_schema SET version = ${POSTGRES_SCHEMA_VERSION + 1}`);
      const late = PostgresEventStore.connect(newer.url);
      try {
        const refusal = await late.headPosition().catch((err: unknown) => err);
        expect(refusal).toBeInstanceOf(EventStoreSchemaNewerError);
        expect((refusal as Error).message).toContain(`schema version ${POSTGRES_SCHEMA_VERSION + 1}, newer than this build knows (${POSTGRES_SCHEMA_VERSION})`);
      } finally {
        await late.close();
      }
    } finally {
      await newer.drop();
    }
  });
});
