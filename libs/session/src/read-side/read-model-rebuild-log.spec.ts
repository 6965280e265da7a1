/**
 * Read models of another schema version (an upgrade) are dropped and rebuilt from the log, and the
 * log says so: one line at the start (from which version to which), progress lines on a long
 * rebuild, one line when done (newcomer: the rebuild was silent). A rebuild interrupted (the
 * process killed or stopped during it, an upgrade's or `npm run rebuild-read-models`') is finished
 * at the next start, which says so and logs its end as well (newcomer ncsre: it finished silently).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Logger } from '@nestjs/common';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { READ_MODEL_SCHEMA_VERSION } from './read-model-schema';
import type { EventStore } from '@lib/event-store';
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

  const olderVersionFile = (): string => {
    const file = path.join(dir, 'read-models.sqlite');
    ReadModelStore.open(file).close();
    const old = new Database(file);
    old.pragma(`user_version = ${READ_MODEL_SCHEMA_VERSION - 1}`);
    old.close();
    return file;
  };
  const interrupted =
    /^the read models are rebuilt from the log, finishing a rebuild that was interrupted \(it started at \d{4}-\d\d-\d\dT[\d:.]+Z: (.*); the process stopped during it\): .*read-models\.sqlite resumes at position 1; reads wait for the rebuild/;
  const done = (events: number) => new RegExp(`^the read models are rebuilt: ${events} events applied, up to position 3, in \\d+\\.\\d s$`);

  it("given an upgrade's rebuild interrupted after its first event, when the service starts again, then it says it finishes that rebuild and logs its end", async () => {
    const file = olderVersionFile();
    const killed = new SessionProjector(ReadModelStore.open(file)); // the upgrade's start: dropped, the rebuild begins…
    killed.applyBatch((await events.readAll()).slice(0, 1));
    killed.store.close(); // …and the process dies (nothing more is written)
    log.mockClear();
    await runProjector(file);
    const lines = projectorLines();
    expect(lines[0]).toMatch(interrupted);
    expect(lines[0].match(interrupted)![1]).toMatch(
      new RegExp(`read-models\\.sqlite held version ${READ_MODEL_SCHEMA_VERSION - 1}, this release's read models are version ${READ_MODEL_SCHEMA_VERSION}$`),
    );
    expect(lines[lines.length - 1]).toMatch(done(2));
    log.mockClear();
    await runProjector(file); // done: the next start is quiet
    expect(projectorLines()).toEqual([]);
  });

  it('given npm run rebuild-read-models interrupted after its first page, when the service starts, then it says it finishes that rebuild and logs its end', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    await runProjector(file);
    let pages = 0;
    const failing = Object.assign(Object.create(events) as EventStore, {
      readAll: (options: Parameters<EventStore['readAll']>[0]) => (++pages > 1 ? Promise.reject(new Error('SIGTERM')) : events.readAll(options)),
    });
    const rebuilding = new SessionProjector(ReadModelStore.open(file), { rebuildPageSize: 1 });
    await expect(rebuilding.rebuild(failing)).rejects.toThrow('SIGTERM');
    rebuilding.store.close();
    log.mockClear();
    await runProjector(file);
    const lines = projectorLines();
    expect(lines[0]).toMatch(interrupted);
    expect(lines[0].match(interrupted)![1]).toBe('npm run rebuild-read-models');
    expect(lines[lines.length - 1]).toMatch(done(2));
  });

  it('given a rebuild that finished, when the service starts, then no rebuild is logged', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const rebuilt = new SessionProjector(ReadModelStore.open(file));
    expect(await rebuilt.rebuild(events)).toBe(3n);
    rebuilt.store.close();
    await runProjector(file);
    expect(projectorLines()).toEqual([]);
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

  it('given read models far behind the log (e.g. deleted after a restore), when the service starts, then it says it catches up, logs progress and when it has caught up', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    await runProjector(file, { catchUpLinePositions: 3, rebuildProgressMs: 0 });
    const lines = projectorLines();
    expect(lines[0]).toMatch(
      /^the read models in .*read-models\.sqlite are at position 0, 3 positions behind the log's head 3: catching up; reads wait for them meanwhile/,
    );
    expect(lines).toContain('the read models catch up with the log: at position 1 of 3, 1 events applied');
    expect(lines[lines.length - 1]).toMatch(/^the read models caught up with the log: 3 events applied, up to position 3, in \d+\.\d s$/);
    expect(lines.some((line) => line.includes('rebuilt'))).toBe(false);
  });

  it('given read models fewer positions behind than the threshold, when the service starts, then the catch-up is silent', async () => {
    await runProjector(path.join(dir, 'read-models.sqlite'), { catchUpLinePositions: 4, rebuildProgressMs: 0 });
    expect(projectorLines()).toEqual([]);
  });
});
