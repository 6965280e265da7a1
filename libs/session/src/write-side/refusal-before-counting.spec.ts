/**
 * A large append (its texts counted off the request thread, see TokenCountingPool) that the rules
 * on the session's state refuse (another user, an unknown call, a second answer) is refused before
 * its tokens are counted: with the answer the same request with a small text gets, the counting
 * pool never asked, the log unchanged. The same request made valid is counted once and written.
 * The early check takes the decision's paths that read the log (call ids the state does not
 * know) and reloads a cached state before it refuses: an answer to a call only the store knows is
 * not refused. Two handlers with their own caches on one store play two service processes.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EventBus } from '@nestjs/cqrs';
import type { SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { AppendSessionEventsHandler } from './append-session-events';
import { appendAs } from './testing/append-as';
import { SessionStateCache } from './session-state-cache';
import { computeEventCosts } from '../domain/event-costs';
import { CONVERSATION_EVENT, EVENTS_ARCHIVED, sessionKey, sessionStream, type ConversationEventData } from '../events/session-stream-events';
import { ToolCallConflictError, UnknownToolCallError, UserIdConflictError } from '../errors';
import { INLINE_COUNT_LIMIT, sharedTokenCountingPool } from '../token-counting/token-counting-pool';

const noBus = { publish: () => undefined } as unknown as EventBus;
const handlerOn = (store: SqliteEventStore) => new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);

/** 1,000,000 characters of words: far over the inline limit, so counted off-thread. */
const LARGE = Array.from({ length: 200_000 }, (_, i) => ['alpha', 'beta', 'gamma', 'delta'][i % 4])
  .join(' ')
  .slice(0, 1_000_000);

const call = (id: string, callId: string, text: string | null = null): SessionEvent => ({
  id,
  type: 'assistant',
  text,
  toolCalls: [{ id: callId, name: 'lookup', arguments: '{}' }],
});
const answer = (id: string, callId: string, data = 'ok'): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'lookup', data }] });
const user = (id: string, text = `message ${id}`): SessionEvent => ({ id, type: 'user', text });

describe('a large append refused by the rules on the session state is refused before it is counted', () => {
  let dir: string;
  let store: SqliteEventStore;
  let counted: jest.SpyInstance;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refusal-before-counting-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    expect(LARGE.length).toBeGreaterThan(INLINE_COUNT_LIMIT);
  });
  beforeEach(() => {
    // Off-thread counting, counted inline here (same numbers, no worker thread for the spec).
    counted = jest.spyOn(sharedTokenCountingPool(), 'eventCosts').mockImplementation(async (events) => events.map(computeEventCosts));
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const send = appendAs;
  const refusal = (handler: AppendSessionEventsHandler, sessionId: string, events: SessionEvent[], userId?: string) =>
    send(handler, sessionId, events, userId).then(
      () => null,
      (err: unknown) => err as Error,
    );
  const idsIn = async (sessionId: string) => (await store.readStream(sessionStream(sessionKey('t', sessionId)))).map((e) => e.id);
  /** Alice's session with one call open (`call_1`); the handler has it cached. */
  async function owned(sessionId: string): Promise<AppendSessionEventsHandler> {
    const handler = handlerOn(store);
    await send(handler, sessionId, [user('u0')], 'alice');
    await send(handler, sessionId, [call('c1', 'call_1')], 'alice');
    return handler;
  }

  it.each([
    ['an answer to a call never made', UnknownToolCallError, (text: string) => [answer('r9', 'call_9', text)], 'alice'],
    ["another user's append to an owned session", UserIdConflictError, (text: string) => [user('b1', text)], 'bob'],
    ['a call id reused while open', ToolCallConflictError, (text: string) => [call('c2', 'call_1', text)], undefined],
  ])('%s: the answer of the same request with a small text, nothing counted, nothing written', async (_case, refusedWith, request, userId) => {
    const handler = await owned(`refused-${refusedWith.name}`);
    const sessionId = `refused-${refusedWith.name}`;
    const before = await idsIn(sessionId);
    const small = await refusal(handler, sessionId, request('small'), userId);
    const large = await refusal(handler, sessionId, request(LARGE), userId);
    expect(small).toBeInstanceOf(refusedWith);
    expect(large).toBeInstanceOf(refusedWith);
    expect({ code: (large as { code?: string }).code, message: large?.message }).toEqual({ code: (small as { code?: string }).code, message: small?.message });
    expect(counted).not.toHaveBeenCalled();
    expect(await idsIn(sessionId)).toEqual(before);
  });

  it('the same requests made valid are counted once each and written, with their costs', async () => {
    const handler = await owned('valid');
    await expect(send(handler, 'valid', [answer('r1', 'call_1', LARGE)], 'alice')).resolves.toEqual({ revision: '2', position: expect.any(String) });
    await expect(send(handler, 'valid', [user('a1', LARGE)], 'alice')).resolves.toEqual({ revision: '3', position: expect.any(String) });
    await expect(send(handler, 'valid', [call('c2', 'call_2', LARGE)])).resolves.toEqual({ revision: '4', position: expect.any(String) });
    expect(counted).toHaveBeenCalledTimes(3);
    const stored = (await store.readStream(sessionStream(sessionKey('t', 'valid')), { fromRevision: 2n })).map((e) => e.data as ConversationEventData);
    expect(stored.map((d) => d.costs)).toEqual(stored.map((d) => computeEventCosts(d.event)));
  });

  it('a resend of a large append answers the original result (its rules pass as a retry)', async () => {
    const handler = await owned('resent');
    const first = await send(handler, 'resent', [answer('r1', 'call_1', LARGE)], 'alice');
    await expect(send(handlerOn(store), 'resent', [answer('r1', 'call_1', LARGE)], 'alice')).resolves.toEqual(first);
  });

  it('an answer to a call another process wrote (not in this cached state, in the log) is accepted, counted once', async () => {
    const a = await owned('call-elsewhere');
    await send(handlerOn(store), 'call-elsewhere', [call('c2', 'call_2')]);
    await expect(send(a, 'call-elsewhere', [answer('r2', 'call_2', LARGE)])).resolves.toEqual({ revision: '3', position: expect.any(String) });
    expect(counted).toHaveBeenCalledTimes(1);
  });

  it('an answer to a call answered and archived (in the log only) is a second answer, refused as one, not counted', async () => {
    const handler = await owned('archived');
    await send(handler, 'archived', [answer('r1', 'call_1'), user('u1')]);
    const stream = sessionStream(sessionKey('t', 'archived'));
    await store.appendToStream(
      stream,
      [
        {
          id: randomUUID(),
          type: EVENTS_ARCHIVED,
          data: { compactionId: 'cmp-1', archivedIds: ['u0', 'c1', 'r1'] },
          metadata: { tenantId: 't', sessionId: 'archived' },
        },
      ],
      { expectedRevision: 3n },
    );
    const before = await idsIn('archived');
    // A new process: its state knows the call only from the log.
    const small = await refusal(handlerOn(store), 'archived', [answer('r2', 'call_1')]);
    const large = await refusal(handlerOn(store), 'archived', [answer('r2', 'call_1', LARGE)]);
    expect(small).toBeInstanceOf(ToolCallConflictError);
    expect(large).toBeInstanceOf(ToolCallConflictError);
    expect(large?.message).toBe(small?.message);
    expect(counted).not.toHaveBeenCalled();
    expect(await idsIn('archived')).toEqual(before);
    expect((await store.readStream(stream)).filter((e) => e.type === CONVERSATION_EVENT)).toHaveLength(4);
  });
});
