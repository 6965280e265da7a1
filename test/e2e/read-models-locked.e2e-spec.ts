/**
 * A DELETE while another process holds the write lock of `read-models.sqlite` (newcomer ncverify48
 * F1: the erasure of the session's rows on the event loop waited SQLite's 5 s busy timeout, every
 * request waited with it, and the DELETE then answered 500): the service keeps answering, the
 * DELETE answers 200 (the erasure is in the log), reads of the session wait for its record instead
 * of showing its rows, and once the lock is released the rows are gone.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { captureLogLines } from '../support/captured-log-lines';
import { startService, type Harness } from '../support/service-harness';

describe('an erasure while another process holds the read models write lock', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('answers 200 without holding other requests, reads of the session wait for it, and its rows are gone once the lock is released', async () => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-locked-erase-')), env: { MAX_WAIT_MS: '300' } });
    const http = harness.http;
    await http()
      .post('/v1/sessions/doomed/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'a secret to erase' }] })
      .expect(201);
    expect((await http().get('/v1/sessions/doomed/window')).status).toBe(200);
    const lines = captureLogLines(['warn']);

    const other = new Database(path.join(harness.dataDir, 'read-models.sqlite'));
    other.exec('BEGIN EXCLUSIVE');
    try {
      // the service runs in this process: a wait on its event loop shows in this loop's delay (before: the 5 s busy timeout)
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const erasure = http().delete('/v1/sessions/doomed');
      const health = await http().get('/health');
      expect(health.status).toBe(200);
      const answer = await erasure;
      expect({ status: answer.status, sessionId: answer.body.sessionId, erasedEvents: answer.body.erasedEvents }).toEqual({
        status: 200,
        sessionId: 'doomed',
        erasedEvents: 1,
      });
      delay.disable();
      expect(delay.max / 1e6).toBeLessThan(2500);
      expect(lines.some((line) => line.startsWith('the erasure of session "doomed" is recorded at position'))).toBe(true);
      // the rows are still in the locked read models: a read waits for the erasure record, never shows them
      const read = await http().get('/v1/sessions/doomed/window');
      expect({ status: read.status, code: read.body.code }).toEqual({ status: 503, code: 'projection_behind' });
      expect(JSON.stringify(read.body)).not.toContain('a secret to erase');
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    let after = await http().get('/v1/sessions/doomed/window');
    for (let i = 0; i < 100 && after.status !== 404; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await http().get('/v1/sessions/doomed/window');
    }
    expect({ status: after.status, code: after.body.code, erased: typeof after.body.erasedAt }).toEqual({
      status: 404,
      code: 'session_not_found',
      erased: 'string',
    });
    expect((await http().get('/v1/recall?q=secret')).body.items).toEqual([]);
  });
});
