/**
 * Copies of erased text on disk in DATA_DIR, over the running service (newcomer ncretention):
 * - F1: a reader on events.sqlite and read-models.sqlite during `DELETE /v1/sessions/{id}` (a
 *   `sqlite3 .backup` of the running service, as README advises) refused the WAL checkpoint; the
 *   erased text stayed in both -wal files after the reader was gone (the events' until the next
 *   write, the read models' for good). Now /health says `erasure.pendingWalScrub` meanwhile, the
 *   scrub is retried until it succeeds without any further write, and one line says when it did.
 * - F2: read models moved aside as damaged keep the text of sessions erased afterwards: /health
 *   names them (`erasure.damagedReadModelsAside`), a warn line at start and one per erasure.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { captureLogLines } from '../support/captured-log-lines';
import { startService, type Harness } from '../support/service-harness';

const MARKER = 'WALMARK4242';

/** The files of `dir` holding `text`. */
function filesHolding(dir: string, text: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => fs.statSync(path.join(dir, name)).isFile() && fs.readFileSync(path.join(dir, name)).includes(text))
    .sort();
}

describe('erasure on disk while another connection reads, and with read models moved aside', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
    harness = undefined;
  });

  it.each([
    ['transactions on the event loop', { SQLITE_WRITER_THREAD: 'false' }],
    ['the writer thread and the projector worker', { SQLITE_WRITER_THREAD: 'true', PROJECTOR_WORKER: 'true' }],
  ])('F1 (%s): the WAL scrub refused by a reader is pending in /health, then done without any further write once it is gone', async (_label, env) => {
    harness = await startService({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'erasure-wal-')), env });
    const { http, dataDir } = harness;
    const lines = captureLogLines(['log', 'warn']);
    for (let i = 0; i < 5; i++)
      await http()
        .post('/v1/sessions/victim/events')
        .send({ events: [{ id: `u${i}`, type: 'user', text: `my loyalty ref is ${MARKER} (${i})` }] })
        .expect(201);
    const kept = await http()
      .post('/v1/sessions/kept/events')
      .send({ events: [{ id: 'k', type: 'user', text: 'kept text' }] })
      .expect(201);
    // With PROJECTOR_WORKER its thread may still be starting (see Harness.projected).
    await harness.projected(kept.body.position);
    expect((await http().get(`/v1/recall?q=${MARKER}`).expect(200)).body.items.length).toBeGreaterThan(0);
    const readers = ['events.sqlite', 'read-models.sqlite'].map((name) => {
      const reader = new Database(path.join(dataDir, name), { readonly: true });
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM sqlite_master').get();
      return reader;
    });

    await http().delete('/v1/sessions/victim').expect(200);
    const pending = (await http().get('/health').expect(200)).body.erasure;
    expect(pending.pendingWalScrub.map((p: { file: string }) => p.file).sort()).toEqual(['events.sqlite-wal', 'read-models.sqlite-wal']);
    expect(pending.damagedReadModelsAside).toEqual([]);
    expect(filesHolding(dataDir, MARKER).length).toBeGreaterThan(0);

    for (const reader of readers) {
      reader.exec('COMMIT');
      reader.close();
    }
    // No write from here on; retries are at most 2 s apart.
    let erasure = pending;
    for (let waited = 0; erasure.pendingWalScrub.length > 0 && waited < 8000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      erasure = (await http().get('/health').expect(200)).body.erasure;
    }
    expect(erasure).toEqual({ pendingWalScrub: [], damagedReadModelsAside: [] });
    expect(filesHolding(dataDir, MARKER)).toEqual([]);
    const scrubbed = lines.filter((line) => line.startsWith('the WAL scrub after an erasure completed'));
    expect(scrubbed.sort()).toEqual([
      expect.stringMatching(/^the WAL scrub after an erasure completed: events\.sqlite-wal holds no erased page any more \(.+ ms, \d+ tries\)$/),
      expect.stringMatching(/^the WAL scrub after an erasure completed: read-models\.sqlite-wal holds no erased page any more/),
    ]);
    expect(scrubbed.join('\n')).not.toContain('victim');
  });

  it('F2: read models moved aside as damaged are named in /health, at start and at each erasure while they exist', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'erasure-aside-'));
    harness = await startService({ dataDir });
    await harness
      .http()
      .post('/v1/sessions/victim/events')
      .send({ events: [{ id: 'u1', type: 'user', text: `my loyalty ref is ${MARKER}` }] })
      .expect(201);
    // An erasure record the rebuild replays: no line for it (newcomer ncdata69 F4: one per record at each rebuild).
    await harness
      .http()
      .post('/v1/sessions/earlier/events')
      .send({ events: [{ id: 'e1', type: 'user', text: 'erased before' }] })
      .expect(201);
    await harness.http().delete('/v1/sessions/earlier').expect(200);
    await harness.stop();
    // the header overwritten: not a database
    const fd = fs.openSync(path.join(dataDir, 'read-models.sqlite'), 'r+');
    fs.writeSync(fd, Buffer.from('X'.repeat(16)), 0, 16, 0);
    fs.closeSync(fd);

    const lines = captureLogLines(['log', 'warn']);
    harness = await startService({ dataDir });
    const aside = fs.readdirSync(dataDir).filter((name) => /^read-models\.sqlite\.damaged-[\dTZ-]+$/.test(name));
    expect(aside).toHaveLength(1);
    const warning = `DATA_DIR holds read models moved aside as damaged (${aside[0]}): they hold the conversation text of the sessions they held, which no erasure reaches; delete them (with their -wal and -shm files) once inspected`;
    for (let waited = 0; (await harness.http().get('/health/ready')).status !== 200 && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.filter((line) => line.includes('moved aside as damaged'))).toEqual([`at start: ${warning}`]);
    // The move itself is a line of the service's logger (a JSON line), not plain text on stderr (newcomer ncops67 F2).
    expect(lines.filter((line) => line.includes(`moved aside as ${aside[0]}`))).toEqual([
      expect.stringMatching(/^the read models file .*read-models\.sqlite is damaged \(.*\): moved aside as read-models\.sqlite\.damaged-/),
    ]);
    expect((await harness.http().get('/health').expect(200)).body.erasure).toEqual({ pendingWalScrub: [], damagedReadModelsAside: aside });

    await harness.http().delete('/v1/sessions/victim').expect(200);
    for (let waited = 0; !lines.some((line) => line.startsWith('a session was erased')) && waited < 5000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.filter((line) => line.includes('moved aside as damaged'))).toEqual([`at start: ${warning}`, `a session was erased: ${warning}`]);
    // what the operator is told: the erased text is still in the moved-aside file only
    expect(filesHolding(dataDir, MARKER)).toEqual(aside);

    fs.rmSync(path.join(dataDir, aside[0]));
    expect((await harness.http().get('/health').expect(200)).body.erasure.damagedReadModelsAside).toEqual([]);
  });
});
