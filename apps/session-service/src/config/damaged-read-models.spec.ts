/**
 * A damaged read-models file (truncated, pages overwritten, header overwritten: newcomer
 * ncstorage, t3c) failed the start and `npm run rebuild-read-models` with SQLite's `database disk
 * image is malformed` / `file is not a database`, naming no file. Read models are rebuildable:
 * the file is moved aside and a new one opened, unless the log is empty (then refused).
 */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore, SESSION_PROJECTOR_NAME, SessionProjector } from '@lib/session';
import { ConfigurationError } from './configuration-error';
import { openReadModelsSettingDamageAside } from './damaged-read-models';

function overwrite(file: string, offset: number, bytes: number): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, randomBytes(bytes), 0, bytes, offset);
  closeSync(fd);
}

const damages: Array<[string, (file: string) => void]> = [
  ['truncated to half', (file) => truncateSync(file, Math.floor(statSync(file).size / 2))],
  ['4 pages overwritten', (file) => overwrite(file, Math.floor(statSync(file).size / 4096 / 2) * 4096, 4 * 4096)],
  ['its header overwritten', (file) => overwrite(file, 0, 100)],
];

describe('a damaged read-models file', () => {
  let dir: string;
  let store: SqliteEventStore;
  let file: string;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'damaged-rm-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'), { writerThread: false });
    for (let i = 0; i < 60; i++)
      await store.appendToStream(`session-default.s${i}`, [{ id: randomUUID(), type: 'user', data: { text: `hello ${i} ${'words '.repeat(400)}` } }]);
    file = path.join(dir, 'read-models.sqlite');
    const readModels = ReadModelStore.open(file);
    await new SessionProjector(readModels).rebuild(store);
    readModels.db.pragma('wal_checkpoint(TRUNCATE)');
    readModels.close();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(damages)('%s: is moved aside (one line naming it) and a new one is opened, which the projector rebuilds from the log', async (_name, damage) => {
    damage(file);
    const said: string[] = [];
    const readModels = await openReadModelsSettingDamageAside(dir, file, store, { quickCheck: true, say: (line) => said.push(line) });
    try {
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        /^the read models file .*read-models\.sqlite is damaged \(.+\): moved aside as read-models\.sqlite\.damaged-\d{4}-\d\d-\d\dT[\d-]+Z/,
      );
      const aside = readdirSync(dir).filter((name) => name.startsWith('read-models.sqlite.damaged-'));
      expect(aside.length).toBeGreaterThanOrEqual(1);
      expect(await new SessionProjector(readModels).rebuild(store)).toBe(60n);
      expect(readModels.db.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 60 });
    } finally {
      readModels.close();
    }
  });

  it('is refused, and left where it is, when the event store log is empty (it may hold the last copy)', async () => {
    overwrite(file, 0, 100);
    const empty = SqliteEventStore.open(path.join(dir, 'other-events.sqlite'));
    const refused = await openReadModelsSettingDamageAside(dir, file, empty, { quickCheck: true, say: () => undefined }).catch((e: unknown) => e);
    await empty.close();
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(
      /its read models \(read-models\.sqlite\) are damaged .*log is empty.*restore the event store from a backup.*do NOT delete read-models\.sqlite/,
    );
    expect(existsSync(file)).toBe(true);
    expect(readdirSync(dir).some((name) => name.includes('.damaged-'))).toBe(false);
  });

  it('a sound file is opened as it is', async () => {
    const readModels = await openReadModelsSettingDamageAside(dir, file, store, { quickCheck: true, say: () => undefined });
    expect(readModels.readCheckpointEvent(SESSION_PROJECTOR_NAME).position).toBe(60n);
    readModels.close();
  });
});
