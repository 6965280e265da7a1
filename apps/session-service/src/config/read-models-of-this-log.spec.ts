/**
 * A DATA_DIR whose read models were projected from another log is refused at start-up, naming
 * DATA_DIR, the positions and the remedy: read models projected past the end of the store's log
 * (newcomer, stop 23: a replica restarted with another DATABASE_URL served the other database's
 * sessions and lost its own new writes), and read models whose checkpoint's event is not the
 * store's event at that position (newcomer ncsre: a store restored from an older backup and
 * written again up to and past the checkpoint started without a word, and served sessions the
 * store no longer had).
 */
import { EventStoreUnavailableError, SqliteEventStore, type EventStore } from '@lib/event-store';
import { ReadModelStore, SESSION_PROJECTOR_NAME, checkpointEventIdentity } from '@lib/session';
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

  const refusal = () => checkReadModelsOfThisLog('/srv/data', store, readModels).catch((e: unknown) => e);

  it('refuses read models projected past the end of the log', async () => {
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 61814n);
    const refused = await refusal();
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(
      /^DATA_DIR=\/srv\/data: its read models \(:memory:\) come from another log .*projected up to position 61814, but the event store's log ends at 2 .*: rebuild them from this store with npm run rebuild-read-models/,
    );
  });

  it('says a missing or empty event store (head 0) under read models at N > 0 is to be restored, and not to delete or rebuild the read models', async () => {
    const empty = SqliteEventStore.open(':memory:');
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 61814n);
    const refused = await checkReadModelsOfThisLog('/srv/data', empty, readModels).catch((e: unknown) => e);
    await empty.close();
    expect(refused).toBeInstanceOf(ConfigurationError);
    const message = (refused as Error).message;
    expect(message).toMatch(
      /^DATA_DIR=\/srv\/data: its read models \(:memory:\) do not match the event store: the event store's log is empty \(head position 0\) while they reached position 61814: the event store is missing or empty .*: restore the event store from a backup .*do NOT delete :memory: nor rebuild it: it holds the events' text up to position 61814/,
    );
    expect(message).not.toMatch(/another log|delete :memory: and its -wal|rebuild them from this store/);
  });

  it("refuses read models whose checkpoint's event is not the store's event there (a store restored and written again)", async () => {
    const other = SqliteEventStore.open(':memory:');
    await other.appendToStream('session-t.lost', [
      { id: '3f1c1a8e-0000-4000-8000-0000000000a1', type: 'T', data: {} },
      { id: '3f1c1a8e-0000-4000-8000-0000000000a2', type: 'T', data: {} },
    ]);
    const [, projected] = await other.readAll();
    await other.close();
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 2n, checkpointEventIdentity(projected));
    const refused = await refusal();
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(
      /^DATA_DIR=\/srv\/data: .*projected up to position 2, from the event session-t\.lost@1 3f1c1a8e-0000-4000-8000-0000000000a2 .*, but the event store holds another event there \(session-t\.s@1 3f1c1a8e-0000-4000-8000-000000000002 .*\).*npm run rebuild-read-models.*-wal and -shm/,
    );
  });

  it('refuses the same event id at the checkpoint when the store recorded it at another time (a resend after a restore)', async () => {
    const [, atTwo] = await store.readAll();
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 2n, checkpointEventIdentity({ ...atTwo, created: new Date(atTwo.created.getTime() - 60_000) }));
    expect(await refusal()).toBeInstanceOf(ConfigurationError);
  });

  it.each([
    ['empty read models', 0n],
    ['read models behind the log', 1n],
    ['read models at its end', 2n],
  ])('accepts %s, with the event recorded at their checkpoint', async (_name, checkpoint) => {
    const at = checkpoint === 0n ? null : await store.eventAt(checkpoint);
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, checkpoint, at && checkpointEventIdentity(at));
    await expect(checkReadModelsOfThisLog('/srv/data', store, readModels)).resolves.toBeUndefined();
  });

  it('accepts read models of a release that recorded no event with the checkpoint (checked against the head only)', async () => {
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 2n, null);
    await expect(checkReadModelsOfThisLog('/srv/data', store, readModels)).resolves.toBeUndefined();
  });

  it("accepts read models whose checkpoint's event was deleted since (an erasure): nothing tells them apart", async () => {
    const [, atTwo] = await store.readAll();
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 2n, checkpointEventIdentity(atTwo));
    await store.deleteStream('session-t.s');
    await expect(checkReadModelsOfThisLog('/srv/data', store, readModels)).resolves.toBeUndefined();
  });

  it('checks nothing while the store cannot be read (it may come up later)', async () => {
    readModels.writeCheckpoint(SESSION_PROJECTOR_NAME, 61814n);
    const down = Object.assign(Object.create(store) as EventStore, { headPosition: () => Promise.reject(new EventStoreUnavailableError('refused')) });
    await expect(checkReadModelsOfThisLog('/srv/data', down, readModels)).resolves.toBeUndefined();
  });
});
