/**
 * Newcomer ncpg73 F1 and F3, against a PostgreSQL database of the test's own (skipped with one line without a server;
 * CI runs it):
 * - F1: a role denied a privilege the service needs (PostgreSQL 15 and later grant no CREATE on `public` to a role that
 *   does not own the database) made every write 500 `internal` "may be retried" and readiness a bare "unavailable".
 *   Now the start is refused (exit code 2) naming `DATABASE_URL` (password masked), the role and the grants; a role
 *   with only read and write on tables another role created is served (a start that changes nothing runs no DDL); a
 *   privilege revoked while running answers 503 `store_unavailable` saying what to grant, `/health` naming the role.
 * - F3: a start refused because the log is empty while the read models reached a position created the schema first,
 *   so the `pg_restore` its message asks for collided. Now it leaves the database as it found it; a database whose
 *   events go past its head (such a collided restore) is refused as that, not as an empty log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ReadModelStore, SESSION_PROJECTOR_NAME } from '@lib/session';
import { ConfigurationError } from '../../apps/session-service/src/config/configuration-error';
import {
  POSTGRES_ADMIN_URL,
  createTestDatabase,
  describeUnlessSkipped,
  postgresUnavailableReason,
  runSql,
  type TestDatabase,
} from '../../libs/event-store/test/postgres-test-database';
import { startService } from '../support/service-harness';

jest.setTimeout(60_000);

/** The service's tables present in the database of `url`. */
async function tablesOf(url: string): Promise<string[]> {
  const rows = await runSql<{ name: string }>(url, "SELECT tablename AS name FROM pg_tables WHERE tablename LIKE 'es\\_%' ORDER BY 1");
  return rows.map((r) => r.name);
}

/** A DATA_DIR whose read models reached `checkpoint` (another store's, or the one lost). */
function dataDirAt(checkpoint: bigint): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ncpg73-'));
  const readModels = ReadModelStore.open(path.join(dir, 'read-models.sqlite'));
  readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, checkpoint);
  readModels.close();
  return dir;
}

const append = (id: string) => ({ events: [{ id, type: 'user', text: 'hi' }] });

describeUnlessSkipped(postgresUnavailableReason(), 'PostgreSQL: a role without privileges, and a start refused on an empty log (ncpg73)', () => {
  let db: TestDatabase;
  const dirs: string[] = [];
  const newDir = (checkpoint = 0n) => {
    const dir = dataDirAt(checkpoint);
    dirs.push(dir);
    return dir;
  };
  beforeAll(() => {
    for (const level of ['log', 'warn'] as const) jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());
  beforeEach(async () => {
    db = await createTestDatabase('ncpg73');
  });
  afterEach(async () => {
    await db.drop();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('F1: the role DATABASE_URL logs in as', () => {
    let role: string;
    let roleUrl: string;
    beforeEach(async () => {
      role = `ncpg73_app_${randomBytes(4).toString('hex')}`;
      await runSql(POSTGRES_ADMIN_URL, `CREATE ROLE ${role} LOGIN`);
      await runSql(POSTGRES_ADMIN_URL, `GRANT CONNECT ON DATABASE ${db.name} TO ${role}`);
      const url = new URL(db.url);
      url.username = role;
      url.password = 'hunter2pw'; // the test server trusts every password: it must never be shown
      roleUrl = url.toString();
    });
    afterEach(async () => {
      await db.drop();
      await runSql(POSTGRES_ADMIN_URL, `DROP ROLE IF EXISTS ${role}`);
    });

    it('without CREATE on the schema: the start is refused naming DATABASE_URL (masked), the role and the grants; nothing created', async () => {
      const refused = await startService({ dataDir: newDir(), env: { DATABASE_URL: roleUrl } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message.startsWith(`DATABASE_URL=${roleUrl.replace(':hunter2pw@', ':***@')}: PostgreSQL denied the role ${role} a privilege`)).toBe(true);
      expect(message).toContain('permission denied for schema public, SQLSTATE 42501');
      expect(message).toContain(`GRANT CREATE ON SCHEMA public TO ${role}`);
      expect(message).toContain(`GRANT SELECT, INSERT, UPDATE, DELETE ON es_events, es_streams, es_head, es_schema TO ${role}`);
      expect(message).not.toContain('hunter2pw');
      expect(await tablesOf(db.url)).toEqual([]);
    });

    it('with read and write on tables another role created: served; a privilege revoked while running answers 503 saying what to grant', async () => {
      // The first start as the database's superuser creates the schema.
      const first = await startService({ dataDir: newDir(), env: { DATABASE_URL: db.url } });
      await first.stop();
      await runSql(db.url, `GRANT SELECT, INSERT, UPDATE, DELETE ON es_events, es_streams, es_head, es_schema TO ${role}`);
      const h = await startService({ dataDir: newDir(), env: { DATABASE_URL: roleUrl } });
      try {
        await h.http().post('/v1/sessions/s1/events').send(append('a')).expect(201);
        // Writes no longer allowed (reads still are): the write probe fails as the appends do, so /health keeps the error.
        await runSql(db.url, `REVOKE INSERT, UPDATE, DELETE ON es_events, es_head FROM ${role}`);
        const refused = await h.http().post('/v1/sessions/s1/events').send(append('b')).expect(503);
        expect(refused.body).toMatchObject({ code: 'store_unavailable', mayHaveBeenWritten: false });
        expect(refused.body.message).toMatch(
          /PostgreSQL denied DATABASE_URL's role a privilege .*SELECT, INSERT, UPDATE and DELETE on es_events.*\(SQLSTATE 42501\)/,
        );
        const health = (await h.http().get('/health').expect(200)).body;
        expect(health.store.lastWriteError).toMatchObject({ code: '42501' });
        expect(health.store.lastWriteError.message).toContain(
          `PostgreSQL event store: DATABASE_URL=${roleUrl.replace(':hunter2pw@', ':***@')}: PostgreSQL denied the role ${role} a privilege the service needs (permission denied for table es_`,
        );
        expect(health.store.lastWriteError.message).toContain(`GRANT SELECT, INSERT, UPDATE, DELETE ON es_events, es_streams, es_head, es_schema TO ${role}`);
        expect(JSON.stringify(health)).not.toContain('hunter2pw');
      } finally {
        await h.stop();
      }
    });
  });

  describe('F3: a start refused on an empty log', () => {
    it('leaves a new database as it found it: no schema, so a restore into it does not collide', async () => {
      const refused = await startService({ dataDir: newDir(8746n), env: { DATABASE_URL: db.url } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConfigurationError);
      expect((refused as Error).message).toContain("the event store's log is empty (head position 0) while they reached position 8746");
      expect(await tablesOf(db.url)).toEqual([]);
      // A replica of its own (no read models yet) sets the database up as before.
      const h = await startService({ dataDir: newDir(), env: { DATABASE_URL: db.url } });
      await h.stop();
      expect(await tablesOf(db.url)).toEqual(['es_events', 'es_head', 'es_schema', 'es_streams']);
    });

    it('refuses events past the head (a restore that collided with a schema created before it) as that, changing nothing', async () => {
      const h = await startService({ dataDir: newDir(), env: { DATABASE_URL: db.url } });
      for (const id of ['a', 'b', 'c']) await h.http().post('/v1/sessions/s1/events').send(append(id)).expect(201);
      await h.stop();
      // What the collided pg_restore left: the dump's events, the head row of the schema created before it.
      await runSql(db.url, 'UPDATE es_head SET position = 0');
      for (const checkpoint of [3n, 0n]) {
        const refused = await startService({ dataDir: newDir(checkpoint), env: { DATABASE_URL: db.url } }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(ConfigurationError);
        const message = (refused as Error).message;
        expect(message).toContain("the event store's tables hold events up to position 3, but its head (es_head) is at position 0: a pg_restore collided");
        expect(message).toMatch(/drop the database and create it again .*restore the backup into the empty database/);
        expect(message).not.toContain('log is empty');
      }
      expect(await runSql(db.url, 'SELECT position::text AS position FROM es_head')).toEqual([{ position: '0' }]);
    });
  });
});
