/**
 * Read models rewritten under a running service by another build (newcomer ncupgrade F1: an old
 * build started on the same DATA_DIR dropped them and built its own version; this one answered 500
 * and `/health` said ok): a statement meeting a missing table or column, while the file's version is
 * not this build's, is a `ReadModelsReplacedError`, which the damage rule counts as the read models'
 * damage; the same failure with this build's version is a `ReadModelsAlteredError` (newcomer
 * ncverify48 F3: it answered 500), their damage too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '@lib/event-store';
import { getWindow } from './queries/window-query';
import { READ_MODEL_SCHEMA_VERSION } from './read-model-schema';
import { ReadModelStore } from './read-model-store';
import { isReadModelsDamage } from './read-models-damage-rule';
import { asReadModelsReplaced, isSchemaMismatch, ReadModelsAlteredError, ReadModelsReplacedError } from './read-models-replaced';
import { SessionProjector } from './session-projector';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

/** What another build does to the file (simplified): drops a table of this version and records its own version. */
function rewriteAsBuild(file: string, version: number): void {
  const other = new Database(file);
  other.exec('DROP TABLE window_entries');
  other.pragma(`user_version = ${version}`);
  other.close();
}

/** What `read` throws (fails the test when it does not throw). */
function thrownBy(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  throw new Error('expected the read to fail');
}

describe('read models rewritten by another build while this one runs', () => {
  let dir: string;
  let file: string;
  let store: ReadModelStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-models-replaced-'));
    file = join(dir, 'read-models.sqlite');
    store = ReadModelStore.open(file);
    new SessionProjector(store).applyBatch([new RecordedSessionLog('acme').append('s1', user('u0', 'hello'))]);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([20, READ_MODEL_SCHEMA_VERSION + 1])(
    'a read meeting a missing table of a file now at version %i is their damage, naming both versions',
    (version) => {
      rewriteAsBuild(file, version);
      const failure = thrownBy(() => getWindow(store, 'acme', 's1'));
      expect(isSchemaMismatch(failure)).toBe(true);
      const error = asReadModelsReplaced(failure, store);
      expect(error).toBeInstanceOf(ReadModelsReplacedError);
      expect(error).toMatchObject({ versionOnDisk: version, name: (failure as Error).name });
      expect((error as Error).message).toBe(
        `${(failure as Error).message}; the file holds read models version ${version}, this build's are version ${READ_MODEL_SCHEMA_VERSION}: another build of the service rewrote it`,
      );
      expect(isReadModelsDamage(error)).toBe(true);
    },
  );

  it('the same failure on a file of this version is their damage too (another program changed it); any other failure is left as it is', () => {
    rewriteAsBuild(file, READ_MODEL_SCHEMA_VERSION);
    const failure = thrownBy(() => getWindow(store, 'acme', 's1'));
    expect(isReadModelsDamage(failure)).toBe(false);
    const error = asReadModelsReplaced(failure, store);
    expect(error).toBeInstanceOf(ReadModelsAlteredError);
    expect(error).not.toBeInstanceOf(ReadModelsReplacedError);
    expect((error as Error).message).toBe(
      `${(failure as Error).message}; the file holds this build's read models version ${READ_MODEL_SCHEMA_VERSION} without it: another program changed it`,
    );
    expect(isReadModelsDamage(error)).toBe(true);
    const other = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    expect(asReadModelsReplaced(other, store)).toBe(other);
    expect(asReadModelsReplaced('not an error', store)).toBe('not an error');
  });

  /**
   * A projector following its own read models file (`followed.sqlite`) from an event store: applies
   * u0, lets `change` alter the file as another program would, appends u1, and returns what the
   * projector reported as the read models' damage and its state then.
   */
  async function metByProjector(change: (followed: string) => void): Promise<{ reported: unknown[]; state: object }> {
    const events = SqliteEventStore.open(join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
    const followed = join(dir, 'followed.sqlite');
    const projector = new SessionProjector(ReadModelStore.open(followed), { retryDelayMs: 10, maxRetryDelayMs: 50 });
    const reported: unknown[] = [];
    projector.onReadModelsDamage((error) => reported.push(error));
    const log = new RecordedSessionLog('acme');
    const append = async (id: string) => {
      const e = log.append('s1', user(id, `text of ${id}`));
      return (await events.appendToStream(e.streamId, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }])).position;
    };
    try {
      projector.start(events);
      expect(await projector.waitForPosition(await append('u0'), 5000)).toBe(true);
      change(followed);
      await append('u1');
      for (let i = 0; i < 200 && reported.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      return { reported, state: projector.state() };
    } finally {
      await projector.stop();
      projector.store.close();
      await events.close();
    }
  }

  it('a unique index of this version dropped (the projector’s upsert fails: ON CONFLICT …) is their damage too, met by the projector', async () => {
    const { reported, state } = await metByProjector((followed) => {
      const other = new Database(followed);
      other.exec('DROP INDEX sessions_by_id; DROP INDEX window_entries_by_id');
      other.close();
    });
    expect(reported[0]).toBeInstanceOf(ReadModelsAlteredError);
    expect(state).toMatchObject({ readModelsDamaged: true, lastError: expect.stringContaining('ON CONFLICT clause does not match') });
  });

  it('the projector meeting it reports their damage to its listeners, and /health state says so', async () => {
    const { reported, state } = await metByProjector((followed) => rewriteAsBuild(followed, 20));
    expect(reported[0]).toBeInstanceOf(ReadModelsReplacedError);
    expect(state).toMatchObject({ readModelsDamaged: true, lastError: expect.stringContaining('another build of the service rewrote it') });
  });
});
