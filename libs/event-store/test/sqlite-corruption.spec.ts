import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import * as path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { EventStoreCorruptError, EventStoreUnavailableError, SqliteEventStore } from '../src';
import { isSqliteDiskFull, toStoreError } from '../src/sqlite/sqlite-errors';

/** Overwrites `count` 4 KiB pages of `file` from its middle with random bytes (as `dd conv=notrunc`). */
function damagePages(file: string, count: number): void {
  const pages = Math.floor(statSync(file).size / 4096);
  const fd = openSync(file, 'r+');
  try {
    for (let i = 0; i < count; i++) writeSync(fd, randomBytes(4096), 0, 4096, (Math.floor(pages / 2) + i) * 4096);
  } finally {
    closeSync(fd);
  }
}

/** A store at `file` holding enough events (about 12 MiB: more than SQLite's page cache) that reading them all reads the file. */
async function filledStore(file: string): Promise<SqliteEventStore> {
  const store = SqliteEventStore.open(file, { writerThread: false });
  const text = 'x'.repeat(3000);
  for (let batch = 0; batch < 40; batch++) {
    await store.appendToStream(
      `s-${batch}`,
      Array.from({ length: 100 }, (_, i) => ({ id: randomUUID(), type: 'note', data: { text: `${batch}-${i} ${text}` } })),
    );
  }
  store.purgeWal();
  return store;
}

/** Reads every stream of {@link filledStore} from the file (streams are not answered from memory, unlike the global log's latest events). */
async function readEverything(store: SqliteEventStore): Promise<void> {
  for (let batch = 0; batch < 40; batch++) await store.readStream(`s-${batch}`);
}

describe('SqliteEventStore on a damaged file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sqlite-corrupt-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to open a file with overwritten pages when quickCheck is on, naming the file and the remedy (and opens it without)', async () => {
    const file = path.join(dir, 'events.sqlite');
    await (await filledStore(file)).close();
    damagePages(file, 3);
    const progress: Array<{ bytes: number; ms?: number }> = [];
    let error: unknown;
    try {
      SqliteEventStore.open(file, { quickCheck: true, onQuickCheck: (p) => progress.push(p) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EventStoreCorruptError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/PRAGMA quick_check: .+restore .+ from a backup.+\.recover/);
    expect(progress.map((p) => p.ms === undefined)).toEqual([true, false]);
    expect(progress[0].bytes).toBe(statSync(file).size);
    // Without the check the damage goes unnoticed at open (the first read of a damaged page finds it).
    const unchecked = SqliteEventStore.open(file);
    await unchecked.close();
  });

  it('opens a sound file with quickCheck on', async () => {
    const file = path.join(dir, 'events.sqlite');
    await (await filledStore(file)).close();
    const store = SqliteEventStore.open(file, { quickCheck: true });
    expect(await store.headPosition()).toBe(4000n);
    await store.close();
  });

  it('refuses a file whose header is not a database as damaged', () => {
    const file = path.join(dir, 'events.sqlite');
    const fd = openSync(file, 'w');
    writeSync(fd, randomBytes(8192));
    closeSync(fd);
    expect(() => SqliteEventStore.open(file)).toThrow(EventStoreCorruptError);
  });

  it('damaged while open: the first read meeting a damaged page puts the store in its corrupt state; writes and the head are refused with it, the listener told once', async () => {
    const file = path.join(dir, 'events.sqlite');
    const store = await filledStore(file);
    const told: EventStoreCorruptError[] = [];
    store.reportCorruption((e) => told.push(e));
    damagePages(file, 3);
    await expect(readEverything(store)).rejects.toBeInstanceOf(EventStoreCorruptError);
    const append = store.appendToStream('s-new', [{ id: randomUUID(), type: 'note', data: { text: 'after' } }]);
    await expect(append).rejects.toBeInstanceOf(EventStoreCorruptError);
    await expect(store.headPosition()).rejects.toThrow(new RegExp(`event store file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged`));
    await expect(store.readStream('s-0')).rejects.toBeInstanceOf(EventStoreCorruptError);
    expect(told).toHaveLength(1);
    await store.close();
    // Nothing was written after the damage was found.
    const raw = new Database(file, { readonly: true });
    expect((raw.prepare("SELECT count(*) AS n FROM events WHERE stream = 's-new'").get() as { n: number }).n).toBe(0);
    raw.close();
  });
});

describe('toStoreError / isSqliteDiskFull (the one rule classifying SQLite errors)', () => {
  const sqlite = (code: string, message = code) => Object.assign(new Error(message), { code });
  it('classifies damage, a full disk and other store failures', () => {
    expect(toStoreError(sqlite('SQLITE_CORRUPT'), '/d/events.sqlite')).toBeInstanceOf(EventStoreCorruptError);
    expect(toStoreError(sqlite('SQLITE_NOTADB'), '/d/events.sqlite')).toBeInstanceOf(EventStoreCorruptError);
    // A writer thread's answer: the SQLite error is the cause.
    expect(toStoreError(new EventStoreUnavailableError('SQLite event store: x', sqlite('SQLITE_CORRUPT_INDEX')), '/f')).toBeInstanceOf(EventStoreCorruptError);
    const busy = toStoreError(sqlite('SQLITE_BUSY'), '/f');
    expect(busy).toBeInstanceOf(EventStoreUnavailableError);
    expect(busy).not.toBeInstanceOf(EventStoreCorruptError);
    const other = new Error('a bug');
    expect(toStoreError(other, '/f')).toBe(other);
    expect(isSqliteDiskFull(sqlite('SQLITE_FULL'))).toBe(true);
    expect(isSqliteDiskFull(sqlite('SQLITE_IOERR_WRITE', 'ENOSPC: no space left'))).toBe(true);
    expect(isSqliteDiskFull(new Error('cannot rollback - no transaction is active'))).toBe(true);
    expect(isSqliteDiskFull(sqlite('SQLITE_BUSY'))).toBe(false);
  });
});
