import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { StatsFs } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { DuplicateEventIdError, SqliteEventStore, WrongExpectedRevisionError, type EventData } from '../src';
import { eventStoreContract } from './event-store.contract';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'es-sqlite-'));
  dirs.push(dir);
  return join(dir, 'nested', 'events.sqlite');
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const ev = (data: unknown = {}, id = randomUUID()): EventData => ({ id, type: 'T', data });

eventStoreContract('SQLite', { setup: async () => SqliteEventStore.open(tempFile(), { pollIntervalMs: 50 }) });
eventStoreContract('SQLite without group commit', {
  setup: async () => SqliteEventStore.open(tempFile(), { pollIntervalMs: 50, groupCommit: false }),
});
eventStoreContract('SQLite with the writer thread', {
  setup: async () => SqliteEventStore.open(tempFile(), { pollIntervalMs: 50, writerThread: true }),
});

describe.each([
  ["on the caller's thread", false],
  ['in the writer thread', true],
])('SqliteEventStore specifics, transactions %s', (_label, writerThread) => {
  let file: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    file = tempFile();
    store = SqliteEventStore.open(file, { pollIntervalMs: 50, writerThread });
  });
  afterEach(() => store.close());

  it('fails every append of a transaction that cannot take the write lock with EventStoreUnavailableError, writes none, and works again once the lock is free', async () => {
    await store.close();
    store = SqliteEventStore.open(file, { pollIntervalMs: 50, writerThread, busyTimeoutMs: 20 });
    await store.appendToStream('session-l', [ev()]);
    const holder = new Database(file);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const results = await Promise.allSettled([store.appendToStream('session-l', [ev()]), store.appendToStream('session-m', [ev()])]);
      for (const r of results) expect((r as PromiseRejectedResult).reason).toMatchObject({ name: 'EventStoreUnavailableError' });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await store.readStream('session-m')).toEqual([]);
    expect(await store.streamRevision('session-l')).toBe(0n);
    await expect(store.appendToStream('session-l', [ev()], { expectedRevision: 0n })).resolves.toMatchObject({ nextExpectedRevision: 1n });
  });

  it('probeWrite: resolves while the write lock can be had, writing nothing; rejects with SQLITE_BUSY at once while another connection holds it (not after the busy timeout), which stays as it was', async () => {
    await store.appendToStream('session-p', [ev()]);
    await expect(store.probeWrite()).resolves.toBeUndefined();
    expect(await store.headPosition()).toBe(1n);
    const holder = new Database(file);
    holder.exec('BEGIN IMMEDIATE');
    try {
      // The store's busy timeout is 5 s: a probe waiting for it would outlast the test's own timeout after 5 probes.
      for (let i = 0; i < 5; i++)
        await expect(store.probeWrite()).rejects.toMatchObject({ name: 'EventStoreUnavailableError', cause: { code: 'SQLITE_BUSY' } });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    await expect(store.probeWrite()).resolves.toBeUndefined();
    expect((store as unknown as { db: Database.Database }).db.pragma('busy_timeout', { simple: true })).toBe(5000);
    await expect(store.appendToStream('session-p', [ev()], { expectedRevision: 0n })).resolves.toMatchObject({ nextExpectedRevision: 1n });
  });

  it('probeWrite: rejects as a full disk when the file system of the file has less than 1 MiB free (an empty transaction writes no page)', async () => {
    // The module object itself (a namespace import's properties cannot be redefined): the probe reads statfsSync from it at each call.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const nodeFs = require('node:fs') as typeof import('node:fs');
    const statfs = jest.spyOn(nodeFs, 'statfsSync').mockReturnValue({ bavail: 255, bsize: 4096 } as StatsFs);
    try {
      await expect(store.probeWrite()).rejects.toMatchObject({
        name: 'EventStoreUnavailableError',
        message: expect.stringMatching(/the disk holding .*events\.sqlite is full \(1044480 bytes free/),
        cause: { code: 'SQLITE_FULL' },
      });
      expect(statfs).toHaveBeenCalledWith(dirname(file));
    } finally {
      statfs.mockRestore();
    }
    await expect(store.probeWrite()).resolves.toBeUndefined();
  });

  it('creates the file with WAL, synchronous=FULL, the schema and its constraints', () => {
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).toEqual(expect.arrayContaining(['events', 'streams']));
      const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'events'").pluck().get() as string;
      expect(sql).toMatch(/AUTOINCREMENT/);
      expect(sql).toMatch(/UNIQUE \(stream, revision\)/);
      expect(sql).toMatch(/UNIQUE \(id\)/);
    } finally {
      db.close();
    }
    expect((store as unknown as { db: Database.Database }).db.pragma('synchronous', { simple: true })).toBe(2); // FULL
  });

  it('group commit: concurrent appends each keep their own check; a failing one does not fail the others', async () => {
    await store.appendToStream('session-g', [ev()]);
    const existing = ev({ keep: true });
    await store.appendToStream('session-h', [existing]);
    const before = store.stats.transactions;
    const results = await Promise.allSettled([
      store.appendToStream('session-g', [ev(), ev()], { expectedRevision: 0n }),
      store.appendToStream('session-g', [ev()], { expectedRevision: 0n }), // loses: the previous one moved the stream to 2
      store.appendToStream('session-i', [ev(), existing], { expectedRevision: 'no_stream' }), // duplicate id elsewhere
      store.appendToStream('session-g', [ev()], { expectedRevision: 2n }),
      store.appendToStream('session-j', [ev()], { expectedRevision: 'no_stream' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
    expect(store.stats.transactions - before).toBe(1); // one transaction carried all five
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ expected: 0n, actual: 2n });
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateEventIdError);
    expect((results[3] as PromiseFulfilledResult<{ nextExpectedRevision: bigint }>).value.nextExpectedRevision).toBe(3n);
    expect(await store.readStream('session-i')).toEqual([]); // all-or-nothing: the first event is not there either
    expect(await store.streamRevision('session-g')).toBe(3n);
    expect(await store.streamRevision('session-j')).toBe(0n);
    const all = await store.readAll();
    for (let i = 1; i < all.length; i++) expect(all[i].position).toBe(all[i - 1].position + 1n); // rolled-back savepoints leave no hole
  });

  it('group commit: the same append twice in one batch is written once', async () => {
    const batch = [ev({ x: 1 })];
    const [a, b] = await Promise.all([
      store.appendToStream('session-k', batch, { expectedRevision: 'no_stream' }),
      store.appendToStream('session-k', batch, { expectedRevision: 'no_stream' }),
    ]);
    expect(b).toEqual(a);
    expect(await store.readStream('session-k')).toHaveLength(1);
  });

  it('rejects an id already used in another stream', async () => {
    const e = ev();
    await store.appendToStream('session-1', [e]);
    await expect(store.appendToStream('session-2', [e])).rejects.toBeInstanceOf(DuplicateEventIdError);
    await expect(store.appendToStream('session-2', [ev(), ev()].concat([{ ...ev(), id: e.id.toUpperCase() }]))).rejects.toBeInstanceOf(DuplicateEventIdError);
    expect(await store.readStream('session-2')).toEqual([]);
  });

  it('rejects the same id twice within one append', async () => {
    const e = ev();
    await expect(store.appendToStream('session-3', [e, e])).rejects.toBeInstanceOf(DuplicateEventIdError);
  });

  it('never reuses a position after deletion; the stream continues after its deleted revisions; headPosition is monotonic', async () => {
    const r1 = await store.appendToStream('session-d', [ev(), ev()]);
    await store.deleteStream('session-d');
    expect(await store.headPosition()).toBe(r1.position);
    const r2 = await store.appendToStream('session-d', [ev()], { expectedRevision: 'no_stream' });
    expect(r2.nextExpectedRevision).toBe(2n);
    expect(r2.position).toBe(r1.position + 1n);
    expect(await store.readAll()).toHaveLength(1);
  });

  it('keeps acknowledged appends across close and reopen', async () => {
    const e = ev({ durable: true });
    const r = await store.appendToStream('session-p', [e]);
    await store.close();
    store = SqliteEventStore.open(file, { writerThread });
    expect(await store.readStream('session-p')).toMatchObject([{ id: e.id, data: { durable: true }, position: r.position }]);
  });

  it('a subscription sees appends made through another connection to the same file (polling)', async () => {
    const other = SqliteEventStore.open(file);
    try {
      const sub = store.subscribeToAll({ streamPrefix: 'session-' });
      const it = sub[Symbol.asyncIterator]();
      const next = it.next();
      const e = ev();
      await other.appendToStream('session-o', [e]);
      expect((await next).value).toMatchObject({ id: e.id, streamId: 'session-o' });
      await sub.close();
      expect((await it.next()).done).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('rejects calls after close with EventStoreUnavailableError', async () => {
    await store.close();
    await expect(store.appendToStream('session-z', [ev()])).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
    await expect(store.readAll()).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
  });

  it('commits appends still queued when close is called', async () => {
    const pending = store.appendToStream('session-q', [ev()]);
    await store.close();
    await expect(pending).resolves.toMatchObject({ nextExpectedRevision: 0n });
    store = SqliteEventStore.open(file, { writerThread });
    expect(await store.readStream('session-q')).toHaveLength(1);
  });
});

describe('SqliteEventStore writer thread', () => {
  it('starts with the first write, and after the thread has died the next write starts a new one', async () => {
    const file = tempFile();
    const store = SqliteEventStore.open(file, { writerThread: true });
    const internals = store as unknown as { writerThread?: { worker: { terminate(): Promise<number> }; failed: boolean } };
    try {
      expect(internals.writerThread).toBeUndefined();
      await store.appendToStream('session-w', [ev()]);
      const first = internals.writerThread!;
      await first.worker.terminate();
      await new Promise((resolve) => setImmediate(resolve));
      expect(first.failed).toBe(true);
      await expect(store.appendToStream('session-w', [ev()], { expectedRevision: 0n })).resolves.toMatchObject({ nextExpectedRevision: 1n });
      expect(internals.writerThread).not.toBe(first);
      expect(store.stats.operations).toBe(2);
      expect(await store.readStream('session-w')).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});
