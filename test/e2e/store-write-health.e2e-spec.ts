/**
 * Writes the store refuses while it answers reads (another process holds the SQLite file locked:
 * `SQLITE_BUSY` after the busy timeout) show in `/health` (`status: "degraded"`,
 * `store.lastWriteError`), in `/metrics` (`event_store_writable` 0,
 * `event_store_write_failures_total{code="SQLITE_BUSY"}`) and in one warn line naming the cause, and
 * all of it clears at the next write that succeeds (one more line). They showed only as 503s: /health
 * said ok and `event_store_up` 1 (ncobs finding 1).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { captureLogLines } from '../support/captured-log-lines';
import { startService, type Harness } from '../support/service-harness';

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
