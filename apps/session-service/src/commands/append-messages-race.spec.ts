/**
 * `POST …/messages` racing a concurrent append to the same session: the tool name of a tool
 * message (`role: "tool"`, no `name`) is the name of the call it answers in the state the append
 * is decided on, on every attempt. Before the fix, the name was looked up once, before the
 * command ran: a call appended by another request between that look-up and the decision was
 * accepted as answered with an empty tool name, and after a revision conflict a reused call id
 * kept the name of the call it no longer answered. The interleavings are injected
 * deterministically: a store (or state cache) that appends "the other request" at a chosen point.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import {
  AppendSessionEventsHandler,
  SessionError,
  SessionStateCache,
  sessionKey,
  sessionStream,
  CONVERSATION_EVENT,
  computeEventCosts,
  storeEventId,
  type ConversationEventData,
} from '@lib/session';
import type { SessionEvent } from '@lib/compaction';
import { requestSchemas } from '../http/request-schemas';
import { appendMessagesCommandFrom } from './session-command-requests';

const schemas = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
const noBus = { publish: () => undefined } as unknown as EventBus;

/** Appends `events` as another request would (straight to the store, not through this test's cache). */
async function appendDirectly(store: EventStore, sessionId: string, events: SessionEvent[]): Promise<void> {
  const key = sessionKey('t', sessionId);
  await store.appendToStream(
    sessionStream(key),
    events.map((event) => ({
      id: storeEventId(key, 0n, event.id), // never erased: incarnation 0n
      type: CONVERSATION_EVENT,
      data: { event, costs: computeEventCosts(event) } satisfies ConversationEventData,
      metadata: { tenantId: 't', sessionId },
    })),
    { expectedRevision: 'any' },
  );
}

/** The stored tool responses of a session: `[toolCallId, name]` in log order. */
async function storedResponses(store: EventStore, sessionId: string): Promise<Array<[string, string]>> {
  const events = await store.readStream(sessionStream(sessionKey('t', sessionId)));
  return events
    .filter((e) => e.type === CONVERSATION_EVENT)
    .map((e) => (e.data as ConversationEventData).event)
    .flatMap((e) => (e.type === 'tool' ? e.responses.map((r): [string, string] => [r.toolCallId, r.name]) : []));
}

const callEvent = (id: string, callId: string, name: string): SessionEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: [{ id: callId, name, arguments: '{}' }],
});

describe('POST …/messages: tool names resolved on the state the append is decided on', () => {
  let dir: string;
  let store: EventStore;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'messages-race-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Maps the body and runs the command as the controller does, with `cache` as the process's state cache. */
  async function send(cache: SessionStateCache, storeForHandler: EventStore, sessionId: string, body: unknown): Promise<unknown> {
    const command = appendMessagesCommandFrom(schemas, 't', sessionId, body);
    try {
      return await new AppendSessionEventsHandler(storeForHandler, cache, noBus).execute(command);
    } catch (err) {
      if (err instanceof SessionError) return { code: err.code };
      throw err;
    }
  }

  it('a call appended after the first read of the session never leaves its answer with an empty name', async () => {
    await appendDirectly(store, 'late-call', [{ id: 'u1', type: 'user', text: 'find it' }]);
    // The other request's call lands right after this request's first read of the session state.
    let injected = false;
    const cache = new (class extends SessionStateCache {
      override async load(key: string) {
        const state = await super.load(key);
        if (!injected) {
          injected = true;
          await appendDirectly(store, 'late-call', [callEvent('c1', 'k1', 'search')]);
        }
        return state;
      }
    })(store);
    const answer = await send(cache, store, 'late-call', { messages: [{ role: 'tool', tool_call_id: 'k1', content: 'found', id: 'r1' }] });
    expect(injected).toBe(true);
    const responses = await storedResponses(store, 'late-call');
    // Either the append was decided on the state without the call (the answer came first: refused, nothing written) or on
    // a state with it (named after it); never stored unnamed.
    if ('code' in (answer as object)) {
      expect(answer).toEqual({ code: 'unknown_tool_call' });
      expect(responses).toEqual([]);
    } else {
      expect(responses).toEqual([['k1', 'search']]);
    }
  });

  it('after a revision conflict, the name is resolved again: a reused call id is named after the call it answers now', async () => {
    await appendDirectly(store, 'reused-id', [{ id: 'u1', type: 'user', text: 'book it' }, callEvent('c1', 'k', 'lookup')]);
    // The other request answers call k and makes a new call k ("book") between this request's decision and its write.
    let injected = false;
    const racing: EventStore = Object.create(store);
    racing.appendToStream = async (stream, events, options) => {
      if (!injected) {
        injected = true;
        await appendDirectly(store, 'reused-id', [
          { id: 't-other', type: 'tool', responses: [{ toolCallId: 'k', name: 'lookup', data: 'looked up' }] },
          callEvent('c2', 'k', 'book'),
        ]);
      }
      return store.appendToStream(stream, events, options);
    };
    const answer = await send(new SessionStateCache(racing), racing, 'reused-id', {
      messages: [{ role: 'tool', tool_call_id: 'k', content: 'booked', id: 'r1' }],
    });
    expect(injected).toBe(true);
    expect(answer).toMatchObject({ revision: '4' });
    expect(await storedResponses(store, 'reused-id')).toEqual([
      ['k', 'lookup'],
      ['k', 'book'],
    ]);
  });
});
