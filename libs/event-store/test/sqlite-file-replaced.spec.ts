/**
 * The SQLite store's file replaced or removed while it is open (ncdata69 F2): a backup moved onto
 * the path with `mv`, or the file deleted. Before, appends were acknowledged into the old, unlinked
 * file (lost at stop), and a writer thread or another process opening the path wrote a second log at
 * the same positions. Now the store refuses every write from the first one after the change, as it
 * does for a damaged file, and its write probe (what `/health` runs) finds the change without a write.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { EventStoreCorruptError, EventStoreReplacedError, SqliteEventStore } from '../src';

const note = (text: string) => [{ id: randomUUID(), type: 'note', data: { text } }];

/** Rows of `stream` in the file at `file` now. */
function rowsOf(file: string, stream: string): number {
  const raw = new Database(file, { readonly: true });
  try {
    return (raw.prepare('SELECT count(*) AS n FROM events WHERE stream = ?').get(stream) as { n: number }).n;
  } finally {
    raw.close();
  }
}

describe.each([
  { writerThread: true, groupCommit: true },
  { writerThread: false, groupCommit: true },
  { writerThread: false, groupCommit: false },
])('SqliteEventStore whose file is replaced while open (writer thread %p)', (options) => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(tmpdir(), 'sqlite-replaced-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a file moved onto its path: the next append is refused (nothing written in either file), then every operation; the listener told once', async () => {
    const file = path.join(dir, 'events.sqlite');
    const store = SqliteEventStore.open(file, options);
    const told: EventStoreCorruptError[] = [];
    store.reportCorruption((e) => told.push(e));
    await store.appendToStream('s1', note('before'));
    // A backup of the file as it is now, moved onto the path (`mv`), the old -wal and -shm removed.
    const backup = path.join(dir, 'backup.sqlite');
    new Database(file).exec(`VACUUM INTO '${backup}'`);
    fs.renameSync(backup, file);
    for (const suffix of ['-wal', '-shm']) fs.rmSync(file + suffix, { force: true });

    const append = store.appendToStream('s1', note('after the swap'));
    await expect(append).rejects.toBeInstanceOf(EventStoreReplacedError);
    await expect(append).rejects.toThrow(
      /was replaced or removed while the service ran \(another file is at its path now .*\): nothing more is written.*restart the service/,
    );
    await expect(store.appendToStream('s2', note('later'))).rejects.toBeInstanceOf(EventStoreReplacedError);
    await expect(store.headPosition()).rejects.toBeInstanceOf(EventStoreReplacedError);
    expect(told).toHaveLength(1);
    await store.close();
    expect(rowsOf(file, 's1')).toBe(1);
    expect(rowsOf(file, 's2')).toBe(0);
  });

  it('the file deleted: the write probe finds it without a write', async () => {
    const file = path.join(dir, 'events.sqlite');
    const store = SqliteEventStore.open(file, options);
    await store.appendToStream('s1', note('before'));
    await store.probeWrite();
    fs.rmSync(file);
    await expect(store.probeWrite()).rejects.toThrow(/\(it is no longer at its path: deleted or moved away\)/);
    await expect(store.appendToStream('s1', note('after'))).rejects.toBeInstanceOf(EventStoreReplacedError);
    await store.close();
  });

  it("its -wal and -shm files deleted (a restore's steps, run with the service up): the next append is refused (ncrecheck69 N1)", async () => {
    const file = path.join(dir, 'events.sqlite');
    const store = SqliteEventStore.open(file, options);
    await store.appendToStream('s1', note('before'));
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    for (const suffix of ['-wal', '-shm']) fs.rmSync(file + suffix);
    const append = store.appendToStream('s1', note('into the unlinked WAL'));
    await expect(append).rejects.toBeInstanceOf(EventStoreReplacedError);
    await expect(append).rejects.toThrow(/its -wal file was deleted or replaced/);
    await store.close();
    expect(rowsOf(file, 's1')).toBeLessThanOrEqual(1);
  });

  it("another store's file moved onto its path, its -wal and -shm left there: they are set aside, and the store opened again at the path reads the moved-in file as it is (ncrecheck70 F1)", async () => {
    const file = path.join(dir, 'events.sqlite');
    // Another store's file, with 40 events of its own, checkpointed (a backup).
    const otherFile = path.join(dir, 'other.sqlite');
    const other = SqliteEventStore.open(otherFile, { writerThread: false });
    for (let i = 0; i < 40; i++) await other.appendToStream(`o${i % 3}`, note(`other ${i} ${'y'.repeat(700)}`));
    await other.close();
    const store = SqliteEventStore.open(file, options);
    for (let i = 0; i < 30; i++) await store.appendToStream('s1', note(`ours ${i} ${'x'.repeat(1500)}`));
    expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(0);
    // The restore, while the store runs: `mv` onto the path leaves the old file's -wal and -shm.
    fs.copyFileSync(otherFile, `${file}.new`);
    fs.renameSync(`${file}.new`, file);
    const append = store.appendToStream('s1', note('after the swap'));
    await expect(append).rejects.toThrow(/the replaced file's events\.sqlite-wal\.replaced-\S+ and events\.sqlite-shm\.replaced-\S+ were set aside/);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    expect(fs.readdirSync(dir).filter((name) => name.includes('.replaced-'))).toHaveLength(2);
    await store.close();
    // The restart: the moved-in file, whole and as it was.
    const reopened = SqliteEventStore.open(file, { ...options, quickCheck: true });
    expect(await reopened.headPosition()).toBe(40n);
    await reopened.close();
    expect(rowsOf(file, 's1')).toBe(0);
    expect(rowsOf(file, 'o0') + rowsOf(file, 'o1') + rowsOf(file, 'o2')).toBe(40);
  });

  it.each([['-wal'], ['-wal', '-shm']])(
    'its %s deleted: what was acknowledged is copied into the file when the change is found, so a crash then loses nothing (ncrecheck70 F3)',
    async (...deleted) => {
      const file = path.join(dir, 'events.sqlite');
      const store = SqliteEventStore.open(file, options);
      for (let i = 0; i < 5; i++) await store.appendToStream('s1', note(`acknowledged ${i}`));
      for (const suffix of deleted) fs.rmSync(file + suffix);
      await expect(store.appendToStream('s1', note('refused'))).rejects.toBeInstanceOf(EventStoreReplacedError);
      // The file's bytes now, as a process killed at this moment leaves them (no close, no checkpoint at close).
      const crashed = path.join(dir, 'crashed.sqlite');
      fs.copyFileSync(file, crashed);
      expect(rowsOf(crashed, 's1')).toBe(5);
      await store.close();
      expect(rowsOf(file, 's1')).toBe(5);
    },
  );

  it('a path that still names its file is not a change (the same file, appends as before)', async () => {
    const file = path.join(dir, 'events.sqlite');
    const store = SqliteEventStore.open(file, options);
    for (let i = 0; i < 3; i++) await store.appendToStream('s1', note(`n${i}`));
    await store.probeWrite();
    expect(await store.headPosition()).toBe(3n);
    await store.close();
  });
});
