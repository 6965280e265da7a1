/**
 * Writes the store refuses while it answers reads (another process holds the SQLite file locked:
 * `SQLITE_BUSY` after the busy timeout) show in `/health` (`status: "degraded"`,
 * `store.lastWriteError`), in `/metrics` (`event_store_writable` 0,
 * `event_store_write_failures_total{code="SQLITE_BUSY"}`) and in one warn line naming the cause, and
 * all of it clears at the next write that succeeds (one more line). They showed only as 503s: /health
 * said ok and `event_store_up` 1 (ncobs finding 1).
 *
 * A command whose store failure comes at a read it makes before writing counts the same: on
 * PostgreSQL, `LOCK TABLE es_events IN ACCESS EXCLUSIVE MODE` (what `VACUUM FULL es_events` takes)
 * cancels an append's load of the log by the statement timeout, over HTTP and over NATS; on SQLite,
 * a read failing under an append. Before, those answered 503 (or waited in place) while /health
 * said ok (the last stop's closing note).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { EventStoreUnavailableError, SqliteEventStore } from '@lib/event-store';

import { captureLogLines } from '../support/captured-log-lines';
import { startService, type Harness } from '../support/service-harness';
import { NATS_TEST_URL, describeWithNats, eventually, publishCommand, readStream, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';

jest.setTimeout(60_000);

/** The value of the /metrics series `series` (its first line starting with it), or undefined. */
async function metricOf(harness: Harness, series: string): Promise<string | undefined> {
  return ((await harness.http().get('/metrics')).text.split('\n').find((line) => line.startsWith(`${series} `)) ?? '').split(' ')[1];
}

/** /health's body, once `check` holds for it (within 15 s; the last body else). */
async function healthOnce(
  harness: Harness,
  check: (body: { status: string; store?: { lastWriteError?: unknown } }) => boolean,
): Promise<Record<string, unknown>> {
  let body = (await harness.http().get('/health')).body as { status: string };
  const deadline = Date.now() + 15_000;
  while (!check(body) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    body = (await harness.http().get('/health')).body as { status: string };
  }
  return body;
}

describe('writes failing while reads answer (SQLite file locked by another process)', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('/health says degraded with store.lastWriteError, /metrics event_store_writable 0 and the failures by code, one warn line each way', async () => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'write-health-')) });
    const http = harness.http;
    const metric = async (name: string): Promise<string | undefined> =>
      ((await http().get('/metrics')).text.split('\n').find((line) => line.startsWith(name)) ?? '').split(' ')[1];
    const append = (id: string) =>
      http()
        .post('/v1/sessions/locked/events')
        .send({ events: [{ id, type: 'user', text: 'hello' }] });
    expect((await append('e1')).status).toBe(201);
    expect(await metric('event_store_writable')).toBe('1');
    const lines = captureLogLines(['warn']);

    // Another process's exclusive transaction on the events file (as `sqlite3 events.sqlite 'BEGIN EXCLUSIVE'` would hold it).
    const holder = new Database(path.join(harness.dataDir, 'events.sqlite'));
    holder.exec('BEGIN EXCLUSIVE');
    try {
      const refused = await append('e2');
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: 'store_unavailable' });
      const health = await http().get('/health');
      expect({ status: health.status, body: health.body }).toMatchObject({
        status: 200,
        body: {
          status: 'degraded',
          store: { error: null, lastWriteError: { code: 'SQLITE_BUSY', message: expect.stringMatching(/database is locked/), at: expect.any(String) } },
        },
      });
      expect(await metric('event_store_up')).toBe('1');
      expect(await metric('event_store_writable')).toBe('0');
      expect(await metric('event_store_write_failures_total{code="SQLITE_BUSY"}')).toBe('1');
      expect(lines.filter((line) => line.startsWith('writes to the event store fail (SQLITE_BUSY: '))).toHaveLength(1);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }

    expect((await append('e2')).status).toBe(201);
    const health = await http().get('/health');
    expect(health.body).toMatchObject({ status: 'ok', store: { error: null, lastWriteError: null } });
    expect(await metric('event_store_writable')).toBe('1');
    expect(lines.filter((line) => line.startsWith('writes to the event store'))).toEqual([
      expect.stringMatching(/^writes to the event store fail \(SQLITE_BUSY: /),
      expect.stringMatching(/^writes to the event store succeed again \(1 failed write over \d+\.\d s, from the first failure to this write\)$/),
    ]);
  });

  it('clears degraded without a write once the lock is released: a write probe (every 5 s while degraded) finds the store writable, one line', async () => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'write-probe-')) });
    const http = harness.http;
    const lines = captureLogLines(['warn']);
    const holder = new Database(path.join(harness.dataDir, 'events.sqlite'));
    holder.exec('BEGIN EXCLUSIVE');
    try {
      const refused = await http()
        .post('/v1/sessions/locked/events')
        .send({ events: [{ id: 'e1', type: 'user', text: 'hello' }] });
      expect(refused.status).toBe(503);
      expect((await http().get('/health')).body).toMatchObject({ status: 'degraded' });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    // No write from here on: before, /health said degraded until the next write, however long that took.
    const deadline = Date.now() + 12_000;
    let health = await http().get('/health');
    while (health.body.status !== 'ok' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      health = await http().get('/health');
    }
    expect(health.body).toMatchObject({ status: 'ok', store: { error: null, lastWriteError: null } });
    expect(((await http().get('/metrics')).text.split('\n').find((line) => line.startsWith('event_store_writable ')) ?? '').split(' ')[1]).toBe('1');
    expect(lines.filter((line) => line.startsWith('writes to the event store'))).toEqual([
      expect.stringMatching(/^writes to the event store fail \(SQLITE_BUSY: /),
      expect.stringMatching(
        /^writes to the event store succeed again \(1 failed write over \d+\.\d s, from the first failure to a write probe that found the store writable\)$/,
      ),
    ]);
  });
});

describe('a read failing under an append (SQLite)', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('is a failed write: /health degraded with its code, event_store_writable 0; the next append that succeeds clears it', async () => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'write-health-read-')) });
    const append = (sessionId: string, id: string) =>
      harness!
        .http()
        .post(`/v1/sessions/${sessionId}/events`)
        .send({ events: [{ id, type: 'user', text: 'hello' }] });
    // The append's load of the session (a new one: its revision, read before anything is decided) fails.
    jest
      .spyOn(SqliteEventStore.prototype, 'streamRevision')
      .mockRejectedValueOnce(
        new EventStoreUnavailableError('SQLite event store: disk I/O error', Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })),
      );
    const refused = await append('read-fails', 'e1');
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: 'store_unavailable' });
    expect((await harness.http().get('/health')).body).toMatchObject({
      status: 'degraded',
      store: { error: null, lastWriteError: { code: 'SQLITE_IOERR', message: expect.stringMatching(/disk I\/O error/) } },
    });
    expect(await metricOf(harness, 'event_store_writable')).toBe('0');
    expect(await metricOf(harness, 'event_store_write_failures_total{code="SQLITE_IOERR"}')).toBe('1');

    expect((await append('read-fails', 'e1')).status).toBe(201);
    expect((await harness.http().get('/health')).body).toMatchObject({ status: 'ok', store: { lastWriteError: null } });
    expect(await metricOf(harness, 'event_store_writable')).toBe('1');
  });

  it('a query whose read fails is not a failed write', async () => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'write-health-query-')) });
    const spy = jest.spyOn(SqliteEventStore.prototype, 'readStream').mockRejectedValue(new EventStoreUnavailableError('SQLite event store: disk I/O error'));
    // Time travel reads the log (not the read models): the read fails, the query answers 503.
    expect((await harness.http().get('/v1/sessions/q/window?atRevision=0')).status).toBe(503);
    expect(spy).toHaveBeenCalled();
    spy.mockRestore();
    expect((await harness.http().get('/health')).body).toMatchObject({ store: { lastWriteError: null } });
  });
});

describeUnlessSkipped(postgresUnavailableReason(), 'an append blocked at its load by a lock on es_events (PostgreSQL, VACUUM FULL)', () => {
  let db: TestDatabase;
  let harness: Harness | undefined;
  let locker: Client;
  const env = (): Record<string, string> => ({ DATABASE_URL: db.url, DATABASE_STATEMENT_TIMEOUT_MS: '300' });
  beforeAll(async () => {
    db = await createTestDatabase('write_health_lock');
    locker = new Client({ connectionString: db.url });
    await locker.connect();
  });
  afterEach(async () => {
    await locker.query('ROLLBACK').catch(() => undefined);
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
    harness = undefined;
  });
  afterAll(async () => {
    await locker.end();
    await db.drop();
  });

  /** A service whose session `sessionId` has an event in the log but not in its memory (restarted after writing it), so an append loads it. */
  async function restartedWith(sessionId: string, extraEnv: Record<string, string> = {}, beforeRestart?: () => Promise<void>): Promise<Harness> {
    const first = await startService({ env: env() });
    await first
      .http()
      .post(`/v1/sessions/${sessionId}/events`)
      .send({ events: [{ id: 'first', type: 'user', text: 'hello' }] })
      .expect(201);
    await first.stop();
    await beforeRestart?.();
    return startService({ dataDir: first.dataDir, env: { ...env(), ...extraEnv } });
  }

  const lockEvents = async (): Promise<void> => {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE es_events IN ACCESS EXCLUSIVE MODE');
  };

  it('over HTTP: 503, /health degraded with store.lastWriteError (the timeout SQLSTATE), event_store_writable 0; cleared once the lock is gone', async () => {
    harness = await restartedWith('locked-http');
    const h = harness;
    await lockEvents();
    const refused = await h
      .http()
      .post('/v1/sessions/locked-http/events')
      .send({ events: [{ id: 'second', type: 'user', text: 'again' }] });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: 'store_unavailable' });
    const health = (await h.http().get('/health')).body;
    expect(health).toMatchObject({ status: 'degraded', store: { error: null, lastWriteError: { code: expect.stringMatching(/^(57014|55P03)$/) } } });
    expect(await metricOf(h, 'event_store_writable')).toBe('0');

    await locker.query('ROLLBACK');
    // No write: the write probe (every 5 s while degraded) finds the store writable.
    expect(await healthOnce(h, (body) => body.status === 'ok')).toMatchObject({ status: 'ok', store: { lastWriteError: null } });
    expect(await metricOf(h, 'event_store_writable')).toBe('1');
    await h
      .http()
      .post('/v1/sessions/locked-http/events')
      .send({ events: [{ id: 'second', type: 'user', text: 'again' }] })
      .expect(201);
  });

  describeWithNats('es_events lock, NATS')('over NATS', () => {
    const names = natsNames(uniquePrefix());
    const nats = useNatsSuite('store write health over NATS', { quiet: true, prefixes: [names.prefix] });
    afterAll(async () => {
      await harness?.stop();
      await nats.close();
    });

    it('a command waiting in place on the lock shows as degraded; it goes through once the lock is gone and /health clears', async () => {
      harness = await restartedWith('locked-nats', { NATS_URL: NATS_TEST_URL, NATS_PREFIX: names.prefix });
      const h = harness;
      await lockEvents();
      await publishCommand(
        nats.client.js,
        commandSubject(names.prefix, 'default', 'locked-nats', 'append'),
        { events: [{ id: 'second', type: 'user', text: 'again' }] },
        { msgId: randomUUID() },
      );
      // (the projector, whose reads of the log the lock blocks too, may make it degraded first)
      const degraded = await healthOnce(h, (body) => body.status === 'degraded' && body.store?.lastWriteError != null);
      expect(degraded).toMatchObject({ status: 'degraded', store: { lastWriteError: { code: expect.stringMatching(/^(57014|55P03)$/) } } });
      expect(await metricOf(h, 'event_store_writable')).toBe('0');

      await locker.query('ROLLBACK');
      const [answer] = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.locked-nats`, 1);
      expect(answer.headers.Status).toBe('201');
      await eventually(async () => (await h.http().get('/health')).body.status === 'ok', 15_000, '/health ok');
      expect(await metricOf(h, 'event_store_writable')).toBe('1');
    });

    it('a redelivered command failing at its check of the log (before its handler runs) shows as degraded too', async () => {
      const subject = commandSubject(names.prefix, 'default', 'locked-redelivered', 'append');
      harness = await restartedWith('locked-redelivered', { NATS_URL: NATS_TEST_URL, NATS_PREFIX: names.prefix }, async () => {
        // Delivered once and given back for 5 s while no replica runs: the service gets it redelivered then (after the lock
        // below; a start waits for the log), and checks the log for its events before its handler runs.
        await ensureStreams(nats.client.jsm, names, 30_000);
        await publishCommand(nats.client.js, subject, { events: [{ id: 'second', type: 'user', text: 'again' }] }, { msgId: randomUUID() });
        const taken = await (await nats.client.js.consumers.get(names.commandStream, names.commandConsumer)).next({ expires: 5000 });
        expect(taken?.info.deliveryCount).toBe(1);
        taken!.nak(5_000);
      });
      await lockEvents();
      const h = harness;
      // (the projector, whose reads of the log the lock blocks too, may make it degraded first)
      const degraded = await healthOnce(h, (body) => body.status === 'degraded' && body.store?.lastWriteError != null);
      expect(degraded).toMatchObject({ status: 'degraded', store: { lastWriteError: { code: expect.stringMatching(/^(57014|55P03)$/) } } });

      await locker.query('ROLLBACK');
      const [answer] = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.locked-redelivered`, 1);
      expect(answer.headers.Status).toBe('201');
      await eventually(async () => (await h.http().get('/health')).body.status === 'ok', 15_000, '/health ok');
    });
  });
});
