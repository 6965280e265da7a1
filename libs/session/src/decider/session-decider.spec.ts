/**
 * The session decider, rule by rule (given past events, when a command, then the events to append
 * or the error). Tool-call rules: docs/http-api.md "Tool calls"; policy rules: DESIGN §4 and issue 11.
 */
import type { SessionEvent } from '@lib/compaction';
import { CONVERSATION_EVENT, EVENTS_ARCHIVED, POLICY_SET, type ConversationEventData, type PolicySetData } from '../events/session-stream-events';
import { InvalidRequestError, ToolCallConflictError, UnknownToolCallError, UserIdConflictError } from '../errors';
import { parseStrategy } from '@lib/compaction';
import { alignToStored, decideAppend, decideSetPolicy, type AppendEvents, type SetPolicy } from './session-decider';
import { given, stateOf, type GivenEvent } from './testing/decider-spec';
import { answers, calls, user } from './testing/session-events';

const append = (...events: SessionEvent[]): AppendEvents => ({
  type: 'AppendEvents',
  tenantId: 't',
  sessionId: 's',
  events: events.map((event) => ({ event })),
});
const NOW = { now: new Date('2026-11-30T12:00:00.000Z') };
const policy = (maxEvents: number | null): SetPolicy => ({
  type: 'SetPolicy',
  tenantId: 't',
  sessionId: 's',
  strategy: maxEvents === null ? null : parseStrategy({ type: 'sliding-window', maxEvents }),
  trigger: null,
  estimator: 'chars',
});
const appendedIds = (events: Array<{ data: unknown }>) => events.map((e) => (e.data as ConversationEventData).event.id);

describe('decideAppend', () => {
  it('appends new events in request order, each costed once and with a store id derived from the session and its client id', () => {
    given(user('u1'))
      .when((state) => decideAppend(append(user('u2'), user('u3')), state))
      .then((decision) => {
        expect(decision.kind).toBe('append');
        expect(decision.events.map((e) => e.type)).toEqual([CONVERSATION_EVENT, CONVERSATION_EVENT]);
        expect(appendedIds(decision.events)).toEqual(['u2', 'u3']);
        const [u2] = decision.events;
        expect((u2.data as ConversationEventData).costs.chars).toBe('User: text of u2'.length);
        expect(new Set(decision.events.map((e) => e.id)).size).toBe(2);
      });
  });

  it('gives the same store id to the same client id of the same session, and another to another session', () => {
    const a = decideAppend(append(user('u1')), null).events[0].id;
    const b = decideAppend(append(user('u1')), null).events[0].id;
    const other = decideAppend({ ...append(user('u1')), sessionId: 'other' }, null).events[0].id;
    expect(a).toBe(b);
    expect(other).not.toBe(a);
  });

  it('appends a late answer to a call archived while open (abandoned), archived on arrival and attributed to that compaction', () => {
    given(user('u1'), calls('c1', 'k1'), user('u2'), user('u3'), { type: EVENTS_ARCHIVED, data: { compactionId: 'cmp-1', archivedIds: ['u1', 'c1', 'u2'] } })
      .when((state) => decideAppend(append(answers('r1', 'k1')), state))
      .then((decision) => {
        expect(decision.kind).toBe('append');
        expect(decision.events.map((e) => e.type)).toEqual([CONVERSATION_EVENT, EVENTS_ARCHIVED]);
        expect(decision.events[1].data).toEqual({ compactionId: 'cmp-1', archivedIds: ['r1'], onArrival: true });
      });
  });

  it('rejects an empty list', () => {
    given()
      .when((state) => decideAppend(append(), state))
      .thenThrows(InvalidRequestError, 'invalid_request');
  });

  it('rejects a client id repeated within one request, naming the event at fault by its index', () => {
    given()
      .when((state) => decideAppend(append(user('u0'), user('u1'), user('u1')), state))
      .thenThrows(InvalidRequestError, 'invalid_request', { index: 2, field: 'id' });
  });

  it('treats a resend of ids already in the log as a retry (the store answers the original), skipping the tool-call checks', () => {
    given(user('u1'), calls('c1', 'k'), answers('t1', 'k'))
      .when((state) => decideAppend(append(answers('t1', 'k')), state))
      .then((decision) => expect(decision.kind).toBe('retry'));
  });

  it('leaves a request holding stored ids and new ones to the store (409 duplicate_event_id), skipping the tool-call checks a stored answer would fail', () => {
    given(user('u1'), calls('c1', 'k'), answers('t1', 'k'))
      .when((state) => decideAppend(append(answers('t1', 'k'), user('u2')), state))
      .then((decision) => {
        expect(decision.kind).toBe('append');
        expect(appendedIds(decision.events)).toEqual(['t1', 'u2']);
        // The stored answer gets the store id it was first written with: the store refuses it as a duplicate.
        const original = decideAppend(append(answers('t1', 'k')), stateOf([user('u1'), calls('c1', 'k')]));
        expect(decision.events[0].id).toBe(original.events[0].id);
      });
    given(user('u1'), calls('c1', 'k'), answers('t1', 'k'))
      .when((state) => decideAppend(append(user('u2'), answers('t1', 'k')), state))
      .then((decision) => expect(appendedIds(decision.events)).toEqual(['u2', 't1']));
    // A new event that breaks the rules beside a stored one: still the store's duplicate id, which the client fixes first.
    given(user('u1'), calls('c1', 'k'), answers('t1', 'k'))
      .when((state) => decideAppend(append(user('u1'), answers('t9', 'nope')), state))
      .then((decision) => expect(decision.kind).toBe('append'));
  });

  it('accepts a tool response to an open call of the session', () => {
    given(user('u1'), calls('c1', 'k'))
      .when((state) => decideAppend(append(answers('t1', 'k')), state))
      .then((decision) => expect(appendedIds(decision.events)).toEqual(['t1']));
  });

  it('rejects a second answer to one call', () => {
    given(user('u1'), calls('c1', 'k'), answers('t1', 'k'))
      .when((state) => decideAppend(append(user('u2'), answers('t2', 'k')), state))
      .thenThrows(ToolCallConflictError, 'tool_call_conflict', { index: 1, field: 'responses[0].toolCallId' });
  });

  it('rejects a response to a call the session never made', () => {
    given(user('u1'))
      .when((state) => decideAppend(append(answers('t1', 'nope')), state))
      .thenThrows(UnknownToolCallError, 'unknown_tool_call', { index: 0, field: 'responses[0].toolCallId' });
  });

  it('rejects reusing the id of a call that is still open, and allows it once the call is answered', () => {
    given(user('u1'), calls('c1', 'k'))
      .when((state) => decideAppend(append(calls('c2', 'k')), state))
      .thenThrows(ToolCallConflictError, 'tool_call_conflict');
    given(user('u1'), calls('c1', 'k'), answers('t1', 'k'))
      .when((state) => decideAppend(append(calls('c2', 'k'), answers('t2', 'k')), state))
      .then((decision) => expect(appendedIds(decision.events)).toEqual(['c2', 't2']));
  });

  it('checks calls and answers made earlier in the same request', () => {
    given(user('u1'))
      .when((state) => decideAppend(append(calls('c1', 'a', 'b'), answers('t1', 'a', 'b')), state))
      .then((decision) => expect(appendedIds(decision.events)).toEqual(['c1', 't1']));
  });
});

describe('decideAppend: the user of a session', () => {
  const withUser = (userId?: string): AppendEvents => ({ ...append(user('u9')), ...(userId ? { userId } : {}) });
  const ownedBy = (userId: string): GivenEvent => ({
    type: CONVERSATION_EVENT,
    data: { event: user('u1'), costs: { chars: 1, cl100k_base: 1, o200k_base: 1 }, userId },
  });
  const userIdsOf = (events: Array<{ data: unknown }>) => events.map((e) => (e.data as ConversationEventData).userId);

  it('the first append that names a user makes it the owner: its events carry it, the same again or none is fine', () => {
    given(user('u0'))
      .when((state) => decideAppend(withUser('alice'), state))
      .then((decision) => expect(userIdsOf(decision.events)).toEqual(['alice']));
    given(ownedBy('alice'))
      .when((state) => decideAppend(withUser('alice'), state))
      .then((decision) => expect(userIdsOf(decision.events)).toEqual(['alice']));
    given(ownedBy('alice'))
      .when((state) => decideAppend(withUser(), state))
      .then((decision) => expect(userIdsOf(decision.events)).toEqual([undefined]));
  });

  it('refuses another user (409 user_id_conflict naming the owner), also when the session was created without one', () => {
    given(ownedBy('alice'))
      .when((state) => decideAppend(withUser('bob'), state))
      .thenThrows(UserIdConflictError, 'user_id_conflict');
    given(user('u0'), ownedBy('alice'))
      .when((state) => decideAppend(withUser('bob'), state))
      .thenThrows(UserIdConflictError, 'user_id_conflict');
  });

  it('refuses the owner’s id in another Unicode normalization (NFD for NFC), saying that is the difference; another id does not say so', () => {
    const nfc = 'caf\u00e9 \u00dcser';
    const nfd = nfc.normalize('NFD');
    expect(nfd).not.toBe(nfc);
    const refusal = (owner: string, sent: string): string => {
      let message = '';
      given(ownedBy(owner))
        .when((state) => {
          try {
            decideAppend(withUser(sent), state);
          } catch (err) {
            expect(err).toBeInstanceOf(UserIdConflictError);
            return (err as Error).message;
          }
          throw new Error('expected a refusal');
        })
        .then((text) => (message = text));
      return message;
    };
    expect(refusal(nfc, nfd)).toContain('the two differ only in their Unicode normalization');
    expect(refusal(nfd, nfc)).toContain('the two differ only in their Unicode normalization');
    expect(refusal('alice', 'bob')).not.toContain('normalization');
  });

  it('leaves a resend of ids already in the log to the store (which answers the original, or duplicate_event_id for other content), with or without the userId', () => {
    for (const userId of ['alice', undefined]) {
      given(ownedBy('alice'))
        .when((state) => decideAppend({ ...append(user('u1')), userId }, state))
        .then((decision) => expect(decision.kind).toBe('retry'));
    }
  });

  it('refuses a resend naming another user than the owner (409 user_id_conflict), as any append', () => {
    given(ownedBy('alice'))
      .when((state) => decideAppend({ ...append(user('u1')), userId: 'bob' }, state))
      .thenThrows(UserIdConflictError, 'user_id_conflict');
  });

  it('aligns a resend with the stored data when only userId or key order differ, and leaves other content as sent', () => {
    const [sent] = decideAppend({ ...append(user('u1')), userId: 'alice' }, null).events;
    const storedData = { ...(sent.data as ConversationEventData), userId: undefined };
    delete storedData.userId;
    const reordered = { ...storedData, event: { text: 'text of u1', id: 'u1', type: 'user' } };
    expect(alignToStored([sent], new Map([[sent.id, reordered]]))[0].data).toBe(reordered);
    const other = { ...storedData, event: { ...storedData.event, text: 'other' } };
    expect(alignToStored([sent], new Map([[sent.id, other]]))[0]).toBe(sent);
    expect(alignToStored([sent], new Map())[0]).toBe(sent);
  });

  it('aligns a resent tool message sent without names (/messages) with the names stored with it, and costs are not compared', () => {
    const unnamed: SessionEvent = { id: 't1', type: 'tool', responses: [{ toolCallId: 'k', name: '', data: 'late' }] };
    const call: SessionEvent = { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'k', name: 'book_flight', arguments: '{}' }] };
    const [, sent] = decideAppend(append(call, unnamed), null).events;
    const storedData = {
      ...(sent.data as ConversationEventData),
      event: { ...unnamed, responses: [{ toolCallId: 'k', name: 'book_flight', data: 'late' }] },
      costs: { cl100k_base: 1, o200k_base: 1, chars: 1 },
    };
    expect(alignToStored([sent], new Map([[sent.id, storedData]]), [unnamed])[0].data).toBe(storedData);
    expect(storedData.costs).not.toEqual((sent.data as ConversationEventData).costs);
    // Named as sent (/events): a name is content.
    expect(alignToStored([sent], new Map([[sent.id, storedData]]))[0]).toBe(sent);
    // Unnamed, but answering another call than the stored response: other content.
    const otherCall = { ...storedData, event: { ...unnamed, responses: [{ toolCallId: 'j', name: 'book_flight', data: 'late' }] } };
    expect(alignToStored([sent], new Map([[sent.id, otherCall]]), [unnamed])[0]).toBe(sent);
  });

  it('aligns a resent notice with one stored named "notice" (how /messages stored notices before), and no other name', () => {
    const notice: SessionEvent = { id: 'n1', type: 'system', text: 'The user went offline.', notice: true };
    const [sent] = decideAppend(append(notice), null).events;
    const storedNamed = { ...(sent.data as ConversationEventData), event: { ...notice, name: 'notice' } };
    expect(alignToStored([sent], new Map([[sent.id, storedNamed]]))[0].data).toBe(storedNamed);
    // a name other than "notice", or "notice" on a system message that is not a notice, is content
    const storedOther = { ...storedNamed, event: { ...notice, name: 'ops' } };
    expect(alignToStored([sent], new Map([[sent.id, storedOther]]))[0]).toBe(sent);
    const [plain] = decideAppend(append({ id: 'n1', type: 'system', text: 'The user went offline.' }), null).events;
    const storedPlainNamed = { ...(plain.data as ConversationEventData), event: { id: 'n1', type: 'system', text: 'The user went offline.', name: 'notice' } };
    expect(alignToStored([plain], new Map([[plain.id, storedPlainNamed]]))[0]).toBe(plain);
  });
});

describe('decideAppend: the stored shape of an assistant event sent without text (withTextField)', () => {
  // As a native append may send it: tool calls (or a refusal) only, no `text` key.
  const withoutText = { id: 'c1', type: 'assistant', toolCalls: [{ id: 'k', name: 'f', arguments: '{}' }] } as unknown as SessionEvent;

  it('stores it with text null, as /messages stores the same message', () => {
    const [stored] = decideAppend(append(withoutText), null).events;
    const event = (stored.data as ConversationEventData).event;
    expect(Object.hasOwn(event, 'text')).toBe(true);
    expect(event).toEqual({ id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'k', name: 'f', arguments: '{}' }] });
  });

  it('takes a resend of it for a retry of the event stored without text before that rule, and of one stored with text null', () => {
    const [sent] = decideAppend(append(withoutText), null).events;
    const storedBefore = { ...(sent.data as ConversationEventData), event: withoutText };
    expect(alignToStored([sent], new Map([[sent.id, storedBefore]]))[0].data).toBe(storedBefore);
    const [sentWithNull] = decideAppend(append({ ...withoutText, text: null } as SessionEvent), null).events;
    expect(alignToStored([sentWithNull], new Map([[sentWithNull.id, storedBefore]]))[0].data).toBe(storedBefore);
    // Text is still content: a resend with text is another event.
    const [sentWithText] = decideAppend(append({ ...withoutText, text: 'now with text' } as SessionEvent), null).events;
    expect(alignToStored([sentWithText], new Map([[sentWithText.id, storedBefore]]))[0]).toBe(sentWithText);
  });
});

describe('decideAppend: an answer to a call, by where the call is and whether it is answered (docs/http-api.md "Tool calls")', () => {
  const archive = (...ids: string[]): GivenEvent => ({ type: EVENTS_ARCHIVED, data: { compactionId: 'cmp-1', archivedIds: ids } });
  /** What the handler finds in the log for the append's responses: every call id the session made. */
  const callIdsIn = (events: GivenEvent[]) => events.flatMap((e) => ('toolCalls' in e ? (e.toolCalls ?? []).map((c) => c.id) : []));
  type Expected = 'appended' | 'archived on arrival' | 'tool_call_conflict' | 'unknown_tool_call';
  const cases: Array<[string, GivenEvent[], Expected]> = [
    ['in the window, open', [user('u1'), calls('c1', 'k')], 'appended'],
    ['in the window, answered', [user('u1'), calls('c1', 'k'), answers('t1', 'k')], 'tool_call_conflict'],
    ['abandoned in the window (a user event follows), open', [user('u1'), calls('c1', 'k'), user('u2')], 'appended'],
    ['abandoned in the window, answered since', [user('u1'), calls('c1', 'k'), user('u2'), answers('t1', 'k')], 'tool_call_conflict'],
    ['archived while open (abandoned)', [user('u1'), calls('c1', 'k'), user('u2'), archive('u1', 'c1')], 'archived on arrival'],
    ['archived with its answer', [user('u1'), calls('c1', 'k'), answers('t1', 'k'), user('u2'), archive('u1', 'c1', 't1')], 'tool_call_conflict'],
    [
      'archived while open, answered late',
      [user('u1'), calls('c1', 'k'), user('u2'), archive('u1', 'c1'), answers('t1', 'k'), archive('t1')],
      'tool_call_conflict',
    ],
    ['never made', [user('u1')], 'unknown_tool_call'],
  ];

  it.each(cases)('call %s: %s', (_where, past, expected) => {
    const when = given(...past).when((state) => decideAppend(append(answers('r', 'k')), state, undefined, callIdsIn(past)));
    if (expected === 'tool_call_conflict') return when.thenThrows(ToolCallConflictError, expected);
    if (expected === 'unknown_tool_call') return when.thenThrows(UnknownToolCallError, expected);
    when.then((decision) => {
      expect(appendedIds(decision.events.filter((e) => e.type === CONVERSATION_EVENT))).toEqual(['r']);
      expect(decision.events.some((e) => e.type === EVENTS_ARCHIVED)).toBe(expected === 'archived on arrival');
    });
  });

  it('without the log lookup, an answer to an archived answered call finds no call (the handler then looks the ids up and decides again)', () => {
    given(user('u1'), calls('c1', 'k'), answers('t1', 'k'), user('u2'), archive('u1', 'c1', 't1'))
      .when((state) => decideAppend(append(answers('r', 'k')), state))
      .thenThrows(UnknownToolCallError, 'unknown_tool_call');
  });

  it('a second answer in the same request is a conflict, whether the call is in the request, the window or archived while open', () => {
    for (const [past, request] of [
      [[user('u1')], [calls('c1', 'k'), answers('r1', 'k'), answers('r2', 'k')]],
      [
        [user('u1'), calls('c1', 'k')],
        [answers('r1', 'k'), answers('r2', 'k')],
      ],
      [
        [user('u1'), calls('c1', 'k'), user('u2'), archive('u1', 'c1')],
        [answers('r1', 'k'), answers('r2', 'k')],
      ],
    ] as Array<[GivenEvent[], SessionEvent[]]>) {
      given(...past)
        .when((state) => decideAppend(append(...request), state))
        .thenThrows(ToolCallConflictError, 'tool_call_conflict');
    }
  });
});

describe('decideSetPolicy', () => {
  it('appends one policy event stamped with the context time', () => {
    given(user('u1'))
      .when((state) => decideSetPolicy(policy(20), state, NOW))
      .then((decision) => {
        if (decision.kind !== 'append') throw new Error('expected an append');
        expect(decision.events[0].type).toBe(POLICY_SET);
        expect((decision.events[0].data as PolicySetData).setAt).toBe(NOW.now.toISOString());
      });
  });

  it('creates the session: a policy may be set before the first event', () => {
    given()
      .when((state) => decideSetPolicy(policy(20), state, NOW))
      .then((decision) => expect(decision.kind).toBe('append'));
  });

  it('appends nothing for the policy the session already has, and answers the revision of the event that set it', () => {
    const set = decideSetPolicy(policy(20), null, NOW);
    if (set.kind !== 'append') throw new Error('expected an append');
    given(user('u1'), { type: POLICY_SET, data: set.events[0].data }, user('u2'))
      .when((state) => decideSetPolicy(policy(20), state, { now: new Date('2027-01-01T00:00:00.000Z') }))
      .then((decision) => expect(decision).toMatchObject({ kind: 'unchanged', revision: 1n }));
  });

  it('appends a change, and clearing a policy is a change', () => {
    const set = decideSetPolicy(policy(20), null, NOW);
    if (set.kind !== 'append') throw new Error('expected an append');
    given({ type: POLICY_SET, data: set.events[0].data })
      .when((state) => decideSetPolicy(policy(30), state, NOW))
      .then((decision) => expect(decision.kind).toBe('append'));
    given({ type: POLICY_SET, data: set.events[0].data })
      .when((state) => decideSetPolicy(policy(null), state, NOW))
      .then((decision) => expect(decision.kind).toBe('append'));
  });

  describe('who sent it (requestedBy; newcomer ncui74 F1)', () => {
    const ops = { keyLabel: 'API_KEYS#1', requestId: 'req-ops', requestIdFrom: 'client', via: 'http' } as const;
    const bot = { keyLabel: 'API_KEYS#2', requestId: 'req-bot', requestIdFrom: 'client', via: 'http' } as const;
    const by = (command: SetPolicy, requestedBy?: SetPolicy['requestedBy']): SetPolicy => (requestedBy ? { ...command, requestedBy } : command);
    /** A policy in force, set before these tests' changes (none named who). */
    const inForce: GivenEvent = {
      type: POLICY_SET,
      data: { strategy: parseStrategy({ type: 'sliding-window', maxEvents: 5 }), trigger: null, estimator: 'chars', setAt: 'x' },
    };
    /** The event a change (`maxEvents`; null: a clear) sent by `requestedBy` appends on a session with {@link inForce}. */
    const appended = (maxEvents: number | null, requestedBy?: SetPolicy['requestedBy']) => {
      const decision = decideSetPolicy(by(policy(maxEvents), requestedBy), stateOf([user('u1'), inForce]), NOW);
      if (decision.kind !== 'append') throw new Error('expected an append');
      return decision.events[0];
    };

    it('is recorded in the policy event, set or clear; absent when the command names none; the event id does not derive from it', () => {
      for (const maxEvents of [20, null]) {
        const event = appended(maxEvents, ops);
        expect((event.data as PolicySetData).requestedBy).toEqual(ops);
        expect(appended(maxEvents).data).not.toHaveProperty('requestedBy');
        expect([appended(maxEvents).id, appended(maxEvents, bot).id]).toEqual([event.id, event.id]);
      }
    });

    it('never makes the policy in force look different: sent again by anyone (or by nobody named) it is unchanged, answering the setter', () => {
      for (const maxEvents of [20, null])
        for (const resender of [bot, ops, undefined])
          given(user('u1'), inForce, { type: POLICY_SET, data: appended(maxEvents, ops).data }, user('u2'))
            .when((state) => decideSetPolicy(by(policy(maxEvents), resender), state, NOW))
            .then((decision) => expect(decision).toMatchObject({ kind: 'unchanged', revision: 2n, policy: { requestedBy: ops } }));
    });
  });

  it('derives the event id from the revision decided on: the same change on the same revision is one event, on another revision another', () => {
    const ids = (events: Parameters<typeof given>) =>
      given(...events)
        .when((state) => decideSetPolicy(policy(20), state, NOW))
        .then((decision) => {
          if (decision.kind !== 'append') throw new Error('expected an append');
          seen.push(decision.events[0].id);
        });
    const seen: string[] = [];
    ids([user('u1')]);
    ids([user('u1')]);
    ids([user('u1'), user('u2')]);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[2]).not.toBe(seen[0]);
  });
});
