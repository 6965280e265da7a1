/**
 * A DATA_DIR whose read models were projected from another log (newcomer, stop 23: a replica
 * restarted with another DATABASE_URL served the other database's sessions and lost its own new
 * writes) is refused at start-up, naming DATA_DIR, both positions and the remedy.
 */
import { EventStoreUnavailableError, SqliteEventStore, type EventStore } from '@lib/event-store';
import { ReadModelStore, SESSION_PROJECTOR_NAME } from '@lib/session';
import { ConfigurationError } from './configuration-error';
import { checkReadModelsOfThisLog } from './read-models-of-this-log';

describe('read models of another log', () => {
  let store: SqliteEventStore;
  let readModels: ReadModelStore;
  beforeEach(async () => {
    store = SqliteEventStore.open(':memory:');
    await store.appendToStream('session-t.s', [
      { id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} },
      { id: '3f1c1a8e-0000-4000-8000-000000000002', type: 'T', data: {} },
    ]);
    readModels = ReadModelStore.open(':memory:');
  });
  afterEach(async () => {
    readModels.close();
    await store.close();
  });

  it('refuses read models projected past the end of the log', async () => {
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 61814n);
    const refused = await checkReadModelsOfThisLog('/srv/data', store, readModels).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(
      /^DATA_DIR=\/srv\/data: .*projected up to position 61814, but the event store's log ends at 2: .*rebuild-read-models/,
    );
  });

  it.each([
    ['empty read models', 0n],
    ['read models behind the log', 1n],
    ['read models at its end', 2n],
  ])('accepts %s', async (_name, checkpoint) => {
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, checkpoint);
    await expect(checkReadModelsOfThisLog('/srv/data', store, readModels)).resolves.toBeUndefined();
  });

  it('checks nothing while the store cannot be read (it may come up later)', async () => {
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 61814n);
    const down = Object.assign(Object.create(store) as EventStore, { headPosition: () => Promise.reject(new EventStoreUnavailableError('refused')) });
    await expect(checkReadModelsOfThisLog('/srv/data', down, readModels)).resolves.toBeUndefined();
  });
});
