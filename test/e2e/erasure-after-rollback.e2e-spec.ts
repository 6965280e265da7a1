/**
 * An erasure after a rollback to a build before e92296e and back (newcomer ncupgrade, F1), on the
 * embedded SQLite store and on PostgreSQL. This build erases session `s` (its life ending at
 * revision 1); the older build, which knows no erased streams, writes `s` again, erases it and
 * writes it a third time from revision 0, so that life ends at revision 1 too. Back on this build,
 * `DELETE /v1/sessions/s` answered 409 `wrong_expected_revision` ("other erasures of the tenant were
 * recorded 64 times in a row …") every time, with the stream deleted and no record written, and
 * the window, the session and recall kept serving the erased text. It must answer 200 once, write
 * the record, forget the text, and answer the same when sent again.
 * Runtime: about 10 s (two service starts per store).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { CONVERSATION_EVENT, SESSION_ERASED, erasureStream, sessionKey, sessionStream } from '@lib/session';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { OlderSqliteBuild, type OlderBuildEvent } from '../../libs/session/src/write-side/testing/older-sqlite-build';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(120_000);

const TENANT = 'default';
const STREAM = sessionStream(sessionKey(TENANT, 's'));

/** A user message as a conversation event, as the older build writes it. */
const said = (id: string, text: string): OlderBuildEvent => ({
  type: CONVERSATION_EVENT,
  data: { event: { id, type: 'user', text }, costs: { chars: text.length, cl100k_base: 4, o200k_base: 4 } },
});

/** This build: session `s` written (life one, revisions 0–1) and erased. */
async function firstLifeErased(h: Harness): Promise<void> {
  await h
    .http()
    .post('/v1/sessions/s/messages')
    .send({
      messages: [
        { id: 'a', role: 'user', content: 'life one AAAA11' },
        { id: 'b', role: 'assistant', content: 'ok' },
      ],
    })
    .expect(201);
  expect((await h.http().delete('/v1/sessions/s').expect(200)).body.erasedEvents).toBe(2);
}

/** Back on this build after the older one wrote life three: the erasure answers 200 once, and nothing shows the text any more. */
async function erasedAfterRollback(h: Harness): Promise<void> {
  const seen = await h.http().get('/v1/recall').query({ q: 'SECRET33' }).expect(200);
  expect(seen.body.items.length).toBe(1);
  await h.http().get('/v1/sessions/s/window').expect(200);
  const erased = await h.http().delete('/v1/sessions/s');
  expect([erased.status, erased.body.code]).toEqual([200, undefined]);
  expect(erased.body.erasedEvents).toBe(2);
  await h.http().get('/v1/sessions/s').expect(404);
  await h.http().get('/v1/sessions/s/window').expect(404);
  expect((await h.http().get('/v1/recall').query({ q: 'SECRET33' }).expect(200)).body.items).toEqual([]);
  // sent again (its answer lost): the same answer
  expect((await h.http().delete('/v1/sessions/s').expect(200)).body).toEqual(erased.body);
  // and written again, the session is new
  await h
    .http()
    .post('/v1/sessions/s/messages')
    .send({ messages: [{ id: 'f', role: 'user', content: 'life four' }] })
    .expect(201);
  expect(
    (await h.http().get('/v1/sessions/s/window').query({ format: 'openai' }).expect(200)).body.messages.map((m: { content: string }) => m.content),
  ).toEqual(['life four']);
}

describe('an erasure after a rollback to a build before e92296e, on SQLite', () => {
  let dataDir: string | undefined;
  afterAll(() => {
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 200 once, records it, and the window, session and recall forget the text', async () => {
    let h = await startService();
    dataDir = h.dataDir;
    await firstLifeErased(h);
    await h.stop();
    const db = new Database(path.join(dataDir, 'events.sqlite'));
    const older = new OlderSqliteBuild(db);
    older.appendToSession(TENANT, 's', [said('c', 'life two')]);
    older.eraseSession(TENANT, 's');
    expect(older.appendToSession(TENANT, 's', [said('d', 'life three SECRET33'), said('e', 'ok')])).toBe(1n);
    db.close();
    h = await startService({ dataDir });
    try {
      await erasedAfterRollback(h);
    } finally {
      await h.stop();
    }
  });
});

/**
 * What a build before e92296e writes to the PostgreSQL store: it ignores `es_streams.deleted`, so it
 * writes an erased stream on after its kept revision; its erasure deletes the stream's events and
 * row, so the next write starts at revision 0, and records it without `lastRevision` under a random id.
 */
class OlderPostgresBuild {
  constructor(private readonly client: Client) {}

  async append(stream: string, events: readonly OlderBuildEvent[]): Promise<bigint> {
    await this.client.query('BEGIN');
    const head = BigInt((await this.client.query<{ p: string }>('SELECT position::text AS p FROM es_head FOR UPDATE')).rows[0].p);
    const row = (await this.client.query<{ r: string }>('SELECT revision::text AS r FROM es_streams WHERE stream = $1', [stream])).rows[0];
    let revision = row ? BigInt(row.r) : -1n;
    let position = head;
    for (const e of events)
      await this.client.query('INSERT INTO es_events (position, stream, revision, id, type, data) VALUES ($1, $2, $3, $4, $5, $6)', [
        String(++position),
        stream,
        String(++revision),
        randomUUID(),
        e.type,
        JSON.stringify(e.data),
      ]);
    await this.client.query('UPDATE es_head SET position = $1', [String(position)]);
    await this.client.query('INSERT INTO es_streams (stream, revision) VALUES ($1, $2) ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision', [
      stream,
      String(revision),
    ]);
    await this.client.query('COMMIT');
    return revision;
  }

  async erase(sessionId: string): Promise<void> {
    const { rowCount } = await this.client.query('DELETE FROM es_events WHERE stream = $1', [STREAM]);
    await this.client.query('DELETE FROM es_streams WHERE stream = $1', [STREAM]);
    await this.append(erasureStream(TENANT), [{ type: SESSION_ERASED, data: { sessionId, erasedEvents: rowCount, erasedAt: new Date().toISOString() } }]);
  }
}

describeUnlessSkipped(postgresUnavailableReason(), 'an erasure after a rollback to a build before e92296e, on PostgreSQL', () => {
  let db: TestDatabase;
  let dataDir: string | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('erasure_rollback');
  });
  afterAll(async () => {
    await db?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 200 once, records it, and the window, session and recall forget the text', async () => {
    let h = await startService({ env: { DATABASE_URL: db.url } });
    dataDir = h.dataDir;
    await firstLifeErased(h);
    await h.stop();
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const older = new OlderPostgresBuild(client);
      expect(await older.append(STREAM, [said('c', 'life two')])).toBe(2n);
      await older.erase('s');
      expect(await older.append(STREAM, [said('d', 'life three SECRET33'), said('e', 'ok')])).toBe(1n);
    } finally {
      await client.end();
    }
    h = await startService({ dataDir, env: { DATABASE_URL: db.url } });
    try {
      await erasedAfterRollback(h);
    } finally {
      await h.stop();
    }
  });
});
