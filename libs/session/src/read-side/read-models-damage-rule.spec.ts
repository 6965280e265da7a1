/**
 * The one rule for the read models' damage (`isReadModelsDamage`), and the projector's worker
 * thread applying it to what it meets and posting the verdict with the batch's outcome: before, the
 * outcome held the error's name and message only, and the main thread, without SQLite's code, never
 * took it for the damage (`/health` said nothing of it with PROJECTOR_WORKER=true).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EventStoreCorruptError } from '@lib/event-store';
import { ReadModelsDamagedError, isReadModelsDamage } from './read-models-damage-rule';
import applyBatchTask from './projection-worker-tasks';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { RecordedSessionLog, user } from './testing/recorded-session-log';
import { CONVERSATION_EVENT } from '../events/session-stream-events';

describe('the read models damage rule and the worker thread posting it', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rm-damage-rule-'));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A file of garbage: SQLite says it is not a database when it is read. */
  function garbageFile(name = 'read-models.sqlite'): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, Buffer.alloc(8192, 0x5a));
    return file;
  }

  /** SQLite's own error for a file that is not a database (`SQLITE_NOTADB`), as better-sqlite3 throws it. */
  function sqliteDamage(): Error {
    try {
      new Database(garbageFile('not-a-database')).prepare('SELECT 1').get();
    } catch (err) {
      return err as Error;
    }
    throw new Error('SQLite read a file of garbage as a database');
  }

  /** SQLite's error for a broken constraint: SQLite's, but no damage. */
  function sqliteConstraint(): Error {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    db.exec('INSERT INTO t VALUES (1)');
    try {
      db.exec('INSERT INTO t VALUES (1)');
    } catch (err) {
      return err as Error;
    } finally {
      db.close();
    }
    throw new Error('no constraint error');
  }

  it('is damage: SQLite saying a file is damaged (also as a cause), and the verdict of a worker thread; not the event store’s, nor anything else', () => {
    const damage = sqliteDamage();
    expect((damage as { code?: string }).code).toBe('SQLITE_NOTADB');
    expect(isReadModelsDamage(damage)).toBe(true);
    expect(isReadModelsDamage(new Error('wrapped', { cause: damage }))).toBe(true);
    expect(isReadModelsDamage(new ReadModelsDamagedError('SqliteError', 'database disk image is malformed'))).toBe(true);
    // The event store wraps the damage of its own file: that is store_corrupt, not the read models'.
    expect(isReadModelsDamage(new EventStoreCorruptError('events.sqlite', damage.message, damage))).toBe(false);
    expect(isReadModelsDamage(sqliteConstraint())).toBe(false);
    expect(isReadModelsDamage(Object.assign(new Error('file is not a database'), { name: 'SqliteError' }))).toBe(false);
    for (const value of [null, undefined, 'SQLITE_NOTADB', { code: 42 }]) expect(isReadModelsDamage(value)).toBe(false);
  });

  it('is damage: a JSON function of SQLite finding malformed JSON text (only overwritten bytes make one; ncdata69 F3: 500 internal); not another SQLite error', () => {
    const db = new Database(':memory:');
    const errorOf = (sql: string): unknown => {
      try {
        db.prepare(sql).get();
      } catch (err) {
        return err;
      }
      throw new Error(`no error from ${sql}`);
    };
    try {
      expect(isReadModelsDamage(errorOf(`SELECT json_extract('{"a":\u00ff', '$.a')`))).toBe(true);
      expect(isReadModelsDamage(errorOf("SELECT '{x' ->> '$.a'"))).toBe(true);
      expect(isReadModelsDamage(errorOf('SELECT nothing FROM nowhere'))).toBe(false);
    } finally {
      db.close();
    }
  });

  it('the worker task posts the damage met opening the file, with SQLite’s message, as damage', () => {
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    const outcome = applyBatchTask({ file: garbageFile(), events: log.events });
    expect(outcome).toMatchObject({ checkpoint: 0n, error: { name: 'SqliteError', message: 'file is not a database', readModelsDamaged: true } });
  });

  it('the worker task posts the damage met applying a batch as damage, and another failure as none', () => {
    const file = path.join(dir, 'read-models.sqlite');
    ReadModelStore.open(file).close();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    expect(applyBatchTask({ file, events: log.events })).toMatchObject({ checkpoint: 1n, error: null });

    // A malformed event: the projector's own failure, no damage.
    log.record('s1', CONVERSATION_EVENT, { costs: {} });
    expect(applyBatchTask({ file, events: log.events })).toMatchObject({ checkpoint: 1n, error: { name: 'MalformedEventError', readModelsDamaged: false } });

    // A damaged page met by the transaction (SQLite's own error, thrown where the worker applies the batch).
    const damage = sqliteDamage();
    jest.spyOn(SessionProjector.prototype, 'applyBatch').mockImplementation(() => {
      throw damage;
    });
    expect(applyBatchTask({ file, events: log.events })).toMatchObject({
      checkpoint: 1n,
      error: { name: 'SqliteError', message: 'file is not a database', readModelsDamaged: true },
    });
  });
});
