/**
 * An interrupted erasure (the stream deleted, the process gone before the `SessionErased` record)
 * finished through a replica whose read models had projected only part of the erased life. The
 * record it writes names the life's last revision exactly but the last position that replica
 * holds, lower than the life's: every replica erases the whole life by revision, so the one that
 * had projected all of it keeps no row of the life's last events (log, window, recall index,
 * compactions, the sessions list's row), and both keep the session written again after the
 * deletion.
 */
import { randomUUID } from 'node:crypto';
import type { RecordedEvent } from '@lib/event-store';
import { EventStoreUnavailableError, SqliteEventStore, type AppendOptions, type EventData, type EventStore, type ReadStreamOptions } from '@lib/event-store';
import { CONVERSATION_EVENT, sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { dumpReadModels } from '../read-side/read-model-dump';
import { getWindow } from '../read-side/queries/window-query';
import { searchRecall } from '../read-side/queries/recall-query';
import { listCompactions } from '../read-side/queries/compaction-history-query';
import { getSessionSummary } from '../read-side/queries/session-summary-query';
import { assistant, RecordedSessionLog, tool, user } from '../read-side/testing/recorded-session-log';
import { EraseSessionCommand, EraseSessionHandler, erasureStream } from './erase-session';
import { SessionStateCache } from './session-state-cache';

const STREAM = sessionStream(sessionKey('t', 's'));
const SECRET = 'ERASED-PHRASE-913';
const TOKEN = 'quasarmarmaladeresidue';
/** Text of an unspaced script: indexed in the trigram index too. */
const CJK_SECRET = '秘密の合言葉はさくらもち';
const KEPT = 'keptwordofthenewlife';
const CJK_KEPT = '新しい会話の内容です';
/** The record wait of the handlers (ms): short, the erasure that deleted the stream is gone. */
const RECORD_WAIT_MS = 50;

/** The erased life of session `s` (tenant `t`): conversation with secrets, a compaction with a summary of them, more secrets after it. */
function erasedLife(): RecordedEvent[] {
  const log = new RecordedSessionLog('t');
  log.append('s', user('u0', `hello ${TOKEN}`));
  log.append('s', assistant('a0', `hi, ${SECRET}`));
  log.append('s', user('u1', `${SECRET} ${TOKEN}`), { userId: 'alice' });
  log.append('s', assistant('a1', null, [['lookup', `{"q":"${SECRET}"}`]]));
  log.append('s', tool('t1', 'call-a1-0', 'lookup', `{"found":"${SECRET} ${CJK_SECRET}"}`));
  log.append('s', user('u2', CJK_SECRET));
  log.archive('s', 'c1', ['u0', 'a0', 'u1']);
  log.summary('s', 'c1', 'a1', `they spoke of ${SECRET} ${TOKEN} ${CJK_SECRET}`);
  log.completed('s', 'c1', ['a1', 't1', 'u2']);
  log.append('s', user('u3', `last words ${TOKEN} ${CJK_SECRET}`));
  return log.events;
}

/** The session written again after the deletion (its events continue the revisions). */
const NEW_LIFE: EventData[] = [
  { id: randomUUID(), type: CONVERSATION_EVENT, data: { event: user('n1', `${KEPT} one`), costs: { chars: 10, cl100k_base: 3, o200k_base: 3 } } },
  { id: randomUUID(), type: CONVERSATION_EVENT, data: { event: user('n2', CJK_KEPT), costs: { chars: 10, cl100k_base: 3, o200k_base: 3 } } },
];

/** What `store` holds of the read models, checkpoint aside. */
function contentOf(store: ReadModelStore): Record<string, unknown[]> {
  const { projector_checkpoints: _checkpoint, ...content } = dumpReadModels(store);
  return content;
}

/** The read models a projector rebuilt from `store` holds now. */
async function rebuilt(store: EventStore): Promise<Record<string, unknown[]>> {
  const fresh = new SessionProjector(ReadModelStore.open(':memory:'));
  await fresh.rebuild(store);
  const content = contentOf(fresh.store);
  fresh.store.close();
  return content;
}

/**
 * Replica A projects the first `lag` events of the erased life and stops; replica B projects all
 * of them. An erasure through B deletes the stream and fails before its record; A, restarted
 * (caught up with the log, which no longer holds the deleted events), finishes it. Session `s` is
 * written again right after A finds the stream empty, before A's record. Returns the store and
 * both projectors, caught up with the log.
 */
async function finishedThroughLaggingReplica(lag: number) {
  const store = SqliteEventStore.open(':memory:');
  const [a, b] = [new SessionProjector(ReadModelStore.open(':memory:')), new SessionProjector(ReadModelStore.open(':memory:'))];
  const caught = async (...projectors: SessionProjector[]) => {
    const head = await store.headPosition();
    for (const p of projectors) expect(await p.waitForPosition(head, 5000)).toBe(true);
  };
  a.start(store);
  b.start(store);
  const life = erasedLife();
  for (const [n, e] of life.entries()) {
    if (n === lag) {
      await caught(a);
      await a.stop();
    }
    await store.appendToStream(STREAM, [{ id: randomUUID(), type: e.type, data: e.data, metadata: e.metadata }]);
  }
  await caught(b);
  // B's erasure deletes the stream and stops before its record.
  const failing: EventStore = Object.assign(Object.create(store) as EventStore, {
    appendToStream: (stream: string, events: EventData[], options?: AppendOptions) =>
      stream === erasureStream('t') ? Promise.reject(new EventStoreUnavailableError('the process ended')) : store.appendToStream(stream, events, options),
  });
  await expect(
    new EraseSessionHandler(failing, new SessionStateCache(failing), b, RECORD_WAIT_MS).execute(new EraseSessionCommand('t', 's')),
  ).rejects.toBeInstanceOf(EventStoreUnavailableError);
  expect(await store.readStream(STREAM)).toEqual([]);
  // Another session's event: the log's head is an event again (it was the last deleted one, which A never reads).
  await store.appendToStream(sessionStream(sessionKey('t', 'other')), [
    { id: randomUUID(), type: CONVERSATION_EVENT, data: { event: user('o1', 'another session'), costs: { chars: 15, cl100k_base: 4, o200k_base: 4 } } },
  ]);
  a.start(store);
  await caught(a, b);
  expect(getWindow(a.store, 't', 's')).not.toBeNull();
  // A finishes it; the id is written again right after A found the stream empty.
  let recreated = false;
  const racing: EventStore = Object.assign(Object.create(store) as EventStore, {
    readStream: async (stream: string, options?: ReadStreamOptions) => {
      const events = await store.readStream(stream, options);
      if (stream === STREAM && events.length === 0 && !recreated) {
        recreated = true;
        await store.appendToStream(STREAM, NEW_LIFE);
        await caught(a, b);
      }
      return events;
    },
  });
  const answer = await new EraseSessionHandler(racing, new SessionStateCache(racing), a, RECORD_WAIT_MS).execute(new EraseSessionCommand('t', 's'));
  expect(recreated).toBe(true);
  await caught(a, b);
  return { store, a, b, life, answer };
}

describe('an interrupted erasure finished through a lagging replica', () => {
  const LIFE_LENGTH = erasedLife().length;

  // Every lag point: A holds the first 1..all events of the life (with none it has nothing to finish).
  it.each(Array.from({ length: LIFE_LENGTH }, (_, n) => n + 1))(
    'given replica A projected %i events of the life and B all of them, when A writes the record, then neither keeps a row of the life and both keep the session written again',
    async (lag) => {
      const { store, a, b, life, answer } = await finishedThroughLaggingReplica(lag);
      try {
        const [record] = await store.readStream(erasureStream('t'));
        // The record names the life exactly by revision; its position is A's view of it.
        expect(record.data).toMatchObject({ sessionId: 's', lastRevision: String(LIFE_LENGTH - 1), erasedEvents: LIFE_LENGTH });
        expect(answer).toMatchObject({ sessionId: 's', erasedEvents: LIFE_LENGTH, position: record.position.toString() });
        const expected = await rebuilt(store);
        for (const [name, p] of [
          ['A', a],
          ['B', b],
        ] as const) {
          const dump = JSON.stringify(dumpReadModels(p.store));
          for (const text of [SECRET, TOKEN, CJK_SECRET, 'alice'])
            expect({ replica: name, holds: text, found: dump.includes(text) }).toEqual({ replica: name, holds: text, found: false });
          // Log and window: the new life only (its revisions continue after the erased ones).
          const rows = contentOf(p.store).session_log as Array<{ session_key: string; revision: string }>;
          expect(rows.filter((row) => row.session_key === sessionKey('t', 's')).map((row) => row.revision)).toEqual([
            String(LIFE_LENGTH),
            String(LIFE_LENGTH + 1),
          ]);
          expect(getWindow(p.store, 't', 's')?.entries.map((e) => e.event.id)).toEqual(['n1', 'n2']);
          // Recall: neither index finds the life; both find the new life.
          expect(searchRecall(p.store, { tenantId: 't', q: TOKEN, archived: true }).items).toEqual([]);
          expect(searchRecall(p.store, { tenantId: 't', q: 'さくらもち', archived: true }).items).toEqual([]);
          expect(searchRecall(p.store, { tenantId: 't', q: KEPT }).items.map((i) => i.eventId)).toEqual(['n1']);
          expect(searchRecall(p.store, { tenantId: 't', q: '会話の内容' }).items.map((i) => i.eventId)).toEqual(['n2']);
          // Compactions and the sessions list's row: the new life's.
          expect(listCompactions(p.store, 't', 's')).toEqual([]);
          expect(getWindow(p.store, 't', 'other')?.entries.map((e) => e.event.id)).toEqual(['o1']);
          expect(getSessionSummary(p.store, 't', 's', 'chars')).toMatchObject({ userId: null, revision: BigInt(LIFE_LENGTH + 1), eventCount: 2 });
          // All of it: what a rebuild from the log gives.
          expect({ replica: name, ...contentOf(p.store) }).toEqual({ replica: name, ...expected });
        }
        expect(life).toHaveLength(LIFE_LENGTH);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
        await store.close();
      }
    },
  );
});
