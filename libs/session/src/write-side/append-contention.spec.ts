/**
 * An append sent without `expectedRevision` while other writers keep moving the session on (other
 * processes sharing the log): it reloads and decides again up to MAX_APPEND_ATTEMPTS times, and
 * then answers a conflict that says to resend the request unchanged, writing nothing of its own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { AppendSessionEventsCommand, AppendSessionEventsHandler, MAX_APPEND_ATTEMPTS } from './append-session-events';
import { SessionStateCache } from './session-state-cache';
import { sessionKey, sessionStream, CONVERSATION_EVENT, type ConversationEventData } from '../events/session-stream-events';
import { computeEventCosts } from '../domain/event-costs';
import { storeEventId } from '../domain/session-ids';
import { RevisionConflictError } from '../errors';

const noBus = { publish: () => undefined } as unknown as EventBus;

describe('AppendSessionEventsHandler under writers of other processes', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'append-contention-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`gives up after ${MAX_APPEND_ATTEMPTS} attempts with a conflict that says to resend unchanged, and writes nothing of its own`, async () => {
    const key = sessionKey('t', 'contended');
    let others = 0;
    // Before each of the handler's appends, "another process" appends to the same session.
    const contended: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendToStream: async (...args: Parameters<EventStore['appendToStream']>) => {
        const event = { id: `other-${others++}`, type: 'user' as const, text: 'from elsewhere' };
        await store.appendToStream(sessionStream(key), [
          { id: storeEventId(key, 0n, event.id), type: CONVERSATION_EVENT, data: { event, costs: computeEventCosts(event) } satisfies ConversationEventData },
        ]);
        return store.appendToStream(...args);
      },
    });
    const handler = new AppendSessionEventsHandler(contended, new SessionStateCache(contended), noBus);
    const error = await handler.execute(new AppendSessionEventsCommand('t', 'contended', [{ event: { id: 'mine', type: 'user', text: 'hello' } }])).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RevisionConflictError);
    expect((error as Error).message).toMatch(/changed the session 32 times in a row .*nothing was written: resend the request unchanged/);
    expect(others).toBe(MAX_APPEND_ATTEMPTS);
    const ids = (await store.readStream(sessionStream(key))).map((e) => (e.data as ConversationEventData).event.id);
    expect(ids).toHaveLength(MAX_APPEND_ATTEMPTS);
    expect(ids).not.toContain('mine');
  });
});
