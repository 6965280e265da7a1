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
});
