/**
 * Property: on random session logs written by the real handlers (tool calls answered, left open,
 * abandoned, archived by compactions; an owner or none), a random append (answers and calls to
 * call ids made, open, archived or never made; user messages; ids new or already in the log; the
 * owner's user id, another's or none) gets the same answer, error code or success, whether its text
 * is small (counted inline, decided once) or large (counted off-thread); and a large one is refused
 * by a rule on the state (`user_id_conflict`, `unknown_tool_call`, `tool_call_conflict`) exactly
 * when it is never counted: the early check refuses what the full decision refuses, and nothing else.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import type { SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { randomLogOps, writeRandomSessionLog, type RandomLogOp } from '../../../../test/support/random-session-log';
import { AppendSessionEventsHandler } from './append-session-events';
import { appendAs } from './testing/append-as';
import { SessionStateCache } from './session-state-cache';
import { computeEventCosts } from '../domain/event-costs';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { INLINE_COUNT_LIMIT, sharedTokenCountingPool } from '../token-counting/token-counting-pool';

const RUNS = Number(process.env.FC_RUNS ?? 40);
const RULE_REFUSALS = new Set(['user_id_conflict', 'unknown_tool_call', 'tool_call_conflict']);
const LARGE = 'word '.repeat(4_000);

type Part = { kind: 'user' | 'answer' | 'call'; id: string; callId: string };
const callIds = fc.constantFrom('call-0', 'call-1', 'open-0', 'open-1', 'open-2', 'open-3', 'never');
// New ids, and ids the random logs write (a resend of them, with other content).
const eventIds = fc.constantFrom('x1', 'x2', 'x3', 'u0', 't0-0', 'c1-0', 'o0');
const part: fc.Arbitrary<Part> = fc.record({ kind: fc.constantFrom('user' as const, 'answer' as const, 'call' as const), id: eventIds, callId: callIds });
const request = fc.uniqueArray(part, { minLength: 1, maxLength: 3, selector: (p) => p.id });

type Example = [RandomLogOp[], string | undefined, Part[], string | undefined];
const ONE_ANSWERED_CALL: RandomLogOp[] = [{ kind: 'turn', answered: 1, open: false, withLate: false, system: false }];
/** Runs met by every seed: `call-0` answered again, a call never made, another user's message, a new message, a partial resend. */
const ANSWER_EXAMPLES: Example[] = [
  [ONE_ANSWERED_CALL, undefined, [{ kind: 'answer', id: 'x1', callId: 'call-0' }], undefined],
  [ONE_ANSWERED_CALL, undefined, [{ kind: 'answer', id: 'x1', callId: 'never' }], undefined],
  [ONE_ANSWERED_CALL, 'alice', [{ kind: 'user', id: 'x1', callId: 'never' }], 'bob'],
  [ONE_ANSWERED_CALL, 'alice', [{ kind: 'user', id: 'x1', callId: 'never' }], 'alice'],
  [
    ONE_ANSWERED_CALL,
    undefined,
    [
      { kind: 'user', id: 'x1', callId: 'never' },
      { kind: 'user', id: 'u0', callId: 'never' },
    ],
    undefined,
  ],
];

/** The request's events, the first one carrying `text`. */
function eventsOf(parts: readonly Part[], text: string): SessionEvent[] {
  return parts.map((p, i): SessionEvent => {
    const body = i === 0 ? text : `${p.kind} ${p.id}`;
    if (p.kind === 'user') return { id: p.id, type: 'user', text: body };
    if (p.kind === 'call') return { id: p.id, type: 'assistant', text: body, toolCalls: [{ id: p.callId, name: 'f', arguments: '{}' }] };
    return { id: p.id, type: 'tool', responses: [{ toolCallId: p.callId, name: 'f', data: body }] };
  });
}

describe('a large append is refused before counting exactly when the decision refuses it by a rule on the state', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refusal-before-counting-property-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    expect(LARGE.length).toBeGreaterThan(INLINE_COUNT_LIMIT);
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  let run = 0;
  it('same answer small or large; a large one is counted unless refused by a rule on the state', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(randomLogOps({ maxAnswered: 2, systemPrompts: false, rollingSummary: false }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(undefined, 'alice'),
        request,
        fc.constantFrom(undefined, 'alice', 'bob'),
        async (ops, owner, parts, userId) => {
          const answers: string[] = [];
          let largeCounted = 0;
          for (const size of ['small', 'large'] as const) {
            const sessionId = `p${run}-${size}`;
            await writeRandomSessionLog(store, sessionId, ops);
            const handler = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus);
            const send = (events: SessionEvent[], user?: string) => appendAs(handler, sessionId, events, user);
            if (owner) await send([{ id: 'owner', type: 'user', text: 'hello' }], owner);
            const counting = jest.spyOn(sharedTokenCountingPool(), 'eventCosts').mockImplementation(async (events) => events.map(computeEventCosts));
            try {
              const head = (await store.readStream(sessionStream(sessionKey('t', sessionId)))).length;
              const answer = await send(eventsOf(parts, size === 'small' ? 'small' : LARGE), userId).then(
                () => 'written',
                (err: Error & { code?: string }) => err.code ?? err.message,
              );
              answers.push(answer);
              if (size === 'large') largeCounted = counting.mock.calls.length;
              if (answer !== 'written') expect((await store.readStream(sessionStream(sessionKey('t', sessionId)))).length).toBe(head);
            } finally {
              counting.mockRestore();
            }
          }
          run++;
          seen.add(answers[1]);
          expect(answers[1]).toBe(answers[0]);
          expect({ answer: answers[1], counted: largeCounted > 0 }).toEqual({ answer: answers[1], counted: !RULE_REFUSALS.has(answers[1]) });
        },
      ),
      // One run of each kind of answer, whatever the seed draws (a stored id in a request with new ones is answered
      // by the store as a duplicate before any tool-call rule, which left random runs short of tool-call conflicts).
      { numRuns: Math.max(RUNS, ANSWER_EXAMPLES.length), examples: ANSWER_EXAMPLES },
    );
    // The runs met each kind of answer (not only acceptances).
    expect([...seen].sort()).toEqual(expect.arrayContaining(['duplicate_event_id', 'tool_call_conflict', 'unknown_tool_call', 'user_id_conflict', 'written']));
  }, 120_000);
});
