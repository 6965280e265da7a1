/**
 * Read models of another schema version (an upgrade) are dropped and rebuilt from the log, and the
 * log says so: one line at the start (from which version to which), progress lines on a long
 * rebuild, one line when done (newcomer: the rebuild was silent).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Logger } from '@nestjs/common';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { READ_MODEL_SCHEMA_VERSION } from './read-model-schema';
import { SessionProjector } from './session-projector';

describe('the rebuild of read models of another version', () => {
  let dir: string;
  let events: SqliteEventStore;
  let log: jest.SpyInstance;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-model-rebuild-'));
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    events = SqliteEventStore.open(':memory:');
    for (let i = 1; i <= 3; i++) await events.appendToStream(`session-t.s${i}`, [{ id: `3f1c1a8e-0000-4000-8000-00000000000${i}`, type: 'T', data: {} }]);
  });
  afterEach(async () => {
    log.mockRestore();
    await events.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const projectorLines = () => log.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('read models'));

  async function runProjector(file: string, options: ConstructorParameters<typeof SessionProjector>[1] = {}): Promise<void> {
    const projector = new SessionProjector(ReadModelStore.open(file), { maxBatchSize: 1, ...options });
    projector.start(events);
    expect(await projector.waitForPosition(3n, 5000)).toBe(true);
    await projector.stop();
    projector.store.close();
  }

  it('given a file of another version, when the service starts, then it logs the rebuild from that version, its progress and its end', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    ReadModelStore.open(file).close();
    const old = new Database(file);
    old.pragma(`user_version = ${READ_MODEL_SCHEMA_VERSION - 1}`);
    old.close();
    await runProjector(file, { rebuildProgressMs: 0 });
    const lines = projectorLines();
    expect(lines[0]).toMatch(
      new RegExp(
        `^the read models are rebuilt from the log: .*read-models\\.sqlite held version ${READ_MODEL_SCHEMA_VERSION - 1}, this release's read models are version ${READ_MODEL_SCHEMA_VERSION}`,
      ),
    );
    expect(lines).toContain('rebuilding the read models from the log: at position 1 of 3, 1 events applied');
    expect(lines[lines.length - 1]).toMatch(/^the read models are rebuilt: 3 events applied, up to position 3, in \d+\.\d s$/);
  });

  it('given read models of a NEWER version (a rollback), when this build starts, then it drops and rebuilds them and says a newer build wrote them', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    ReadModelStore.open(file).close();
    const newer = new Database(file);
    newer.pragma(`user_version = ${READ_MODEL_SCHEMA_VERSION + 1}`);
    newer.close();
    await runProjector(file);
    expect(projectorLines()[0]).toContain(
      `held version ${READ_MODEL_SCHEMA_VERSION + 1}, this release's read models are version ${READ_MODEL_SCHEMA_VERSION} (a newer build wrote them: this is a rollback), so they were dropped`,
    );
  });

  it('given a new file or one of this version, when the service starts, then no rebuild is logged', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    await runProjector(file);
    await runProjector(file);
    expect(projectorLines()).toEqual([]);
  });
});
