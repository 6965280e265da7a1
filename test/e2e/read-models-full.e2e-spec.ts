/**
 * The read models' disk full while the event store still takes appends (the default layout keeps
 * both files in DATA_DIR; `events.sqlite` has free pages left after `read-models.sqlite` met the
 * full disk). Before: appends kept being acknowledged while the projector could not write, the log
 * ran hundreds of events ahead, every read of any session waited `MAX_WAIT_MS` and answered 503
 * `projection_behind`, and `/health` said a bare `degraded` (ncsqliteops finding F1). Now: writes
 * answer 503 `store_unavailable` saying the disk is full (nothing written), reads needing a later
 * position answer 503 at once saying why, reads of what the read models hold are served (without
 * `minPosition` too, for a session, or a tenant, none of whose acknowledged events waits), `/health`
 * says `unavailable` with `readModels.full` naming the file, and all of it ends without a restart
 * once space is freed. The full disk is SQLite's own `SQLITE_FULL` ("database or disk is full"):
 * the read models' connection may not grow its file past `PRAGMA max_page_count` (the tmpfs runs
 * of the finding give the same error code).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadModelStore } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';

/** Polls `check` every 100 ms until it answers true, for at most `ms` (the projector retries at most every 5 s). */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 100))) if (await check()) return true;
  return check();
}

describe('the read models cannot be written: their disk is full', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('refuses writes, answers reads at once (served up to what the read models hold), says so in /health, and recovers without a restart', async () => {
    // A read wait as long as the test's timeout: a read that waited it out would fail the test.
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'read-models-full-')), env: { MAX_WAIT_MS: '60000' } });
    const http = harness.http;
    const append = (session: string, id: string, text = 'hello') =>
      http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: [{ id, type: 'user', text }] });
    const first = await append('kept', 'k1');
    expect(first.status).toBe(201);
    expect((await http().get('/v1/sessions/kept/window')).status).toBe(200);

    // The read models' file may not grow any more: the next batch that needs a page fails with SQLITE_FULL.
    const db = harness.service.app.get(ReadModelStore).db;
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    const accepted = await append('full', 'f1', 'x'.repeat(200_000));
    expect(accepted.status).toBe(201); // the event store still took it: this one is in the log, not in the read models
    const full = async () => typeof ((await http().get('/health')).body as { readModels: { full?: string | null } }).readModels.full === 'string';
    expect(await eventually(full, 10_000)).toBe(true);

    const health = await http().get('/health');
    expect(health.body).toMatchObject({
      status: 'unavailable',
      projector: { lag: 'behind', lastError: expect.stringMatching(/database or disk is full/) },
      readModels: {
        damaged: null,
        full: expect.stringMatching(/^the read models cannot be written: the disk holding .*read-models\.sqlite is full \(.*\); they stay at position/),
      },
    });
    expect((await http().get('/metrics')).text).toMatch(/^read_models_full 1$/m);
    const ready = await http().get('/health/ready');
    expect({ status: ready.status, code: ready.body.code, retryAfter: ready.headers['retry-after'] }).toEqual({
      status: 503,
      code: 'store_unavailable',
      retryAfter: '2',
    });

    // Writes: refused, nothing written (the log does not run ahead of what reads can show).
    const head = (await http().get('/health')).body.store.headPosition as string;
    const refused = await append('kept', 'k2');
    // A moment before retrying (newcomer ncops67 F6: clients retrying at once spent their rate budget).
    expect(refused.headers['retry-after']).toBe('2');
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 503,
      body: {
        code: 'store_unavailable',
        message: 'the read models cannot be written: their disk is full; nothing was written: retry once space is freed (GET /health names the file)',
        mayHaveBeenWritten: false,
      },
    });
    expect((await http().get('/health')).body.store.headPosition).toBe(head);

    // Reads needing the event the projector cannot apply (this process acknowledged it): 503 at once, saying why.
    const behind = await http().get('/v1/sessions/full/window');
    expect({ status: behind.status, code: behind.body.code, minPosition: behind.body.minPosition }).toEqual({
      status: 503,
      code: 'projection_behind',
      minPosition: accepted.body.position,
    });
    expect(behind.body.message).toMatch(/^the read models cannot be written: their disk is full, so they stay at position \d+ and cannot reach position \d+/);
    // A session whose acknowledged events are all projected is served without minPosition (before: 503, waiting for `full`'s event).
    const kept = await http().get('/v1/sessions/kept/window');
    expect({ status: kept.status, ids: kept.body.events?.map((e: { id: string }) => e.id) }).toEqual({ status: 200, ids: ['k1'] });
    // What the read models hold is served: minPosition=0 waits for nothing, a position they reached is served.
    const served = await http().get(`/v1/sessions/kept/window?minPosition=${first.body.position}`);
    expect({ status: served.status, ids: served.body.events?.map((e: { id: string }) => e.id) }).toEqual({ status: 200, ids: ['k1'] });
    expect((await http().get('/v1/sessions/kept/events?minPosition=0')).status).toBe(200);

    // Space freed: the projector's next retry applies the log, and everything works again without a restart.
    db.pragma('max_page_count = 4294967294');
    const healthy = async () => (await http().get('/health')).body.status === 'ok';
    expect(await eventually(healthy, 15_000)).toBe(true);
    expect((await http().get('/health')).body.readModels.full).toBeNull();
    expect((await http().get('/v1/sessions/full/window')).body.events.map((e: { id: string }) => e.id)).toEqual(['f1']);
    expect((await append('kept', 'k2')).status).toBe(201);
    expect((await http().get('/v1/sessions/kept/window')).body.events.map((e: { id: string }) => e.id)).toEqual(['k1', 'k2']);
    expect((await http().get('/health/ready')).status).toBe(200);
  });

  // Before: a read without minPosition waited for every write this process acknowledged, so once
  // one event was left unprojected every session of every tenant answered 503 until space was freed.
  it('without minPosition, serves the sessions and tenants none of whose acknowledged events waits unprojected, and only those', async () => {
    harness = await startService({
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'read-models-full-')),
      env: { MAX_WAIT_MS: '60000', API_KEYS: 'key-of-tenant-a:tenant-a,key-of-tenant-b:tenant-b' },
    });
    const http = harness.http;
    const as = (tenant: 'a' | 'b', path: string) => http().get(path).set('Authorization', `Bearer key-of-tenant-${tenant}`);
    const append = (tenant: 'a' | 'b', session: string, id: string, text: string) =>
      http()
        .post(`/v1/sessions/${session}/events`)
        .set('Authorization', `Bearer key-of-tenant-${tenant}`)
        .send({ events: [{ id, type: 'user', text }] });
    expect((await append('a', 'kept', 'k1', 'kept words')).status).toBe(201);
    expect((await append('b', 'full', 'b1', 'other words')).status).toBe(201); // tenant b's session of the same id
    expect((await as('b', '/v1/sessions/full/window')).status).toBe(200);

    const db = harness.service.app.get(ReadModelStore).db;
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const accepted = await append('a', 'full', 'f1', 'x'.repeat(200_000));
    expect(accepted.status).toBe(201);
    const full = async () => typeof ((await http().get('/health')).body as { readModels: { full?: string | null } }).readModels.full === 'string';
    expect(await eventually(full, 10_000)).toBe(true);

    const answer = async (tenant: 'a' | 'b', path: string) => {
      const res = await as(tenant, path);
      return res.status === 200 ? 200 : `${res.status} ${res.body.code} ${res.body.minPosition}`;
    };
    const behind = `503 projection_behind ${accepted.body.position}`;
    // The session with the unprojected event, and every tenant-wide read of its tenant: 503 at once.
    expect({
      window: await answer('a', '/v1/sessions/full/window'),
      log: await answer('a', '/v1/sessions/full/events'),
      summary: await answer('a', '/v1/sessions/full'),
      compactions: await answer('a', '/v1/sessions/full/compactions'),
      list: await answer('a', '/v1/sessions'),
      erasures: await answer('a', '/v1/erasures'),
      recall: await answer('a', '/v1/recall?q=words'),
    }).toEqual({ window: behind, log: behind, summary: behind, compactions: behind, list: behind, erasures: behind, recall: behind });
    // Another session of that tenant, and everything of another tenant (the same session id included): served.
    expect({
      window: await answer('a', '/v1/sessions/kept/window'),
      log: await answer('a', '/v1/sessions/kept/events'),
      summary: await answer('a', '/v1/sessions/kept'),
      policy: await answer('a', '/v1/sessions/kept/policy'),
      compactions: await answer('a', '/v1/sessions/kept/compactions'),
      recallOfKept: await answer('a', '/v1/recall?q=words&sessionId=kept'),
      otherTenantWindow: await answer('b', '/v1/sessions/full/window'),
      otherTenantList: await answer('b', '/v1/sessions'),
      otherTenantRecall: await answer('b', '/v1/recall?q=words'),
    }).toEqual({
      window: 200,
      log: 200,
      summary: 200,
      policy: 200,
      compactions: 200,
      recallOfKept: 200,
      otherTenantWindow: 200,
      otherTenantList: 200,
      otherTenantRecall: 200,
    });
    expect((await as('a', '/v1/sessions/kept/window')).body.events.map((e: { id: string }) => e.id)).toEqual(['k1']);
    expect((await as('a', '/v1/recall?q=words&sessionId=kept')).body.items.map((h: { eventId: string }) => h.eventId)).toEqual(['k1']);
  });
});
