/**
 * Where the projector applies the erasure record of a session of few but large events (newcomer
 * ncretry F5): erasing the read-model rows costs in proportion to their text (its recall rows
 * most), so a record of a session whose logged events hold at least `LARGE_ERASURE_BYTES` is
 * applied in the worker thread, as one of `LARGE_ERASURE_EVENTS` events or more is, not on the
 * event loop. Before, only the event count decided: 999 events of 3,000 CJK characters took
 * seconds of one transaction on the event loop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@lib/event-store';
import { SESSION_ERASED, erasureStream, type SessionErasedData } from '../events/erasure-events';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { findSession, loggedBytesOfSession } from './queries/session-row';
import { searchRecall } from './queries/recall-query';
import { ReadModelStore } from './read-model-store';
import { LARGE_ERASURE_BYTES, LARGE_ERASURE_EVENTS, SessionProjector } from './session-projector';
import { SessionReadModelWriter } from './session-read-model-writer';
import { conversationEvent } from './testing/followed-store';

jest.setTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), 'large-erasure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `length` ideographs of the CJK block, a different run per `seed`. */
const ideographs = (length: number, seed: number) => Array.from({ length }, (_, i) => String.fromCodePoint(0x4e00 + ((seed * 7919 + i * 131) % 3000))).join('');

it('applies the erasure record of a session of few events holding LARGE_ERASURE_BYTES in the worker thread, not on the event loop', async () => {
  const events = SqliteEventStore.open(':memory:');
  const projector = new SessionProjector(ReadModelStore.open(join(dir, 'read-models.sqlite')));
  const onTheEventLoop = jest.spyOn(SessionReadModelWriter.prototype, 'eraseSession');
  try {
    // 40 events of 3,000 ideographs (9 KB of UTF-8 each), 4 an append: no batch large enough for the worker on its own.
    const stream = sessionStream(sessionKey('acme', 's'));
    let last = { position: 0n, revision: -1n };
    for (let i = 0; i < 40; i += 4) {
      const appended = await events.appendToStream(
        stream,
        Array.from({ length: 4 }, (_, k) => ({ ...conversationEvent(`e${i + k}`, ideographs(3000, i + k)), metadata: { tenantId: 'acme', sessionId: 's' } })),
      );
      last = { position: appended.position, revision: appended.nextExpectedRevision };
    }
    projector.start(events);
    expect(await projector.waitForPosition(last.position, 60_000)).toBe(true);
    expect(loggedBytesOfSession(projector.store, 'acme', 's')).toBeGreaterThanOrEqual(LARGE_ERASURE_BYTES);
    const erasedEvents = 40;
    expect(erasedEvents).toBeLessThan(LARGE_ERASURE_EVENTS);

    const data: SessionErasedData = {
      sessionId: 's',
      erasedEvents,
      erasedAt: new Date().toISOString(),
      lastPosition: last.position.toString(),
      lastRevision: last.revision.toString(),
    };
    const record = await events.appendToStream(erasureStream('acme'), [{ id: randomUUID(), type: SESSION_ERASED, data }]);
    expect(await projector.waitForPosition(record.position, 90_000)).toBe(true);
    expect(onTheEventLoop).not.toHaveBeenCalled();
    expect(findSession(projector.store, 'acme', 's')).toBeNull();
    expect(loggedBytesOfSession(projector.store, 'acme', 's')).toBe(0);
    // The worker indexed the tenant's trigram index anew under its name: this thread's connection,
    // whose statements name it, indexes and finds a later event there.
    expect(searchRecall(projector.store, { tenantId: 'acme', q: ideographs(3000, 7).slice(50, 60) }).items).toEqual([]);
    const later = await events.appendToStream(sessionStream(sessionKey('acme', 't')), [
      { ...conversationEvent('t1', '東京タワーの夜景'), metadata: { tenantId: 'acme', sessionId: 't' } },
    ]);
    expect(await projector.waitForPosition(later.position, 60_000)).toBe(true);
    expect(searchRecall(projector.store, { tenantId: 'acme', q: 'タワー' }).items.map((i) => i.sessionId)).toEqual(['t']);
  } finally {
    onTheEventLoop.mockRestore();
    await projector.stop();
    projector.store.close();
    await events.close();
  }
});
