import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import { EventStoreReplacedError, EventStoreUnavailableError, type EventStore } from '@lib/event-store';
import { StoreWriteHealth, WRITE_PROBE_INTERVAL_MS } from './store-write-health';

/** A store whose appends and probes fail while `down` says so, counting the probes. */
function fakeStore() {
  const state = { writesDown: true, probeDown: true, probes: 0 };
  const busy = () =>
    new EventStoreUnavailableError('SQLite event store: database is locked', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
  const store = {
    appendToStream: async () => {
      if (state.writesDown) throw busy();
      return { nextExpectedRevision: 0n, position: 1n };
    },
    deleteStream: async () => undefined,
    probeWrite: async () => {
      state.probes++;
      if (state.probeDown) throw busy();
    },
  } as unknown as EventStore;
  return { state, store };
}

/** Lets the probe's promise chain run (fake timers fire the interval; the probe itself is async). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('StoreWriteHealth: a store writable again without a write (a service that gets no writes stayed degraded)', () => {
  let warned: string[];
  beforeEach(() => {
    jest.useFakeTimers();
    warned = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warned.push(String(message)));
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('never probes a store whose writes succeed', async () => {
    const { state, store } = fakeStore();
    state.writesDown = false;
    const health = new StoreWriteHealth();
    await health.observing(store).appendToStream('s', []);
    jest.advanceTimersByTime(10 * WRITE_PROBE_INTERVAL_MS);
    await settle();
    expect(state.probes).toBe(0);
    expect(health.lastWriteError()).toBeNull();
  });

  it('probes every interval while the last write failed, and the first probe finding the store writable clears it, in one line; then stops probing', async () => {
    const { state, store } = fakeStore();
    const health = new StoreWriteHealth();
    await expect(health.observing(store).appendToStream('s', [])).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(health.lastWriteError()).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(warned).toEqual([
      expect.stringMatching(/^writes to the event store fail \(SQLITE_BUSY: .*until a write succeeds or a write probe \(every 5 s\) finds the store writable;/),
    ]);

    jest.advanceTimersByTime(WRITE_PROBE_INTERVAL_MS);
    await settle();
    expect(state.probes).toBe(1);
    expect(health.lastWriteError()).not.toBeNull();

    state.probeDown = false;
    jest.advanceTimersByTime(WRITE_PROBE_INTERVAL_MS);
    await settle();
    expect(state.probes).toBe(2);
    expect(health.lastWriteError()).toBeNull();
    expect(warned).toHaveLength(2);
    expect(warned[1]).toMatch(
      /^writes to the event store succeed again \(1 failed write over \d+\.\d s, from the first failure to a write probe that found the store writable\)$/,
    );

    jest.advanceTimersByTime(10 * WRITE_PROBE_INTERVAL_MS);
    await settle();
    expect(state.probes).toBe(2);
  });

  it('says a replaced or damaged store file refuses every write as 503 store_corrupt until a restart (ncrecheck70 F6: it said store_unavailable and degraded)', async () => {
    const replaced = new EventStoreReplacedError('/data/events.sqlite', 'another file is at its path now (inode 2, it had 1)');
    const store = { appendToStream: async () => Promise.reject(replaced), probeWrite: async () => Promise.reject(replaced) } as unknown as EventStore;
    const health = new StoreWriteHealth();
    await expect(health.observing(store).appendToStream('s', [])).rejects.toBe(replaced);
    expect(warned).toEqual([
      expect.stringMatching(
        /^writes to the event store fail \(.*was replaced or removed.*\); every write answers 503 store_corrupt and \/health says unavailable \(store\.error\) until the service is restarted;/,
      ),
    ]);
    expect(warned[0]).not.toMatch(/store_unavailable|degraded/);
  });

  it('a write that succeeds first stops the probes; a store without probeWrite is never probed', async () => {
    const { state, store } = fakeStore();
    const health = new StoreWriteHealth();
    const observed = health.observing(store);
    await expect(observed.appendToStream('s', [])).rejects.toBeInstanceOf(EventStoreUnavailableError);
    state.writesDown = false;
    await observed.appendToStream('s', []);
    expect(health.lastWriteError()).toBeNull();
    jest.advanceTimersByTime(10 * WRITE_PROBE_INTERVAL_MS);
    await settle();
    expect(state.probes).toBe(0);

    const withoutProbe = { ...store, probeWrite: undefined };
    const kurrent = new StoreWriteHealth();
    state.writesDown = true;
    await expect(kurrent.observing(withoutProbe as EventStore).appendToStream('s', [])).rejects.toBeInstanceOf(EventStoreUnavailableError);
    jest.advanceTimersByTime(10 * WRITE_PROBE_INTERVAL_MS);
    await settle();
    expect(state.probes).toBe(0);
    expect(kurrent.lastWriteError()).not.toBeNull();
    kurrent.onModuleDestroy();
  });
});

describe('StoreWriteHealth: a command failing at a read before its write (a load canceled by a lock on es_events)', () => {
  const unavailable = () =>
    new EventStoreUnavailableError(
      'a PostgreSQL statement was canceled by its statement timeout',
      Object.assign(new Error('canceling statement'), { code: '57014' }),
    );
  afterEach(() => jest.restoreAllMocks());

  it.each(['readStream', 'streamRevision', 'streamIncarnation', 'eventAt', 'readAll', 'headPosition', 'readableHead'] as const)(
    'a %s that fails is a failed write (its code), and one that succeeds clears nothing: only a write does',
    async (read) => {
      jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const state = { readsDown: true };
      const reader = async () => {
        if (state.readsDown) throw unavailable();
        return null;
      };
      const store = {
        readStream: reader,
        streamRevision: reader,
        streamIncarnation: reader,
        eventAt: reader,
        readAll: reader,
        headPosition: reader,
        readableHead: reader,
        appendToStream: async () => ({ nextExpectedRevision: 0n, position: 1n }),
        deleteStream: async () => undefined,
      } as unknown as EventStore;
      const failures: string[] = [];
      const health = new StoreWriteHealth((code) => failures.push(code));
      const observed = health.observing(store);
      const call = (): Promise<unknown> => (observed as unknown as Record<typeof read, () => Promise<unknown>>)[read]();
      await expect(call()).rejects.toBeInstanceOf(EventStoreUnavailableError);
      expect(health.lastWriteError()).toMatchObject({ code: '57014' });
      expect(failures).toEqual(['57014']);

      state.readsDown = false;
      await call();
      expect(health.lastWriteError()).not.toBeNull();
      await observed.appendToStream('s', []);
      expect(health.lastWriteError()).toBeNull();
      health.onModuleDestroy();
    },
  );
});

describe('StoreWriteHealth: the probes run outside the request whose failed write started them', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs the probe\'s "succeed again" line with no request in its async context (it named a request answered long before)', async () => {
    // the request-scoped logger keeps its request in an AsyncLocalStorage, as this one does
    const request = new AsyncLocalStorage<{ id: string }>();
    const lines: Array<{ line: string; request: string | undefined }> = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void lines.push({ line: String(message), request: request.getStore()?.id }));
    const { state, store } = fakeStore();
    state.probeDown = false;
    const health = new StoreWriteHealth(undefined, 20);
    const observed = health.observing(store);
    await request.run({ id: 'req-1' }, () => expect(observed.appendToStream('s', [])).rejects.toBeInstanceOf(EventStoreUnavailableError));
    for (let i = 0; i < 100 && health.lastWriteError() !== null; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(health.lastWriteError()).toBeNull();
    expect(lines).toEqual([
      { line: expect.stringMatching(/^writes to the event store fail/), request: 'req-1' },
      { line: expect.stringMatching(/^writes to the event store succeed again .* a write probe/), request: undefined },
    ]);
    health.onModuleDestroy();
  });
});
