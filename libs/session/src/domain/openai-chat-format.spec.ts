import * as fs from 'node:fs';
import fc from 'fast-check';
import { NO_TEXT_CONTENT, showsNothing, type SessionEvent } from '@lib/compaction';
import { describeWithShared, TAU_BENCH_FILE } from '../../../../test/support/shared-dir';
import { InvalidRequestError, UnknownToolCallError } from '../errors';
import {
  eventsToOpenAiMessages,
  hasLoneSurrogate,
  NO_TOOL_RESPONSE,
  openAiFieldPath,
  openAiMessagesToEvents,
  validateOpenAiWindow,
  type OpenAiChatMessage,
} from './openai-chat-format';
import { ToolCallLedger } from './tool-call-ledger';

type Msg = Record<string, unknown>;

/** The trajectories of a data file: a JSON array of `{ traj }` records, or of plain message arrays. */
function loadTrajectories(file: string): Msg[][] {
  const data: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!Array.isArray(data)) throw new Error('expected a JSON array');
  if (data.length > 0 && Array.isArray(data[0])) return data as Msg[][];
  if (data.length > 0 && data.every((m) => m && typeof m === 'object' && 'role' in m)) return [data as Msg[]];
  return (data as Array<{ traj?: Msg[]; messages?: Msg[] }>).map((r) => r.traj ?? r.messages ?? []);
}

describeWithShared('OpenAI chat format on the real tau-bench conversations', TAU_BENCH_FILE, () => {
  const trajectories = loadTrajectories(TAU_BENCH_FILE);

  it('holds conversations', () => {
    expect(trajectories.length).toBeGreaterThan(0);
    expect(trajectories.every((t) => t.length > 0)).toBe(true);
  });

  it('parses every trajectory into one event per message, tool names resolved from their calls', () => {
    trajectories.forEach((traj, t) => {
      const events = openAiMessagesToEvents(traj, { idPrefix: `t${t}-` });
      expect(events).toHaveLength(traj.length);
      traj.forEach((m, i) => {
        const e = events[i];
        expect(e.id).toBe(`t${t}-${i}`);
        const expectedType = m.role === 'system' ? 'system' : m.role;
        expect(e.type).toBe(expectedType);
        if (m.role === 'tool' && e.type === 'tool') {
          // the data's own `name` field agrees with the call the parser matched (ids are reused in this data)
          expect(e.responses).toEqual([{ toolCallId: m.tool_call_id, name: m.name, data: m.content }]);
        }
      });
    });
  });

  it('renders every parsed trajectory into a window with zero problems, equal to the input (tool message names included)', () => {
    let messages = 0;
    trajectories.forEach((traj, t) => {
      const rendered = eventsToOpenAiMessages(openAiMessagesToEvents(traj, { idPrefix: `t${t}-` }));
      expect(validateOpenAiWindow(rendered)).toEqual([]);
      expect(rendered).toEqual(traj);
      messages += rendered.length;
    });
    expect(messages).toBeGreaterThan(1000);
  });

  it('parses a trajectory split into two batches, the second resolving tool names from the session’s known calls', () => {
    trajectories.forEach((traj, t) => {
      const cut = Math.floor(traj.length / 2);
      const first = openAiMessagesToEvents(traj.slice(0, cut), { idPrefix: `a${t}-` });
      const known = new Map<string, string>();
      for (const e of first) if (e.type === 'assistant') for (const c of e.toolCalls ?? []) known.set(c.id, c.name);
      const second = openAiMessagesToEvents(traj.slice(cut), { idPrefix: `b${t}-`, knownCallNames: known });
      const whole = openAiMessagesToEvents(traj, { idPrefix: 'x' });
      const strip = (es: SessionEvent[]) => es.map(({ id: _id, ...rest }) => rest);
      expect(strip([...first, ...second])).toEqual(strip(whole));
    });
  });

  it('renders windows cut at every user message (what a compaction keeps) with zero problems', () => {
    for (const traj of trajectories.slice(0, 30)) {
      const events = openAiMessagesToEvents(traj);
      events.forEach((e, i) => {
        if (e.type !== 'user') return;
        const summary: SessionEvent = { id: 's', type: 'summary', shadowPrompt: 'Summarize the conversation so far.', text: `recap before ${i}` };
        const window = [events[0], summary, ...events.slice(i)];
        const rendered = eventsToOpenAiMessages(window);
        expect(validateOpenAiWindow(rendered, { summaries: [summary] })).toEqual([]);
      });
    }
  });
});

describe('openAiMessagesToEvents', () => {
  it('converts each role, using message ids as client ids', () => {
    const events = openAiMessagesToEvents([
      { role: 'system', content: 'be brief', id: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
        id: 'u1',
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }], id: 'a1' },
      { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}', id: 't1' },
      { role: 'assistant', content: 'done', id: 'a2' },
      { role: 'developer', content: 'new rules', id: 'sys2' },
    ]);
    expect(events).toEqual([
      { id: 'sys', type: 'system', text: 'be brief' },
      { id: 'u1', type: 'user', text: 'firstsecond', textParts: ['first', 'second'] },
      { id: 'a1', type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":1}' }] },
      { id: 't1', type: 'tool', responses: [{ toolCallId: 'c1', name: 'lookup', data: '{"ok":true}' }] },
      { id: 'a2', type: 'assistant', text: 'done' },
      { id: 'sys2', type: 'system', text: 'new rules' },
    ]);
  });

  it('assigns ids with assignId, else the prefix, else msg-<index>', () => {
    const msgs = [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b', id: 'mine' },
    ];
    expect(openAiMessagesToEvents(msgs).map((e) => e.id)).toEqual(['msg-0', 'mine']);
    expect(openAiMessagesToEvents(msgs, { idPrefix: 'r7-' }).map((e) => e.id)).toEqual(['r7-0', 'mine']);
    expect(openAiMessagesToEvents(msgs, { assignId: (i) => `id${i * 10}` }).map((e) => e.id)).toEqual(['id0', 'mine']);
  });

  it('resolves a tool name from the latest call with that id (ids reused after an answer)', () => {
    const call = (name: string) => ({ role: 'assistant', content: null, tool_calls: [{ id: 'same', type: 'function', function: { name, arguments: '{}' } }] });
    const events = openAiMessagesToEvents([
      { role: 'user', content: 'go' },
      call('first_tool'),
      { role: 'tool', tool_call_id: 'same', content: '1' },
      call('second_tool'),
      { role: 'tool', tool_call_id: 'same', content: '2' },
    ]);
    expect(events.filter((e) => e.type === 'tool').map((e) => (e.type === 'tool' ? e.responses[0].name : ''))).toEqual(['first_tool', 'second_tool']);
  });

  it('resolves a tool name from knownCallNames when the call is not in the batch', () => {
    const [event] = openAiMessagesToEvents([{ role: 'tool', tool_call_id: 'old', content: 'r' }], { knownCallNames: new Map([['old', 'search']]) });
    expect(event).toEqual({ id: 'msg-0', type: 'tool', responses: [{ toolCallId: 'old', name: 'search', data: 'r' }] });
  });

  it('leaves a tool message whose call it cannot name to the tool-call rules, which refuse it with a 422 naming the field and call id', () => {
    const events = openAiMessagesToEvents([
      { role: 'user', content: 'hi' },
      { role: 'tool', tool_call_id: 'nope', content: 'secret result' },
    ]);
    expect(events[1]).toEqual({ id: 'msg-1', type: 'tool', responses: [{ toolCallId: 'nope', name: '', data: 'secret result' }] });
    const ledger = ToolCallLedger.of([]);
    let error: unknown;
    try {
      events.forEach((e, i) => ledger.accept(e, i));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnknownToolCallError);
    expect((error as UnknownToolCallError).code).toBe('unknown_tool_call');
    // located at the message's native field, which POST …/messages names messages[1].tool_call_id
    expect((error as UnknownToolCallError).location).toEqual({ index: 1, field: 'responses[0].toolCallId' });
    expect(openAiFieldPath('.responses[0].toolCallId')).toBe('.tool_call_id');
    expect((error as Error).message).toContain('nope');
    expect((error as Error).message).not.toContain('secret result');
  });

  const SECRET = 'SECRET-TEXT-42';
  const broken: Array<[string, string, unknown[]]> = [
    ['a non-object message', 'messages[1]', [{ role: 'user', content: 'ok' }, 'hello']],
    ['a missing role', 'messages[0].role', [{ content: SECRET }]],
    ['an unknown role', 'messages[0].role', [{ role: 'robot', content: SECRET }]],
    ['the deprecated function role', 'messages[0].role', [{ role: 'function', name: 'f', content: SECRET }]],
    ['user content null', 'messages[0].content', [{ role: 'user', content: null }]],
    ['user content a number', 'messages[0].content', [{ role: 'user', content: 42 }]],
    ['an image part', 'messages[0].content[0].type', [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }]],
    ['a text part without text', 'messages[0].content[0].text', [{ role: 'user', content: [{ type: 'text' }] }]],
    ['an assistant without content or calls', 'messages[0].content', [{ role: 'assistant', content: null }]],
    ['tool_calls not an array', 'messages[0].tool_calls', [{ role: 'assistant', content: null, tool_calls: { id: 'c' } }]],
    [
      'a call without id',
      'messages[0].tool_calls[0].id',
      [{ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }],
    ],
    [
      'a call of another type',
      'messages[0].tool_calls[0].type',
      [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'custom', function: { name: 'f', arguments: '{}' } }] }],
    ],
    [
      'a call without a name',
      'messages[0].tool_calls[0].function.name',
      [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: '', arguments: '{}' } }] }],
    ],
    [
      'call arguments as an object',
      'messages[0].tool_calls[0].function.arguments',
      [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { a: 1 } } }] }],
    ],
    ['a legacy function_call', 'messages[0].function_call', [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }]],
    ['a tool message without tool_call_id', 'messages[0].tool_call_id', [{ role: 'tool', content: SECRET }]],
    [
      'a tool message without content',
      'messages[1].content',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c' },
      ],
    ],
    ['a lone surrogate in content', 'messages[0].content', [{ role: 'user', content: `${SECRET}\uD800` }]],
    [
      'a lone surrogate in arguments',
      'messages[0].tool_calls[0].function.arguments',
      [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '"\uDC00"' } }] }],
    ],
    ['an empty id', 'messages[0].id', [{ role: 'user', content: SECRET, id: '' }]],
  ];
  it.each(broken)('rejects %s with a 400 naming %s', (_what, parameter, messages) => {
    let error: unknown;
    try {
      openAiMessagesToEvents(messages);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    const err = error as InvalidRequestError;
    expect(err.code).toBe('invalid_message');
    expect(err.parameter).toBe(parameter);
    expect(err.message.startsWith(`${parameter}:`)).toBe(true);
    expect(err.message).not.toContain(SECRET);
  });

  it("tells a refusal content part to go in the message's refusal field, which is kept (newcomer ncapi71 F7); other parts get no such hint", () => {
    const refusalPart = [{ role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }];
    expect(() => openAiMessagesToEvents(refusalPart)).toThrow(
      'messages[0].content[0].type: only text content parts are supported (got "refusal"): send an assistant\'s refusal as the message\'s "refusal" field (its text), which is kept and rendered back',
    );
    const asField = openAiMessagesToEvents([{ role: 'assistant', content: null, refusal: 'I cannot help with that.' }]);
    expect(asField[0]).toMatchObject({ type: 'assistant', refusal: 'I cannot help with that.' });
    expect(() => openAiMessagesToEvents([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }])).toThrow(
      /only text content parts are supported \(got "image_url"\)$/,
    );
  });

  // Some OpenAI-compatible frameworks send `content: []` beside tool_calls: no text, as null says it.
  describe('an assistant message with content [] (no content part)', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
    it.each([
      ['tool_calls', { tool_calls: [call] }, { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] }],
      ['a refusal', { refusal: 'I cannot' }, { refusal: 'I cannot' }],
    ])('beside %s is no text: the event of content null (text null, no textParts)', (_what, rest, fields) => {
      const [event] = openAiMessagesToEvents([{ role: 'assistant', content: [], ...rest }]);
      expect(event).toEqual({ id: 'msg-0', type: 'assistant', text: null, ...fields });
      expect(openAiMessagesToEvents([{ role: 'assistant', content: null, ...rest }])).toEqual([event]);
    });

    it('renders back as content null beside its calls (format=openai), a valid window', () => {
      const events = openAiMessagesToEvents([
        { role: 'user', content: 'find it' },
        { role: 'assistant', content: [], tool_calls: [call] },
        { role: 'tool', tool_call_id: 'c1', content: 'found' },
      ]);
      const window = eventsToOpenAiMessages(events);
      expect(window[1]).toEqual({ role: 'assistant', content: null, tool_calls: [call] });
      expect(validateOpenAiWindow(window)).toEqual([]);
    });

    it('alone is still refused at content, as null and "" are', () => {
      for (const content of [[], null, '']) {
        expect(() => openAiMessagesToEvents([{ role: 'assistant', content }])).toThrow(
          'messages[0].content: an assistant message needs content (a non-empty string or text parts), tool_calls or a refusal',
        );
      }
    });
  });

  it('rejects an id given to two messages with 400 invalid_request, the code the append decider gives native events', () => {
    let error: unknown;
    try {
      openAiMessagesToEvents([
        { role: 'user', content: 'a', id: 'x' },
        { role: 'user', content: SECRET, id: 'x' },
      ]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect({ code: (error as InvalidRequestError).code, parameter: (error as InvalidRequestError).parameter }).toEqual({
      code: 'invalid_request',
      parameter: 'messages[1].id',
    });
    expect((error as Error).message).toBe('messages[1].id: id "x" appears twice in this request: give each message its own id');
  });

  it("counts an id's length in Unicode code points (256 emoji fit, 257 do not)", () => {
    expect(openAiMessagesToEvents([{ role: 'user', content: 'a', id: '😀'.repeat(256) }])[0].id).toBe('😀'.repeat(256));
    expect(() => openAiMessagesToEvents([{ role: 'user', content: 'a', id: '😀'.repeat(257) }])).toThrow(
      'messages[0].id: must be 1 to 256 characters (Unicode code points)',
    );
  });

  it('rejects a non-array', () => {
    expect(() => openAiMessagesToEvents({} as unknown as unknown[])).toThrow(InvalidRequestError);
  });
});

describe('eventsToOpenAiMessages', () => {
  it('moves the pinned system message to the front, drops superseded ones, renders a summary as user + assistant', () => {
    const events: SessionEvent[] = [
      { id: 's-old', type: 'system', text: 'old rules' },
      { id: 'sum', type: 'summary', shadowPrompt: 'What happened so far?', text: 'They booked a flight.' },
      { id: 'u1', type: 'user', text: 'hi' },
      { id: 's-new', type: 'system', text: 'new rules' },
      {
        id: 'a1',
        type: 'assistant',
        text: 'Checking.',
        toolCalls: [
          { id: 'c1', name: 'f', arguments: '{}' },
          { id: 'c2', name: 'g', arguments: '{"x":1}' },
        ],
      },
      {
        id: 't1',
        type: 'tool',
        responses: [
          { toolCallId: 'c1', name: 'f', data: 'r1' },
          { toolCallId: 'c2', name: 'g', data: 'r2' },
        ],
      },
      { id: 'a2', type: 'assistant', text: null, toolCalls: [{ id: 'c3', name: 'h', arguments: '' }] },
      { id: 'u2', type: 'user', text: null },
    ];
    const messages = eventsToOpenAiMessages(events);
    expect(messages).toEqual<OpenAiChatMessage[]>([
      { role: 'system', content: 'new rules' },
      { role: 'user', content: 'What happened so far?' },
      { role: 'assistant', content: 'They booked a flight.' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'r1' },
      { role: 'tool', tool_call_id: 'c2', content: 'r2' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c3', type: 'function', function: { name: 'h', arguments: '' } }] },
      // c3 has no response and the conversation went on: a placeholder keeps the window valid
      { role: 'tool', tool_call_id: 'c3', content: NO_TOOL_RESPONSE },
      { role: 'user', content: '' },
    ]);
    expect(validateOpenAiWindow(messages)).toEqual([]);
  });

  it('puts answers right after their call, pairs reused ids with the latest call, keeps the newest call open', () => {
    const call = (id: string, callId: string): SessionEvent => ({ id, type: 'assistant', text: null, toolCalls: [{ id: callId, name: 'f', arguments: '{}' }] });
    const answer = (id: string, callId: string, data: string): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'f', data }] });
    const events: SessionEvent[] = [
      { id: 'u1', type: 'user', text: 'go' },
      call('c1', 'x'),
      { id: 'a1', type: 'assistant', text: 'while waiting' },
      answer('t1', 'x', 'first'),
      call('c2', 'x'),
      answer('t2', 'x', 'second'),
      { id: 'u2', type: 'user', text: 'more' },
      call('c3', 'y'),
    ];
    const messages = eventsToOpenAiMessages(events);
    expect(messages.map((m) => (m.role === 'tool' ? `tool:${JSON.stringify(m.content)}` : m.role))).toEqual([
      'user',
      'assistant',
      'tool:"first"',
      'assistant',
      'assistant',
      'tool:"second"',
      'user',
      'assistant',
    ]);
    expect(validateOpenAiWindow(messages)).toEqual([]);
    // As stored (answer after the interrupting assistant message), a provider would refuse it.
    const asStored = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'assistant', content: 'while waiting' },
      { role: 'tool', tool_call_id: 'x', content: 'first' },
    ];
    expect(validateOpenAiWindow(asStored).map((p) => p.code)).toEqual(['tool-calls-interrupted', 'tool-answer-after-user']);
  });

  it('gives an assistant stored without text, calls or refusal the placeholder text, never null or empty', () => {
    expect(eventsToOpenAiMessages([{ id: 'a', type: 'assistant', text: null }])).toEqual([{ role: 'assistant', content: NO_TEXT_CONTENT }]);
    expect(eventsToOpenAiMessages([{ id: 'a', type: 'assistant', text: null, toolCalls: [] }])).toEqual([{ role: 'assistant', content: NO_TEXT_CONTENT }]);
  });

  it('renders name, text parts and refusal as they were sent', () => {
    const messages = [
      {
        role: 'system',
        content: [
          { type: 'text', text: 'be ' },
          { type: 'text', text: 'brief' },
        ],
        name: 'ops',
      },
      { role: 'user', content: 'hi', name: 'alice' },
      { role: 'assistant', content: null, refusal: 'no', name: 'bot' },
      { role: 'assistant', content: 'ok', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      {
        role: 'tool',
        tool_call_id: 'c1',
        content: [
          { type: 'text', text: '{"a"' },
          { type: 'text', text: ':1}' },
        ],
        name: 'f',
      },
    ];
    const events = openAiMessagesToEvents(messages);
    expect(events[0]).toEqual({ id: 'msg-0', type: 'system', text: 'be brief', textParts: ['be ', 'brief'], name: 'ops' });
    expect(events[2]).toEqual({ id: 'msg-2', type: 'assistant', text: null, refusal: 'no', name: 'bot' });
    expect(events[4]).toEqual({
      id: 'msg-4',
      type: 'tool',
      name: 'f',
      responses: [{ toolCallId: 'c1', name: 'f', data: '{"a":1}', dataParts: ['{"a"', ':1}'] }],
    });
    expect(eventsToOpenAiMessages(events)).toEqual(messages);
  });

  it('allows createdAt only to a caller that reads it (readsCreatedAt), on every role', () => {
    const at = '2026-01-01T00:00:00Z';
    expect(() => openAiMessagesToEvents([{ role: 'user', content: 'hi', createdAt: at }])).toThrow(/messages\[0\]\.createdAt: unknown field "createdAt"/);
    const messages = [
      { role: 'system', content: 'be brief', createdAt: at },
      { role: 'user', content: 'hi', createdAt: at },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }], createdAt: at },
      { role: 'tool', tool_call_id: 'c', content: 'ok', createdAt: at },
    ];
    const without = messages.map(({ createdAt: _createdAt, ...m }) => m);
    expect(openAiMessagesToEvents(messages, { readsCreatedAt: true })).toEqual(openAiMessagesToEvents(without));
  });

  it('rejects a field it would drop, and names it', () => {
    expect(() => openAiMessagesToEvents([{ role: 'user', content: 'hi', audio: { id: 'x' } }])).toThrow(/messages\[0\]\.audio: unknown field/);
    expect(() => openAiMessagesToEvents([{ role: 'tool', tool_call_id: 'c', content: 'x', refusal: 'no' }])).toThrow(/messages\[0\]\.refusal: unknown field/);
    // inside a tool call and its function too (newcomer: these were dropped with a 201)
    const call = { id: 'c', type: 'function', function: { name: 'n', arguments: '{}' } };
    expect(() => openAiMessagesToEvents([{ role: 'assistant', content: null, tool_calls: [{ ...call, extra: 1 }] }])).toThrow(
      /messages\[0\]\.tool_calls\[0\]\.extra: unknown field "extra": remove it \(the service stores id, type, function\)/,
    );
    expect(() =>
      openAiMessagesToEvents([{ role: 'assistant', content: null, tool_calls: [{ ...call, function: { ...call.function, strict: true } }] }]),
    ).toThrow(/messages\[0\]\.tool_calls\[0\]\.function\.strict: unknown field "strict"/);
    const longKey = 'k'.repeat(6000);
    expect(() => openAiMessagesToEvents([{ role: 'assistant', content: null, tool_calls: [{ ...call, [longKey]: 1 }] }])).toThrow(/\(6000 characters\)/);
    expect(openAiMessagesToEvents([{ role: 'assistant', content: null, tool_calls: [{ ...call, index: null }] }])).toEqual([
      { id: 'msg-0', type: 'assistant', text: null, toolCalls: [{ id: 'c', name: 'n', arguments: '{}' }] },
    ]);
    // null-valued fields count as absent (as providers' own response objects carry them)
    expect(openAiMessagesToEvents([{ role: 'assistant', content: 'hi', refusal: null, audio: null }])).toEqual([
      { id: 'msg-0', type: 'assistant', text: 'hi' },
    ]);
  });

  it('names native fields in OpenAI request terms', () => {
    expect(openAiFieldPath('.responses[0].toolCallId')).toBe('.tool_call_id');
    expect(openAiFieldPath('.responses[0].dataParts[1]')).toBe('.content[1]');
    expect(openAiFieldPath('.toolCalls[2].arguments')).toBe('.tool_calls[2].function.arguments');
    expect(openAiFieldPath('.textParts[0]')).toBe('.content[0]');
    expect(openAiFieldPath('.text')).toBe('.content');
  });

  it('renders nothing for an empty window', () => {
    expect(eventsToOpenAiMessages([])).toEqual([]);
  });
});

describe('a reply appended as the SDK returns it', () => {
  it('takes an empty annotations list (and null fields) as absent, and still refuses annotations that carry something', () => {
    const reply = { role: 'assistant', content: 'Hello!', refusal: null, annotations: [], audio: null };
    expect(openAiMessagesToEvents([{ ...reply, id: 'a1' }])).toEqual([{ id: 'a1', type: 'assistant', text: 'Hello!' }]);
    expect(() => openAiMessagesToEvents([{ ...reply, annotations: [{ type: 'url_citation' }] }])).toThrow(
      /messages\[0\]\.annotations: unknown field "annotations"/,
    );
  });
});

describe('notices (DESIGN §3.1)', () => {
  it('parses a system or developer message named "notice" as a notice (stored as the native route stores one, without the name), and any other as instructions', () => {
    const events = openAiMessagesToEvents([
      { id: 's', role: 'system', content: 'rules' },
      { id: 'n1', role: 'system', name: 'notice', content: 'file arrived' },
      { id: 'n2', role: 'developer', name: 'notice', content: 'reminder' },
      { id: 'd', role: 'developer', name: 'other', content: 'more rules' },
    ]);
    expect(events).toEqual([
      { id: 's', type: 'system', text: 'rules' },
      { id: 'n1', type: 'system', text: 'file arrived', notice: true },
      { id: 'n2', type: 'system', text: 'reminder', notice: true },
      { id: 'd', type: 'system', text: 'more rules', name: 'other' },
    ]);
  });

  it('renders a notice in its place, never as the pinned instructions, and the window stays valid', () => {
    const events: SessionEvent[] = [
      { id: 'u1', type: 'user', text: 'hi' },
      { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'x', name: 'f', arguments: '{}' }] },
      { id: 'n1', type: 'system', text: 'file arrived', notice: true },
      { id: 't1', type: 'tool', responses: [{ toolCallId: 'x', name: 'f', data: 'ok' }] },
      { id: 's1', type: 'system', text: 'rules' },
      { id: 'a1', type: 'assistant', text: 'done' },
    ];
    const messages = eventsToOpenAiMessages(events);
    expect(messages).toEqual([
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'x', content: 'ok' },
      { role: 'system', name: 'notice', content: 'file arrived' },
      { role: 'assistant', content: 'done' },
    ]);
    expect(validateOpenAiWindow(messages)).toEqual([]);
  });

  it('the validator accepts notices anywhere, but not between a call and its answer', () => {
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] };
    expect(
      validateOpenAiWindow([
        { role: 'user', content: 'a' },
        { role: 'system', name: 'notice', content: 'n' },
      ]),
    ).toEqual([]);
    const between = validateOpenAiWindow([
      { role: 'user', content: 'a' },
      call,
      { role: 'system', name: 'notice', content: 'n' },
      { role: 'tool', tool_call_id: 'x', content: 'ok' },
    ]);
    expect(between.map((p) => p.code)).toEqual(['tool-calls-interrupted', 'tool-answer-after-user']);
  });
});

describe('validateOpenAiWindow', () => {
  const call = (...ids: string[]) => ({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
  });
  const answer = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'r' });
  const codes = (messages: unknown[], options?: Parameters<typeof validateOpenAiWindow>[1]) =>
    validateOpenAiWindow(messages, options).map((p) => [p.index, p.code]);

  it('accepts a well-formed window, an open call in the last turn included', () => {
    expect(
      codes([
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        call('c1', 'c2'),
        answer('c2'),
        answer('c1'),
        { role: 'user', content: 'u2' },
        call('c3'),
      ]),
    ).toEqual([]);
  });

  it.each<[string, unknown[], Array<[number, string]>]>([
    [
      'a system message not first',
      [
        { role: 'user', content: 'u' },
        { role: 'system', content: 's' },
      ],
      [[1, 'system-not-first']],
    ],
    [
      'two system messages',
      [
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        { role: 'system', content: 's2' },
      ],
      [[2, 'system-repeated']],
    ],
    ['a tool message without a call', [{ role: 'user', content: 'u' }, answer('ghost')], [[1, 'tool-without-call']]],
    ['a tool message before its call', [{ role: 'user', content: 'u' }, answer('c1'), call('c1'), answer('c1')], [[1, 'tool-without-call']]],
    ['a call answered twice', [{ role: 'user', content: 'u' }, call('c1'), answer('c1'), answer('c1')], [[3, 'tool-without-call']]],
    [
      'an unanswered call in a closed turn',
      [{ role: 'user', content: 'u' }, call('c1', 'c2'), answer('c1'), { role: 'user', content: 'u2' }],
      [[1, 'tool-call-unanswered']],
    ],
    [
      'an answer after the user moved on',
      [{ role: 'user', content: 'u' }, call('c1'), { role: 'user', content: 'u2' }, answer('c1')],
      [
        [1, 'tool-call-unanswered'],
        [3, 'tool-answer-after-user'],
      ],
    ],
    [
      'a pending call id reused by the next message (the first call is interrupted)',
      [{ role: 'user', content: 'u' }, call('c1'), call('c1'), answer('c1')],
      [[1, 'tool-calls-interrupted']],
    ],
    [
      'one call id twice in one message',
      [
        { role: 'user', content: 'u' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'd', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'd', type: 'function', function: { name: 'f', arguments: '{}' } },
          ],
        },
      ],
      [[1, 'duplicate-tool-call-id']],
    ],
    ['a lone high surrogate', [{ role: 'user', content: 'ok \uD83D' }], [[0, 'lone-surrogate']]],
    [
      'a lone low surrogate in arguments',
      [
        { role: 'user', content: 'u' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '\uDE00' } }] },
      ],
      [[1, 'lone-surrogate']],
    ],
    ['an unknown role', [{ role: 'robot', content: 'x' }], [[0, 'invalid-message']]],
    [
      'an assistant with nothing',
      [
        { role: 'user', content: 'u' },
        { role: 'assistant', content: null },
      ],
      [[1, 'invalid-message']],
    ],
    [
      'a tool message without id',
      [
        { role: 'user', content: 'u' },
        { role: 'tool', content: 'r' },
      ],
      [[1, 'invalid-message']],
    ],
    ['a non-object', [null], [[0, 'invalid-message']]],
  ])('catches %s', (_what, messages, expected) => {
    expect(codes(messages)).toEqual(expected);
  });

  it('does not flag a paired surrogate (an emoji)', () => {
    expect(codes([{ role: 'user', content: 'ok 😀' }])).toEqual([]);
  });

  describe('summaries', () => {
    const summary = { shadowPrompt: 'What happened?', text: 'A recap.' };
    it('accepts a user-then-assistant pair', () => {
      expect(
        codes(
          [
            { role: 'system', content: 's' },
            { role: 'user', content: summary.shadowPrompt },
            { role: 'assistant', content: summary.text },
            { role: 'user', content: 'u' },
          ],
          { summaries: [summary] },
        ),
      ).toEqual([]);
    });
    it('catches the pair reversed', () => {
      expect(
        codes(
          [
            { role: 'assistant', content: summary.text },
            { role: 'user', content: summary.shadowPrompt },
            { role: 'user', content: 'u' },
          ],
          { summaries: [summary] },
        ),
      ).toEqual([
        [0, 'summary-out-of-place'],
        [3, 'summary-out-of-place'],
      ]);
    });
    it('catches a summary rendered as a system message', () => {
      expect(
        codes(
          [
            { role: 'system', content: summary.text },
            { role: 'user', content: 'u' },
          ],
          { summaries: [summary] },
        ).map((p) => p[1]),
      ).toEqual(['summary-out-of-place', 'summary-out-of-place']);
    });
    it('catches a missing summary', () => {
      expect(codes([{ role: 'user', content: 'u' }], { summaries: [summary] })).toEqual([[1, 'summary-out-of-place']]);
    });
  });
});

describe('round trip (property)', () => {
  const text = fc.string({ maxLength: 12 });
  // User and system messages need text that shows (content "" or "  " is refused, as the service refuses it).
  const someText = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !showsNothing(s));
  const arbTurn = fc.record({
    user: someText,
    steps: fc.array(
      fc.record({
        say: fc.option(someText, { nil: null }),
        calls: fc.array(fc.record({ name: fc.constantFrom('f', 'g'), args: text, result: text }), { maxLength: 3 }),
      }),
      { maxLength: 3 },
    ),
  });

  it('any well-formed event window renders to a valid window that parses back to the same messages', () => {
    fc.assert(
      fc.property(
        fc.option(someText, { nil: null }),
        fc.option(fc.record({ shadow: someText, recap: text }), { nil: null }),
        fc.array(arbTurn, { maxLength: 5 }),
        (system, summary, turns) => {
          const events: SessionEvent[] = [];
          let n = 0;
          if (system !== null) events.push({ id: `e${n++}`, type: 'system', text: system });
          if (summary) events.push({ id: `e${n++}`, type: 'summary', shadowPrompt: `SHADOW ${summary.shadow}`, text: `RECAP ${summary.recap}` });
          for (const turn of turns) {
            events.push({ id: `e${n++}`, type: 'user', text: turn.user });
            for (const step of turn.steps) {
              const calls = step.calls.map((c) => ({ id: `call${n++}`, name: c.name, arguments: c.args }));
              if (calls.length === 0) {
                events.push({ id: `e${n++}`, type: 'assistant', text: step.say ?? 'ok' });
                continue;
              }
              events.push({ id: `e${n++}`, type: 'assistant', text: step.say, toolCalls: calls });
              events.push({ id: `e${n++}`, type: 'tool', responses: calls.map((c, k) => ({ toolCallId: c.id, name: c.name, data: step.calls[k].result })) });
            }
          }
          const rendered = eventsToOpenAiMessages(events);
          const summaries = summary ? [{ shadowPrompt: `SHADOW ${summary.shadow}`, text: `RECAP ${summary.recap}` }] : [];
          const problems = validateOpenAiWindow(rendered, { summaries });
          expect(problems).toEqual([]);
          expect(eventsToOpenAiMessages(openAiMessagesToEvents(rendered))).toEqual(rendered);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('hasLoneSurrogate', () => {
  /** The definition, one code unit at a time: a high surrogate not followed by a low one, or a low one not after a high one. */
  function unpaired(s: string): boolean {
    for (let i = 0; i < s.length; i++) {
      const unit = s.charCodeAt(i);
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const next = s.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) i++;
        else return true;
      } else if (unit >= 0xdc00 && unit <= 0xdfff) return true;
    }
    return false;
  }

  it('is true exactly when a surrogate is unpaired (property: strings of surrogates, ASCII and ideographs)', () => {
    const unit = fc.oneof(fc.integer({ min: 0xd7ff, max: 0xe000 }), fc.constantFrom(0x41, 0x4e2d)).map((u) => String.fromCharCode(u));
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 12 }), (s) => expect(hasLoneSurrogate(s)).toBe(unpaired(s))),
      { numRuns: 2000 },
    );
    expect(hasLoneSurrogate('ok 😀')).toBe(false);
    expect(hasLoneSurrogate('\ude00\ud83d')).toBe(true);
  });
});
