/**
 * A projector that cannot follow the log (a database that does not exist, a store that went
 * away) says so once in the log, not once per retry, and once again when it follows the log
 * again (newcomer, stop 23: the cause showed only in /health).
 */
import { Logger } from '@nestjs/common';
import { EventStoreUnavailableError, SqliteEventStore, type EventStore, type RecordedEvent, type Subscription } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';

describe('the projector when it cannot follow the log', () => {
  it('logs one warn line when following fails (whatever the retries) and one line when it works again', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const store = SqliteEventStore.open(':memory:');
    try {
      await store.appendToStream('session-t.s', [{ id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} }]);
      let failures = 4;
      const flaky: EventStore = Object.assign(Object.create(store) as EventStore, {
        subscribeToAll: (options?: Parameters<EventStore['subscribeToAll']>[0]): Subscription => {
          if (failures-- > 0)
            return {
              close: async () => undefined,
              // eslint-disable-next-line require-yield
              async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
                throw new EventStoreUnavailableError('database "nope" does not exist');
              },
            };
          return store.subscribeToAll(options);
        },
      });
      const projector = new SessionProjector(ReadModelStore.open(':memory:'), { retryDelayMs: 5, maxRetryDelayMs: 10 });
      projector.start(flaky);
      expect(await projector.waitForPosition(1n, 5000)).toBe(true);
      await projector.stop();
      const lines = (spy: jest.SpyInstance) => spy.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('projector'));
      expect(lines(warn)).toEqual([expect.stringMatching(/^the projector cannot follow the log: .*database "nope" does not exist; it retries/)]);
      expect(lines(log)).toEqual(['the projector follows the log again, at position 1']);
    } finally {
      warn.mockRestore();
      log.mockRestore();
      await store.close();
    }
  });

  it('given a store that stopped answering and answers again with nothing new in the log, then the failure ends at once: lastError cleared and the recovery line logged, no append needed', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const store = SqliteEventStore.open(':memory:');
    try {
      await store.appendToStream('session-t.s', [{ id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} }]);
      let down = false;
      const refused = () => new EventStoreUnavailableError('connect ECONNREFUSED 127.0.0.1:5432');
      const flaky: EventStore = Object.assign(Object.create(store) as EventStore, {
        headPosition: () => (down ? Promise.reject(refused()) : store.headPosition()),
        subscribeToAll: (options?: Parameters<EventStore['subscribeToAll']>[0]): Subscription => {
          if (!down) return store.subscribeToAll(options);
          return {
            close: async () => undefined,
            // eslint-disable-next-line require-yield
            async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
              throw refused();
            },
          };
        },
      });
      // Down from the start: the projector fails until the store answers.
      down = true;
      const projector = new SessionProjector(ReadModelStore.open(':memory:'), { retryDelayMs: 5, maxRetryDelayMs: 10 });
      projector.start(flaky);
      await until(() => projector.state().lastError !== null);
      down = false;
      expect(await projector.waitForPosition(1n, 5000)).toBe(true);
      // Down again once at the head; back with nothing appended meanwhile.
      down = true;
      await (projector as unknown as { subscription: Subscription }).subscription.close(); // the live subscription's next read fails
      await until(() => projector.state().lastError !== null);
      down = false;
      await until(() => projector.state().lastError === null);
      expect(projector.state()).toMatchObject({ lastError: null, lastErrorAt: null, checkpoint: 1n });
      await projector.stop();
      const lines = (spy: jest.SpyInstance) => spy.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('projector'));
      expect(lines(log)).toEqual(['the projector follows the log again, at position 1', 'the projector follows the log again, at position 1']);
    } finally {
      warn.mockRestore();
      log.mockRestore();
      await store.close();
    }
  });
});

/** Resolves once `condition()` holds (checked every 5 ms); rejects after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 5000; !condition();) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
