/**
 * The PostgreSQL database dropped under a running replica (newcomer ncops61): `/health/ready` and a write answered
 * a bare `the event store is unavailable; retry later`, while `/health` named the missing database. They now say
 * what is wrong (the database does not exist, SQLSTATE 3D000), without the server's names, and nothing is written.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import {
  POSTGRES_ADMIN_URL,
  createTestDatabase,
  describeUnlessSkipped,
  postgresUnavailableReason,
  type TestDatabase,
} from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(120_000);

describeUnlessSkipped(postgresUnavailableReason(), 'the PostgreSQL database dropped under a running replica', () => {
  let db: TestDatabase;
  let root: string;
  let h: Harness | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('dropped_ready');
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropped-ready-'));
  });
  afterAll(async () => {
    await h?.stop();
    await db.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a write to the running replica, and /health/ready of one started meanwhile, answer 503 store_unavailable saying the database does not exist', async () => {
    h = await startService({ dataDir: path.join(root, 'a'), env: { DATABASE_URL: db.url } });
    await h
      .http()
      .post('/v1/sessions/s/messages')
      .send({ messages: [{ id: 'm1', role: 'user', content: 'hello' }] })
      .expect(201);
    const admin = new Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE ${db.name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
    const expected = /^(not ready: )?the event store is unavailable: the event store's PostgreSQL database does not exist \(.*\) \(SQLSTATE 3D000\)/;
    // The pool's connections were ended by the drop: the next one is refused at login.
    const write = await h
      .http()
      .post('/v1/sessions/s/messages')
      .send({ messages: [{ id: 'm2', role: 'user', content: 'again' }] });
    expect(write.status).toBe(503);
    expect(write.body).toMatchObject({ code: 'store_unavailable', mayHaveBeenWritten: false, message: expect.stringMatching(expected) });
    expect(write.body.message).not.toContain(db.name);
    // A replica that starts now waits for the database (it retries): not ready, saying why (a ready one stays ready, serving its read models).
    const later = await startService({ dataDir: path.join(root, 'b'), env: { DATABASE_URL: db.url } });
    try {
      const ready = await later.http().get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ code: 'store_unavailable', message: expect.stringMatching(expected) });
      expect(ready.body.message).not.toContain(db.name);
    } finally {
      await later.stop();
    }
  });
});
