/**
 * Who ordered an erasure (newcomer finding: `GET /v1/erasures` did not show it, though the record
 * keeps it): the erasures read model keeps the record's `requestedBy` (its known fields only, never
 * anything else a record might carry), null for a record written before records kept it; and read
 * models written by the release before (version 22, whose `erasures` had no such column) are
 * rebuilt from the log at the start, so old erasures show it too.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Logger } from '@nestjs/common';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { listErasures } from './queries/erasure-query';
import { SESSION_ERASED, erasureStream, type SessionErasedData } from '../events/erasure-events';
import type { RequestedBy } from '../events/requested-by';

const OVER_HTTP: RequestedBy = { keyLabel: 'API_KEYS#2', requestId: 'ops-4711', requestIdFrom: 'client', via: 'http' };
const OVER_NATS: RequestedBy = { keyLabel: 'API_KEYS#1', requestId: 'acme:c-9', via: 'nats' };

describe('the erasures read model: who ordered each erasure', () => {
  let dir: string;
  let events: SqliteEventStore;
  let log: jest.SpyInstance;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erasure-requested-by-'));
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    events = SqliteEventStore.open(':memory:');
    const record = (sessionId: string, i: number, requestedBy?: unknown): SessionErasedData =>
      ({
        sessionId,
        erasedEvents: 3,
        erasedAt: `2026-12-04T09:00:0${i}.000Z`,
        lastRevision: '2',
        ...(requestedBy ? { requestedBy } : {}),
      }) as SessionErasedData;
    await events.appendToStream(erasureStream('acme'), [
      { id: '3f1c1a8e-0000-4000-8000-000000000001', type: SESSION_ERASED, data: record('old', 1) },
      { id: '3f1c1a8e-0000-4000-8000-000000000002', type: SESSION_ERASED, data: record('http', 2, OVER_HTTP) },
      { id: '3f1c1a8e-0000-4000-8000-000000000003', type: SESSION_ERASED, data: record('nats', 3, OVER_NATS) },
      // A record carrying more than a requester (none is written so): only the requester's fields are kept.
      { id: '3f1c1a8e-0000-4000-8000-000000000004', type: SESSION_ERASED, data: record('extra', 4, { ...OVER_HTTP, apiKey: 'sk-secret-key' }) },
    ]);
  });
  afterEach(async () => {
    log.mockRestore();
    await events.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function project(file: string): Promise<ReadModelStore> {
    const projector = new SessionProjector(ReadModelStore.open(file));
    projector.start(events);
    expect(await projector.waitForPosition(4n, 5000)).toBe(true);
    await projector.stop();
    return projector.store;
  }

  const requesters = (store: ReadModelStore) => Object.fromEntries(listErasures(store, { tenantId: 'acme' }).erasures.map((e) => [e.sessionId, e.requestedBy]));

  const expected = { old: null, http: OVER_HTTP, nats: OVER_NATS, extra: OVER_HTTP };

  it("keeps the record's requestedBy (its known fields only), null for a record without it", async () => {
    const store = await project(path.join(dir, 'read-models.sqlite'));
    expect(requesters(store)).toEqual(expected);
    expect(JSON.stringify(store.db.prepare('SELECT requested_by_json FROM erasures').pluck().all())).not.toContain('sk-secret-key');
    store.close();
  });

  it('given read models written by the release before (version 22, no requester kept), when the service starts, then they are rebuilt and old erasures show who ordered them', async () => {
    const file = path.join(dir, 'read-models.sqlite');
    (await project(file)).close();
    // The file as version 22 left it: the erasure rows without who ordered them.
    const old = new Database(file);
    const columns = (old.prepare('PRAGMA table_info(erasures)').all() as Array<{ name: string }>).map((c) => c.name);
    if (columns.includes('requested_by_json')) old.exec('ALTER TABLE erasures DROP COLUMN requested_by_json');
    old.pragma('user_version = 22');
    old.close();
    const store = await project(file);
    expect(requesters(store)).toEqual(expected);
    expect((store.db.prepare('PRAGMA table_info(erasures)').all() as Array<{ name: string }>).map((c) => c.name)).toContain('requested_by_json');
    store.close();
  });
});
