/**
 * The write side's cache of session states is bounded by the memory its states hold, not only by
 * their number: a cached state keeps its active events whole, so 2,000 sessions whose windows hold
 * large tool results held gigabytes (the heap grew by ~2 bytes per character appended, without
 * bound, while the 2,000-state limit was not reached).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore } from '@lib/event-store';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';
import { estimatedStateBytes, estimatedStringBytes } from './session-state-size';
import { sessionKey } from '../events/session-stream-events';

const noBus = { publish: () => undefined } as unknown as EventBus;
const KIB = 1024;

describe('the cache of session states, bounded by the memory its states hold', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'state-cache-bytes-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const writer = (cache: SessionStateCache) => new AppendSessionEventsHandler(store, cache, noBus);
  const append = (handler: AppendSessionEventsHandler, sessionId: string, ...events: SessionEvent[]) =>
    handler.execute(
      new AppendSessionEventsCommand(
        't',
        sessionId,
        events.map((event) => ({ event })),
      ),
    );
  const toolResult = (id: string, chars: number): SessionEvent => ({
    id,
    type: 'tool',
    responses: [{ toolCallId: `c-${id}`, name: 'read_file', data: 'x'.repeat(chars) }],
  });
  const user = (id: string, chars = 20): SessionEvent => ({ id, type: 'user', text: 'y'.repeat(chars) });
  const call = (id: string): SessionEvent => ({
    id,
    type: 'assistant',
    text: null,
    toolCalls: [{ id: `c-${id.replace('a', 't')}`, name: 'read_file', arguments: '{"path":"/src/main.ts"}' }],
  });
  /** The states the cache holds, by session, without changing its order (read through `peek`, in LRU order). */
  const cachedStates = (cache: SessionStateCache, sessions: readonly string[]) =>
    sessions.map((s) => [s, cache.peek(sessionKey('t', s))] as const).filter((e): e is [string, NonNullable<(typeof e)[1]>] => e[1] !== null);

  it('given a 1 MiB bound, when ten sessions each take 300 KiB of tool results, then the cache holds about 1 MiB of them, the newest, and the evicted sessions still take appends at the right revisions', async () => {
    const cache = new SessionStateCache(store, 2000, 1024 * KIB);
    const handler = writer(cache);
    const sessions = Array.from({ length: 10 }, (_, i) => `s${i}`);
    for (const s of sessions) {
      await append(handler, s, user(`${s}-u0`), call(`${s}-a0`));
      await append(handler, s, toolResult(`${s}-t0`, 150 * KIB), user(`${s}-u1`));
    }
    // each state: 150 Ki characters at 2 bytes each, ~300 KiB; the bound holds three of them (the newest)
    expect(cache.size).toBeLessThanOrEqual(4);
    expect(cache.size).toBeGreaterThanOrEqual(2);
    expect(cache.estimatedBytes).toBeLessThanOrEqual(1024 * KIB);
    expect(cache.peek(sessionKey('t', 's9'))).not.toBeNull();
    expect(cache.peek(sessionKey('t', 's0'))).toBeNull();
    // s0 was evicted: its next append loads it from the store and writes after its four events
    const answer = await append(handler, 's0', user('s0-u2'));
    expect(answer.revision).toBe('4');
    expect(cache.peek(sessionKey('t', 's0'))?.active.size).toBe(5);
  });

  it('given a bound smaller than one state, when that session is used, then its state stays cached until another is used', async () => {
    const cache = new SessionStateCache(store, 2000, 64 * KIB);
    const handler = writer(cache);
    await append(handler, 'big', user('b0', 100 * KIB));
    await append(handler, 'big', user('b1'));
    expect(cache.peek(sessionKey('t', 'big'))).not.toBeNull();
    expect(cache.size).toBe(1);
    await append(handler, 'small', user('m0'));
    await append(handler, 'small', user('m1'));
    expect(cache.peek(sessionKey('t', 'big'))).toBeNull();
    expect(cache.peek(sessionKey('t', 'small'))).not.toBeNull();
  });

  it("property: after any appends and compactions, the cache counts exactly its states' estimates, and stays within its bound unless one state is left", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ session: fc.integer({ min: 0, max: 4 }), chars: fc.integer({ min: 0, max: 6 * KIB }), compact: fc.boolean() }), {
          minLength: 1,
          maxLength: 25,
        }),
        fc.integer({ min: 4, max: 60 }),
        async (steps, boundKib) => {
          const prefix = `p${Math.random().toString(36).slice(2)}-`;
          const cache = new SessionStateCache(store, 2000, boundKib * KIB);
          const handler = writer(cache);
          const compactor = new CompactSessionHandler(store, cache, new ExtractiveSummarizer());
          const sessions = Array.from({ length: 5 }, (_, i) => `${prefix}${i}`);
          let n = 0;
          for (const step of steps) {
            const s = sessions[step.session];
            await append(handler, s, user(`${s}-u${n++}`, step.chars), user(`${s}-u${n++}`));
            if (step.compact) {
              await compactor.execute(new CompactSessionCommand('t', s, parseStrategy({ type: 'sliding-window', maxEvents: 2 }), null, 'chars', false));
            }
          }
          const held = cachedStates(cache, sessions);
          expect(cache.estimatedBytes).toBe(held.reduce((sum, [, state]) => sum + estimatedStateBytes(state), 0));
          if (held.length > 1) expect(cache.estimatedBytes).toBeLessThanOrEqual(boundKib * KIB);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('estimates strings at 2 bytes per UTF-16 code unit and 16 per string, through nested arguments, without reading text', () => {
    expect(estimatedStringBytes('abc')).toBe(22);
    expect(estimatedStringBytes({ a: ['ab', { b: 'c' }], n: 5, z: null })).toBe(16 + 4 + 16 + 2);
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 100; i++) at = at.next = {} as Record<string, unknown>;
    at.text = 'x';
    expect(estimatedStringBytes(deep)).toBe(0);
  });
});
