/**
 * Erasure on disk: after `deleteStream` (and after `close`), no byte of the deleted stream's
 * content is left in the SQLite files (database, WAL), while other streams' content is.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore, type EventData } from '../src';

const SECRET = 'RESIDUE-PHRASE-777';
const KEPT = 'KEPT-PHRASE-555';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'es-erasure-'));
  dirs.push(dir);
  return dir;
}

/** Which files of `dir` (database, -wal, -shm) contain `text`. */
function filesContaining(dir: string, text: string): string[] {
  return readdirSync(dir).filter((f) => readFileSync(join(dir, f)).includes(text));
}

const ev = (text: string): EventData => ({ id: randomUUID(), type: 'UserMessageAppended', data: { text } });

describe.each([
  ["on the caller's thread", false],
  ['in the writer thread', true],
])('SqliteEventStore erasure on disk, transactions %s', (_label, writerThread) => {
  it('leaves no byte of a deleted stream in the database nor the WAL, before and after close', async () => {
    const dir = newDir();
    const file = join(dir, 'events.sqlite');
    const store = SqliteEventStore.open(file, { pollIntervalMs: 50, writerThread });
    // Interleaved appends of several streams (page splits move cells around), small rows and a
    // large one that spills over to overflow pages, separate transactions so the WAL holds
    // several versions of the same pages.
    for (let n = 0; n < 300; n++) {
      await store.appendToStream('session-doomed', [ev(`turn ${n}: ${SECRET}`)]);
      await store.appendToStream(`session-keeper${n % 3}`, [ev(`turn ${n}: ${KEPT}`)]);
    }
    await store.appendToStream('session-doomed', [ev(`${SECRET} `.repeat(2000))]);
    expect(filesContaining(dir, SECRET).length).toBeGreaterThan(0);

    await store.deleteStream('session-doomed');
    expect(await store.readStream('session-doomed')).toEqual([]);
    expect(filesContaining(dir, SECRET)).toEqual([]);
    if (existsSync(`${file}-wal`)) expect(statSync(`${file}-wal`).size).toBe(0);

    // Appends after the deletion keep working and the content of the other streams is still there.
    await store.appendToStream('session-keeper0', [ev(`later ${KEPT}`)]);
    expect((await store.readStream('session-keeper1')).length).toBe(100);
    await store.close();
    expect(filesContaining(dir, SECRET)).toEqual([]);
    expect(filesContaining(dir, KEPT)).toEqual(['events.sqlite']);

    const reopened = SqliteEventStore.open(file);
    expect((await reopened.readAll({ maxCount: 10_000 })).length).toBe(301);
    await reopened.close();
  });

  it('purges the WAL after a deletion batched with appends (group commit) and turns secure_delete on', async () => {
    const dir = newDir();
    const file = join(dir, 'events.sqlite');
    const store = SqliteEventStore.open(file, { pollIntervalMs: 50, writerThread });
    expect((store as unknown as { db: { pragma(s: string, o: object): unknown } }).db.pragma('secure_delete', { simple: true })).toBe(1);
    for (let n = 0; n < 50; n++) await store.appendToStream('session-gone', [ev(`${n} ${SECRET}`)]);
    await Promise.all([
      store.appendToStream('session-other', [ev(KEPT)]),
      store.deleteStream('session-gone'),
      store.appendToStream('session-other', [ev(KEPT)]),
    ]);
    expect(filesContaining(dir, SECRET)).toEqual([]);
    await store.close();
    expect(filesContaining(dir, SECRET)).toEqual([]);
  });
});

// Newcomer ncretention (F1): a reader on the file during the erasure (a `sqlite3 .backup` of the
// running service) refused the checkpoint, and the erased text stayed in the WAL until the next write.
describe.each([
  ["on the caller's thread", false],
  ['in the writer thread', true],
])('SqliteEventStore erasure while another connection reads, transactions %s', (_label, writerThread) => {
  it('scrubs the WAL once the reader is gone, without any further write, and tells it once', async () => {
    const dir = newDir();
    const file = join(dir, 'events.sqlite');
    const store = SqliteEventStore.open(file, { pollIntervalMs: 50, writerThread, busyTimeoutMs: 100, walPurgeRetry: { firstDelayMs: 5, maxDelayMs: 40 } });
    const scrubbed: Array<{ file: string; attempts: number }> = [];
    store.reportWalScrubs((s) => scrubbed.push(s));
    for (let n = 0; n < 40; n++) await store.appendToStream('session-doomed', [ev(`turn ${n}: ${SECRET}`)]);
    await store.appendToStream('session-keeper', [ev(KEPT)]);
    const reader = new Database(file);
    reader.exec('BEGIN');
    expect(reader.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 41 });

    await store.deleteStream('session-doomed');
    // the reader's snapshot holds the old pages: the checkpoint is refused, and says so
    expect(filesContaining(dir, SECRET)).toContain('events.sqlite-wal');
    expect(store.pendingWalScrub()).toEqual({ file: `${file}-wal`, since: expect.any(String) });
    // still refused while the reader stays (the timer keeps trying)
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(store.pendingWalScrub()).not.toBeNull();
    expect(scrubbed).toEqual([]);

    reader.exec('COMMIT');
    reader.close();
    // no write from here on: the retry bound (40 ms between tries) is all it takes
    for (let waited = 0; store.pendingWalScrub() !== null && waited < 2000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.pendingWalScrub()).toBeNull();
    expect(filesContaining(dir, SECRET)).toEqual([]);
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(scrubbed).toEqual([{ file: `${file}-wal`, attempts: expect.any(Number), pendingMs: expect.any(Number) }]);
    expect((await store.readStream('session-keeper')).length).toBe(1);
    await store.close();
  });
});

// Newcomer ncupgrade: after a rollback, a build from before `deleted_streams` wrote an erased stream
// again from revision 0; this build's second erasure of it recorded 0 over 4, and the stream's next
// life reused revision 1.
describe('SqliteEventStore deleted revisions after a rollback', () => {
  it('keeps the highest deleted revision when a stream written again by an older build from revision 0 is deleted again', async () => {
    const dir = newDir();
    const file = join(dir, 'events.sqlite');
    let store = SqliteEventStore.open(file);
    await store.appendToStream(
      's',
      [1, 2, 3, 4, 5].map((n) => ev(`first life ${n}`)),
    );
    await store.deleteStream('s');
    await store.close();
    // what an older build does: it knows no deleted_streams and starts the stream at revision 0
    const older = new Database(file);
    older.prepare("INSERT INTO events (stream, revision, id, type, data, created) VALUES ('s', 0, ?, 'UserMessageAppended', '{}', 0)").run(randomUUID());
    older.prepare("INSERT INTO streams (stream, revision) VALUES ('s', 0)").run();
    older.close();
    store = SqliteEventStore.open(file);
    await store.deleteStream('s');
    const next = await store.appendToStream('s', [ev('third life')]);
    expect(next.nextExpectedRevision).toBe(5n);
    await store.close();
  });
});
