/**
 * The SQLite event store's file replaced while the service runs (newcomer ncdata69 F2: a restore by
 * `mv` into a running service's DATA_DIR). Before, appends were answered 201 into the old, unlinked
 * file and lost at stop, `/health` said ok, and a replica started on the same path afterwards gave
 * the same positions to other events. Now the first operation after the change refuses with 503
 * `store_corrupt` saying the file was replaced and to restart; `/health` says unavailable and names
 * it, and readiness answers 503 `store_corrupt` (a load balancer routes writes elsewhere); the
 * replaced file's `-wal` and `-shm` are set aside, so the restarted service opens the file now at
 * the path as it is.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { startService, type Harness } from '../support/service-harness';

describe('the SQLite event store file replaced while the service runs', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
    harness = undefined;
  });

  it('refuses the next append with 503 store_corrupt saying so, /health unavailable; a restart serves the file now at the path', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-replaced-'));
    harness = await startService({ dataDir });
    const http = harness.http;
    const append = (session: string, id: string) =>
      http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: [{ id, type: 'user', text: `text of ${id}` }] });
    expect((await append('s1', 'e1')).status).toBe(201);
    const file = path.join(dataDir, 'events.sqlite');
    // The README's restore, done without stopping the service: a backup moved onto the path.
    const backup = path.join(dataDir, 'backup.sqlite');
    const copy = new Database(file);
    copy.exec(`VACUUM INTO '${backup}'`);
    copy.close();
    expect((await append('s1', 'e2')).status).toBe(201); // after the backup: not in it
    // `mv` leaves the replaced file's -wal and -shm at their paths (ncrecheck70 F1: the restart applied that WAL to the backup).
    fs.renameSync(backup, file);

    const refused = await append('s2', 'e3');
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: 'store_corrupt' });
    expect(refused.body.message).toMatch(/^the event store's file was replaced or removed while the service ran: nothing was written.*restarted/);
    expect(refused.body.message).toMatch(/the replaced file's events\.sqlite-wal\.replaced-\S+ and events\.sqlite-shm\.replaced-\S+ were set aside for it/);
    expect(refused.body.message).not.toContain(dataDir);
    const health = await http().get('/health');
    expect(health.body).toMatchObject({
      status: 'unavailable',
      store: { error: expect.stringContaining(`the event store file ${file} was replaced or removed`) },
    });
    expect(health.body.store.error).toMatch(/events\.sqlite-wal\.replaced-\S+ and events\.sqlite-shm\.replaced-\S+ were set aside/);
    // Not ready: every write is refused until the restart (ncrecheck70 F5: readiness stayed 200).
    const ready = await http().get('/health/ready');
    expect({ status: ready.status, code: ready.body.code }).toEqual({ status: 503, code: 'store_corrupt' });

    await harness.stop();
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'store-replaced-rm-')), env: { SQLITE_EVENTS_FILE: file } });
    // The backup's log: e1 only; e3 was refused, e2 came after the backup.
    const window = await harness.http().get('/v1/sessions/s1/window').expect(200);
    expect(window.body.events.map((e: { id: string }) => e.id)).toEqual(['e1']);
    expect((await harness.http().get('/v1/sessions/s2/window')).status).toBe(404);
  }, 60_000);
});
