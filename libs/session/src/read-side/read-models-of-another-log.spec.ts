/**
 * The projector checks, each time it (re)subscribes (at start, and after the store was down),
 * that its read models were projected from the store's log: the store's event at the checkpoint
 * must be the one recorded with it (newcomer ncsre: a store restored from an older backup and
 * written again past the checkpoint was followed from the checkpoint, skipping the new events up
 * to it and keeping sessions the store no longer had). Read models of the previous release (no
 * event recorded with the checkpoint) start as before and record it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Logger } from '@nestjs/common';
import { EventStoreReplacedError, PollingSubscriptions, SqliteEventStore, type EventStore } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { SESSION_PROJECTOR_NAME, SessionProjector } from './session-projector';
import { checkpointEventIdentity } from './checkpoint-event';

const event = (n: number) => ({ id: `3f1c1a8e-0000-4000-8000-${String(n).padStart(12, '0')}`, type: 'T', data: {} });

async function storeWith(streams: string[]): Promise<SqliteEventStore> {
  const store = SqliteEventStore.open(':memory:');
  let n = Math.floor(Math.random() * 1e9);
  for (const stream of streams) await store.appendToStream(stream, [event(n++)]);
  return store;
}

describe('the projector on read models of another log', () => {
  let error: jest.SpyInstance;
  let log: jest.SpyInstance;
  const stores: EventStore[] = [];
  beforeEach(() => {
    error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    error.mockRestore();
    log.mockRestore();
    for (const store of stores.splice(0)) await store.close();
  });

  it('given read models of a log restored and written again past their checkpoint, when the projector starts, then it applies nothing and says what to do', async () => {
    const before = await storeWith(['session-t.a', 'session-t.lost', 'session-t.lost']);
    const restored = await storeWith(['session-t.a', 'session-t.fresh', 'session-t.fresh', 'session-t.fresh']);
    stores.push(before, restored);
    const readModels = ReadModelStore.open(':memory:');
    const projector = new SessionProjector(readModels, { retryDelayMs: 10, maxRetryDelayMs: 20 });
    projector.applyBatch(await before.readAll());
    projector.start(restored);
    expect(await projector.waitForPosition(4n, 300)).toBe(false);
    await projector.stop();
    expect(projector.checkpoint()).toBe(3n);
    expect(readModels.db.prepare("SELECT count(*) AS n FROM sessions WHERE session_id = 'fresh'").get()).toEqual({ n: 0 });
    expect(projector.state().lastError).toMatch(/^ReadModelsOfAnotherLogError: /);
    expect(projector.state().offLog).toBe(true); // /health "unavailable", /health/ready 503 (newcomer ncverify: both said ready)
    const lines = error.mock.calls.map(([line]) => String(line));
    expect(lines).toHaveLength(1); // once, not at every retry
    expect(lines[0]).toMatch(
      /^the read models in :memory: come from another log than the event store's: they were projected up to position 3, from the event session-t\.lost@1 .*, but the event store holds another event there \(session-t\.fresh@1 .*\).*run npm run rebuild-read-models/,
    );
    readModels.close();
  });

  it('given the store back with the log the read models come from, when the projector retries, then it follows it again', async () => {
    const log1 = await storeWith(['session-t.a', 'session-t.b']);
    const other = await storeWith(['session-t.x', 'session-t.y', 'session-t.z']);
    stores.push(log1, other);
    const readModels = ReadModelStore.open(':memory:');
    const projector = new SessionProjector(readModels, { retryDelayMs: 10, maxRetryDelayMs: 20 });
    projector.applyBatch(await log1.readAll());
    let current: EventStore = other; // e.g. DATABASE_URL reached another database for a while
    const switching = Object.assign(Object.create(log1) as EventStore, {
      headPosition: () => current.headPosition(),
      eventAt: (p: bigint) => current.eventAt(p),
      subscribeToAll: (o?: Parameters<EventStore['subscribeToAll']>[0]) => current.subscribeToAll(o),
    });
    projector.start(switching);
    expect(await projector.waitForPosition(3n, 200)).toBe(false);
    for (const until = Date.now() + 5000; !projector.state().offLog && Date.now() < until;) await new Promise((r) => setTimeout(r, 10));
    expect(projector.state().offLog).toBe(true);
    current = log1;
    await log1.appendToStream('session-t.c', [event(99)]);
    expect(await projector.waitForPosition(3n, 5000)).toBe(true);
    await projector.stop();
    expect(projector.state()).toMatchObject({ lastError: null, offLog: false });
    // at 2 when its retry found the head before the append landed, at 3 after
    expect(log.mock.calls.map(([line]) => String(line))).toContainEqual(expect.stringMatching(/^the projector follows the log again, at position [23]$/));
    readModels.close();
  });

  it('given a running projector, when the log is replaced at once by a fork of it that shares its log up to the last check, then the batch read from the fork is not applied and the read models are off the log (ncrecheck70 F4)', async () => {
    const log1 = await storeWith(['session-t.a', 'session-t.a']);
    stores.push(log1);
    const readModels = ReadModelStore.open(':memory:');
    const projector = new SessionProjector(readModels, { retryDelayMs: 10, maxRetryDelayMs: 20 });
    let current: EventStore = log1;
    // Every read through `current`, the subscription's too (a polling one over `current`'s pages).
    const pages = new PollingSubscriptions((o) => current.readAll(o), 10, 512);
    const switching = new Proxy(log1, {
      get: (_, name: keyof EventStore) =>
        name === 'subscribeToAll'
          ? (o?: Parameters<EventStore['subscribeToAll']>[0]) => pages.open(o ?? {})
          : (...args: unknown[]) => (current[name] as (...a: unknown[]) => unknown).apply(current, args),
    });
    projector.start(switching);
    expect(await projector.waitForPosition(2n, 5000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // the watch of the checkpoint recorded position 2
    // A fork of the log at position 2 (the same events, times and positions), written on elsewhere.
    const fork = SqliteEventStore.open(':memory:');
    stores.push(fork);
    await fork.logCopy().importEvents(await log1.readAll());
    await fork.logCopy().importHead(2n);
    for (let n = 0; n < 4; n++) await fork.appendToStream('session-t.forked', [event(500 + n)]);
    // This replica's own append, applied; then the fork restored over the log in one transaction.
    await log1.appendToStream('session-t.a', [event(400)]);
    expect(await projector.waitForPosition(3n, 5000)).toBe(true);
    current = fork;
    for (const until = Date.now() + 5000; !projector.state().offLog && Date.now() < until;) await new Promise((r) => setTimeout(r, 10));
    await projector.stop();
    await pages.closeAll();
    expect(projector.state().offLog).toBe(true);
    expect(projector.state().lastError).toMatch(/^ReadModelsOfAnotherLogError: .*the event they applied at position 3 is not the store's event there now/);
    // Nothing of the fork past the shared part was applied, and the checkpoint is back at the event found replaced.
    expect(readModels.db.prepare("SELECT count(*) AS n FROM sessions WHERE session_id = 'forked'").get()).toEqual({ n: 0 });
    expect(projector.checkpoint()).toBe(3n);
    readModels.close();
  });

  it('given a store whose file was replaced, when the projector follows it, then its one line says nothing changes until the restart (newcomer ncverify70)', async () => {
    const store = await storeWith(['session-t.a']);
    stores.push(store);
    const replaced = new EventStoreReplacedError('/data/events.sqlite', 'another file is at its path now (inode 2, it had 1)');
    const refusing = Object.assign(Object.create(store) as EventStore, { headPosition: () => Promise.reject(replaced) });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const projector = new SessionProjector(ReadModelStore.open(':memory:'), { retryDelayMs: 10, maxRetryDelayMs: 20 });
      projector.start(refusing);
      for (const until = Date.now() + 5000; warn.mock.calls.length === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      await projector.stop();
      expect(warn.mock.calls.map(([line]) => String(line))).toEqual([
        `the projector cannot follow the log: the event store refuses every operation (${replaced.message}); it applies nothing more until the service is restarted (writes answer 503 store_corrupt)`,
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('given read models of the previous release (no event recorded with the checkpoint), when the projector starts, then it follows the log and records the event', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'another-log-'));
    try {
      const store = await storeWith(['session-t.a', 'session-t.b']);
      stores.push(store);
      const file = path.join(dir, 'read-models.sqlite');
      const first = new SessionProjector(ReadModelStore.open(file));
      first.applyBatch(await store.readAll());
      first.store.close();
      const old = new Database(file); // as the previous release wrote it: no `event` column
      old.exec('ALTER TABLE projector_checkpoints DROP COLUMN event');
      old.close();

      const readModels = ReadModelStore.open(file);
      expect(readModels.readCheckpointEvent(SESSION_PROJECTOR_NAME)).toEqual({ position: 2n, event: null });
      const projector = new SessionProjector(readModels);
      projector.start(store);
      expect(await projector.waitForPosition(2n, 1000)).toBe(true);
      for (let i = 0; i < 100 && readModels.readCheckpointEvent(SESSION_PROJECTOR_NAME).event === null; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await projector.stop();
      expect(readModels.readCheckpointEvent(SESSION_PROJECTOR_NAME)).toEqual({ position: 2n, event: checkpointEventIdentity((await store.eventAt(2n))!) });
      expect(error).not.toHaveBeenCalled();
      readModels.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
