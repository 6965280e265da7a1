/**
 * An append without `expectedRevision` decides on this process's cached state without asking the
 * store (SessionStateCache.peek): only a write at the cached revision is kept from that decision,
 * so another process's appends are never overlooked. Two handlers with their own caches on one
 * store play two service processes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { SessionStateCache } from './session-state-cache';
import { sessionKey, sessionStream, type ConversationEventData } from '../events/session-stream-events';
import type { SessionEvent as ConversationEvent } from '@lib/compaction';
import { ToolCallConflictError, UnknownToolCallError } from '../errors';

const noBus = { publish: () => undefined } as unknown as EventBus;

/** A handler with its own cache (one "process"), counting how often it asks the store for a stream's revision. */
function processOn(store: EventStore): { handler: AppendSessionEventsHandler; revisionReads: () => number } {
  let reads = 0;
  const counting: EventStore = Object.assign(Object.create(store) as EventStore, {
    streamRevision: (stream: string) => {
      reads += 1;
      return store.streamRevision(stream);
    },
  });
  return { handler: new AppendSessionEventsHandler(counting, new SessionStateCache(counting), noBus), revisionReads: () => reads };
}

const append = (handler: AppendSessionEventsHandler, sessionId: string, ...events: ConversationEvent[]) =>
  handler.execute(
    new AppendSessionEventsCommand(
      't',
      sessionId,
      events.map((event) => ({ event })),
    ),
  );

const call = (id: string, callId: string): ConversationEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: [{ id: callId, name: 'lookup', arguments: '{}' }],
});
const answer = (id: string, callId: string): ConversationEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'lookup', data: 'ok' }] });
const user = (id: string): ConversationEvent => ({ id, type: 'user', text: `message ${id}` });

/** Two appends by `handler`: after them its cache holds the session (a new session is cached from its second append). */
async function cachedIn(handler: AppendSessionEventsHandler, sessionId: string): Promise<void> {
  await append(handler, sessionId, user('u0'));
  await append(handler, sessionId, user('u1'));
}

describe('an append decided on the cached state', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'append-cached-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const idsIn = async (sessionId: string) =>
    (await store.readStream(sessionStream(sessionKey('t', sessionId)))).map((e) => [e.revision, (e.data as ConversationEventData).event.id]);

  it("given this process's own appends only, when it appends again, then it does not ask the store for the revision", async () => {
    const a = processOn(store);
    await cachedIn(a.handler, 'own');
    const reads = a.revisionReads();
    await append(a.handler, 'own', user('u2'));
    await append(a.handler, 'own', user('u3'));
    expect(a.revisionReads()).toBe(reads);
    expect(await idsIn('own')).toEqual([
      [0n, 'u0'],
      [1n, 'u1'],
      [2n, 'u2'],
      [3n, 'u3'],
    ]);
  });

  it('given another process appended meanwhile, when this one appends, then it is written after the other and nothing is lost', async () => {
    const [a, b] = [processOn(store), processOn(store)];
    await cachedIn(a.handler, 'moved');
    await append(b.handler, 'moved', user('u2'));
    const answered = await append(a.handler, 'moved', user('u3'));
    expect(answered.revision).toBe('3');
    expect(await idsIn('moved')).toEqual([
      [0n, 'u0'],
      [1n, 'u1'],
      [2n, 'u2'],
      [3n, 'u3'],
    ]);
  });

  it('given another process appended a tool call, when this one answers it, then the answer is accepted (not refused on the cached state)', async () => {
    const [a, b] = [processOn(store), processOn(store)];
    await cachedIn(a.handler, 'call-elsewhere');
    await append(b.handler, 'call-elsewhere', call('c1', 'call_1'));
    await expect(append(a.handler, 'call-elsewhere', answer('t1', 'call_1'))).resolves.toEqual({ revision: '3', position: expect.any(String) });
  });

  it('given another process answered a tool call, when this one answers it again, then it is refused as the current state says', async () => {
    const [a, b] = [processOn(store), processOn(store)];
    await cachedIn(a.handler, 'answered-elsewhere');
    await append(a.handler, 'answered-elsewhere', call('c1', 'call_1'));
    await append(b.handler, 'answered-elsewhere', answer('t1', 'call_1'));
    const refused = await append(a.handler, 'answered-elsewhere', answer('t2', 'call_1')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ToolCallConflictError);
    expect((await idsIn('answered-elsewhere')).map(([, id]) => id)).toEqual(['u0', 'u1', 'c1', 't1']);
  });

  it('given an unknown call, when it is answered, then the refusal comes from the current state too', async () => {
    const a = processOn(store);
    await cachedIn(a.handler, 'unknown');
    await expect(append(a.handler, 'unknown', answer('t1', 'call_9'))).rejects.toBeInstanceOf(UnknownToolCallError);
  });

  it('given another process appends to a session, then this process asks the store first on its next appends, until it finds nothing new', async () => {
    const [a, b] = [processOn(store), processOn(store)];
    await cachedIn(a.handler, 'shared');
    await append(b.handler, 'shared', user('u2'));
    await append(a.handler, 'shared', user('u3')); // refused at the cached revision, then decided again on the store's state
    let reads = a.revisionReads();
    await append(a.handler, 'shared', user('u4')); // the last load found another writer's event: asks the store
    expect(a.revisionReads()).toBe(reads + 1);
    reads = a.revisionReads();
    await append(a.handler, 'shared', user('u5')); // the last load found nothing new: trusts its cache again
    expect(a.revisionReads()).toBe(reads);
    expect((await idsIn('shared')).map(([, id]) => id)).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5']);
  });
});
