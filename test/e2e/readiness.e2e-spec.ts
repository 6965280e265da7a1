/**
 * `GET /health/ready`, the readiness probe: 503 `projection_behind` until the read models have
 * caught up with the log once since the process started (the rule reads wait for), or 503
 * `store_unavailable` when the store does not answer before that; 200 otherwise, also while the
 * store is away once caught up (and `/health`, liveness, 200 saying so); open without an API key
 * and never rate-limited, as `/health`; in the OpenAPI document.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EventStoreUnavailableError } from '@lib/event-store';
import { EVENT_STORE, SessionProjector, sessionKey, sessionStream } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';

describe('GET /health/ready', () => {
  const dirs: string[] = [];
  const harnesses: Harness[] = [];
  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'readiness-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    jest.restoreAllMocks();
    for (const h of harnesses.splice(0)) await h.stop();
  });
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('a replica starting on an existing log: 503 projection_behind until its read models caught up, then 200, also while the store is down (and /health 200 saying unavailable)', async () => {
    const shared = path.join(tempDir(), 'events.sqlite');
    const first = await startService({ dataDir: tempDir(), env: { SQLITE_EVENTS_FILE: shared } });
    const appended = await first
      .http()
      .post('/v1/sessions/existing/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'hello' }] });
    expect(appended.status).toBe(201);
    await first.stop();

    // A new replica (fresh DATA_DIR, same log) whose projector has not applied anything yet.
    const replica = await startService({ dataDir: tempDir(), env: { SQLITE_EVENTS_FILE: shared, API_KEYS: 'probe-test-key-1:t', RATE_LIMIT_PER_MINUTE: '1' } });
    harnesses.push(replica);
    const projector = replica.service.app.get(SessionProjector);
    // (It may have applied the log already: it shows none of it, nor that it reached the head.)
    const checkpoint = jest.spyOn(projector, 'checkpoint').mockReturnValue(0n);
    const reachedHead = jest.spyOn(projector, 'reachedHeadOnce').mockReturnValue(false);
    // No API key needed, never rate-limited (RATE_LIMIT_PER_MINUTE=1): every probe gets the same 503.
    for (let i = 0; i < 3; i++) {
      const behind = await replica.http().get('/health/ready');
      expect({ status: behind.status, body: behind.body }).toEqual({
        status: 503,
        body: {
          code: 'projection_behind',
          message: expect.stringMatching(/read models are still catching up with the log \(at position 0 of \d+\)/),
          catchingUpTo: expect.stringMatching(/^\d+$/),
          checkpoint: '0',
        },
      });
    }
    checkpoint.mockRestore();
    reachedHead.mockRestore();
    await projector.waitForPosition(await replica.service.store.headPosition(), 5000);
    const ready = await replica.http().get('/health/ready');
    expect({ status: ready.status, body: ready.body }).toEqual({
      status: 200,
      body: { status: 'ready', projector: { checkpoint: expect.stringMatching(/^[1-9]\d*$/) } },
    });

    // Caught up, it stays ready while the store is away (reads are served from the read models);
    // /health (liveness) answers 200 too, saying the store is unavailable.
    jest.spyOn(replica.service.store, 'headPosition').mockRejectedValue(new EventStoreUnavailableError('connection refused'));
    const away = await replica.http().get('/health/ready');
    expect(away.status).toBe(200);
    const live = await replica.http().get('/health');
    expect({ status: live.status, said: live.body.status, error: live.body.store.error }).toEqual({
      status: 200,
      said: 'unavailable',
      error: expect.stringContaining('connection refused'),
    });
    expect((await replica.http().get('/metrics')).text).toMatch(/^event_store_up 0$/m);
    jest.restoreAllMocks();
    expect((await replica.http().get('/health/ready')).status).toBe(200);
    expect((await replica.http().get('/metrics')).text).toMatch(/^event_store_up 1$/m);
  });

  it('a replica starting on a log that ends with a deleted session stream (an erasure interrupted before its record): 200 without another append, with the head as its checkpoint', async () => {
    const shared = path.join(tempDir(), 'events.sqlite');
    const first = await startService({ dataDir: tempDir(), env: { SQLITE_EVENTS_FILE: shared } });
    for (const sessionId of ['kept', 'gone'])
      expect(
        (
          await first
            .http()
            .post(`/v1/sessions/${sessionId}/events`)
            .send({ events: [{ id: `${sessionId}-1`, type: 'user', text: sessionId }] })
        ).status,
      ).toBe(201);
    // The erasure's stream deletion, and the process ends before its record.
    const stream = sessionStream(sessionKey('default', 'gone'));
    await first.service.store.deleteStream(stream, { expectedRevision: (await first.service.store.streamRevision(stream))! });
    const head = await first.service.store.headPosition();
    expect(await first.service.store.readAll({ fromPosition: head - 1n })).toEqual([]); // the head is a deleted event
    await first.stop();

    // A new replica (fresh DATA_DIR): nothing waits for its projector but the probe, and nothing is appended.
    const replica = await startService({ dataDir: tempDir(), env: { SQLITE_EVENTS_FILE: shared } });
    harnesses.push(replica);
    let ready = await replica.http().get('/health/ready');
    for (const deadline = Date.now() + 10_000; ready.status !== 200 && Date.now() < deadline; ready = await replica.http().get('/health/ready'))
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 200, body: { status: 'ready', projector: { checkpoint: head.toString() } } });
    expect(await replica.service.store.headPosition()).toBe(head);
    expect((await replica.http().get('/health')).body.projector).toMatchObject({ checkpoint: head.toString(), lag: 'caught-up' });
    expect((await replica.http().get('/v1/sessions/kept/window')).status).toBe(200);
  });

  it('answers 503 store_unavailable before it has caught up, when the store does not answer', async () => {
    const replica = await startService({ dataDir: tempDir() });
    harnesses.push(replica);
    const projector = replica.service.app.get(SessionProjector);
    jest.spyOn(projector, 'reachedHeadOnce').mockReturnValue(false);
    jest.spyOn(projector, 'checkpoint').mockReturnValue(0n);
    jest.spyOn(replica.service.store, 'headPosition').mockRejectedValue(new EventStoreUnavailableError('connection refused'));
    try {
      const down = await replica.http().get('/health/ready');
      expect({ status: down.status, code: down.body.code }).toEqual({ status: 503, code: 'store_unavailable' });
    } finally {
      jest.restoreAllMocks();
    }
  });

  // Newcomer ncverify: a PostgreSQL store restored under a running replica left every read 503 while /health said ok and /health/ready 200.
  // Newcomer ncmigrate (F2): once it noticed, the replica still answered reads from those read models (200 for sessions the restored
  // store no longer had, recall hits of them) and took writes (201) that a read with their minPosition then answered 404.
  it('refuses reads (503 read_models_off_log) and writes (503 store_unavailable, nothing written), and /health/ready 503 with /health "unavailable", while the read models come from another log than the store', async () => {
    const replica = await startService({ dataDir: tempDir() });
    harnesses.push(replica);
    const written = await replica
      .http()
      .post('/v1/sessions/lost/events')
      .send({ events: [{ id: 'l1', type: 'user', text: 'written after the backup' }] });
    expect(written.status).toBe(201);
    expect((await replica.http().get('/health/ready')).status).toBe(200);
    const projector = replica.service.app.get(SessionProjector);
    const problem = "the read models in x come from another log than the event store's: …; stop the service and run npm run rebuild-read-models";
    jest.spyOn(projector, 'state').mockReturnValue({
      checkpoint: 3n,
      running: true,
      lastError: `ReadModelsOfAnotherLogError: ${problem}`,
      lastErrorAt: new Date().toISOString(),
      offLog: true,
      readModelsDamaged: false,
      readModelsFull: null,
    });
    try {
      const ready = await replica.http().get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ code: 'read_models_off_log', message: expect.stringContaining(`not ready: ${problem}`) });
      const health = await replica.http().get('/health');
      expect({ status: health.status, state: health.body.status }).toEqual({ status: 200, state: 'unavailable' });
      for (const read of ['/v1/sessions/lost', '/v1/sessions/lost/events', '/v1/recall?q=backup', '/v1/sessions']) {
        const answer = await replica.http().get(read);
        expect({ read, status: answer.status, code: answer.body.code }).toEqual({ read, status: 503, code: 'read_models_off_log' });
        expect(answer.body.message).toMatch(/another log than the event store's.*npm run rebuild-read-models/);
      }
      const refused = await replica
        .http()
        .post('/v1/sessions/new-one/events')
        .send({ events: [{ id: 'n1', type: 'user', text: 'written after the restore' }] });
      expect({ status: refused.status, code: refused.body.code, mayHaveBeenWritten: refused.body.mayHaveBeenWritten }).toEqual({
        status: 503,
        code: 'store_unavailable',
        mayHaveBeenWritten: false,
      });
      expect(refused.body.message).toMatch(/another log than the event store's .*: nothing was written; send the write to another replica/);
      expect(await replica.service.app.get(EVENT_STORE).headPosition()).toBe(1n); // only the first append
    } finally {
      jest.restoreAllMocks();
    }
    expect((await replica.http().get('/health/ready')).status).toBe(200);
    expect((await replica.http().get('/v1/sessions/lost')).status).toBe(200);
  });

  it('is in the OpenAPI document with its 200 and 503 answers', async () => {
    const h = await startService();
    harnesses.push(h);
    const doc = (await h.http().get('/docs/openapi.json')).body as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> };
    // 200 and 503 (not ready), besides the answers every route declares (400, 408, 414, 431, 500: see http/error-codes.ts).
    const statuses = Object.keys(doc.paths['/health/ready']?.get?.responses ?? {}).sort();
    expect(statuses).toEqual(expect.arrayContaining(['200', '503']));
    expect(statuses.filter((s) => s.startsWith('2'))).toEqual(['200']);
    expect((await h.http().get('/health/ready')).status).toBe(200);
  });
});
