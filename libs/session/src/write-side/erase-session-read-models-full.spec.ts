/**
 * A DELETE while the read models cannot be written for want of space (newcomer ncdiskfull F1: it
 * answered 500 `internal` after 5 s, twice on a resend, though the erasure was in the log): the
 * erasure does not wait for a projector that cannot pass its record, and a failure of its own
 * erasure of the session's rows for the full disk leaves them to the projector, with one warn line,
 * once space is freed. The full disk is SQLite's own `SQLITE_FULL`: the read models' connection may
 * not grow its file past `PRAGMA max_page_count`.
 */
import { Logger } from '@nestjs/common';
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { getWindow } from '../read-side/queries/window-query';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionCommand, EraseSessionHandler } from './erase-session';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;

describe('an erasure while the read models cannot be written: their disk is full', () => {
  let store: SqliteEventStore;
  let projector: SessionProjector;
  let warn: jest.SpyInstance;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    projector = new SessionProjector(ReadModelStore.open(':memory:'), { retryDelayMs: 10, maxRetryDelayMs: 50 });
    projector.start(store);
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await projector.stop();
    projector.store.close();
    await store.close();
  });

  const say = (sessionId: string, id: string, text: string) =>
    new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus).execute(
      new AppendSessionEventsCommand('t', sessionId, [{ event: { id, type: 'user', text } }]),
    );
  const erase = () => new EraseSessionHandler(store, new SessionStateCache(store), projector, 2000).execute(new EraseSessionCommand('t', 's'));

  /** Writes session `s`, lets the projector apply it, then fills the read models' disk: the next batch (another session's long event) fails. */
  async function fullDisk(): Promise<void> {
    const { position } = await say('s', 'u1', 'a secret to erase');
    expect(await projector.waitForPosition(BigInt(position), 5000)).toBe(true);
    const db = projector.store.db;
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    await say('other', 'o1', 'x'.repeat(200_000));
    for (let i = 0; i < 200 && projector.readModelsFull() === null; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(projector.readModelsFull()).toMatch(/the read models cannot be written: the disk holding .* is full/);
  }

  it('answers at once, without waiting for the projector that cannot pass its record', async () => {
    await fullDisk();
    const started = performance.now();
    const answer = await erase();
    expect(performance.now() - started).toBeLessThan(1500);
    expect({ sessionId: answer.sessionId, erasedEvents: answer.erasedEvents }).toEqual({ sessionId: 's', erasedEvents: 1 });
  });

  it('answers when its own erasure of the rows meets the full disk: the rows are left to the projector, one warn line says so, and they are gone once space is freed', async () => {
    await fullDisk();
    jest.spyOn(projector, 'eraseSession').mockImplementationOnce(() => {
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    });
    const answer = await erase();
    expect({ sessionId: answer.sessionId, erasedEvents: answer.erasedEvents }).toEqual({ sessionId: 's', erasedEvents: 1 });
    const lines = warn.mock.calls.map(([line]) => String(line)).filter((line) => line.startsWith('the erasure of session "s"'));
    expect(lines).toEqual([expect.stringContaining('but the read models cannot be written (the disk holding them is full: database or disk is full)')]);
    expect(getWindow(projector.store, 't', 's')).not.toBeNull(); // still there: the projector has not reached the record

    projector.store.db.pragma('max_page_count = 1073741823');
    expect(await projector.waitForPosition(BigInt(answer.position), 10_000)).toBe(true);
    expect(getWindow(projector.store, 't', 's')).toBeNull();
  });
});
