/**
 * The request rules every transport shares (HTTP `/events` and `/messages`, NATS `append` and
 * `messages`): the functions here are what both the controller and the NATS executor call.
 */
import fc from 'fast-check';
import type { CommandBus } from '@nestjs/cqrs';
import type { EventStore } from '@lib/event-store';
import { keysOf, STRATEGY_ALLOWED_KEYS, TRIGGER_ALLOWED_KEYS } from '@lib/compaction';
import { dateTimeParam, requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from '../nats/nats-command-executor';
import { commandSubject } from '../nats/nats-names';
import { appendEventsCommandFrom, appendMessagesCommandFrom, compactCommandFrom, policyCommandFrom } from './session-command-requests';
import { refusal } from './testing/refusal';

const schemas = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
const user = { id: 'u1', type: 'user', text: 'hi' };

const fromEvents = (body: unknown) => appendEventsCommandFrom(schemas, 't', 's', body, () => 'gen');
const fromMessages = (body: unknown) => appendMessagesCommandFrom(schemas, 't', 's', body, () => 'gen');

/** The NATS executor's answer to an append command with `body` (tenant `t`, session `s`); the command bus must not run (the body is refused before). */
async function natsAppendAnswer(body: unknown) {
  return natsAppendAnswerOf(JSON.stringify(body));
}

/** {@link natsAppendAnswer} of a body sent as this JSON text (numbers JSON.stringify would not write, such as 1e400). */
async function natsAppendAnswerOf(json: string) {
  const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
  const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
  return executor.execute({
    subject: commandSubject('smc', 't', 's', 'append'),
    data: new TextEncoder().encode(json),
    commandId: 'c1',
    redelivered: false,
  });
}

describe('expectedRevision: one spelling per revision', () => {
  const nonCanonical = ['03', '00', '+3', '-0', ' 3', '3 ', '3.0', '3e0', '0x3', '١', '9223372036854775808'];

  it.each(nonCanonical)('refuses %j on /events and /messages with 400 validation_failed saying what to send', (text) => {
    for (const run of [
      () => fromEvents({ events: [user], expectedRevision: text }),
      () => fromMessages({ messages: [{ role: 'user', content: 'hi' }], expectedRevision: text }),
    ]) {
      const err = refusal(run);
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: 'expectedRevision' });
      expect(err.message).toMatch(/^expectedRevision: .*without leading zeros, sign, spaces, fraction or exponent/);
      expect(err.message).toMatch(/"no_stream"/);
    }
  });

  it('accepts "0", the largest revision and every keyword', () => {
    expect(fromEvents({ events: [user], expectedRevision: '0' }).expectedRevision).toBe(0n);
    expect(fromEvents({ events: [user], expectedRevision: 0 }).expectedRevision).toBe(0n);
    expect(fromEvents({ events: [user], expectedRevision: '9223372036854775807' }).expectedRevision).toBe(9223372036854775807n);
    expect(fromMessages({ messages: [{ role: 'user', content: 'hi' }], expectedRevision: '12' }).expectedRevision).toBe(12n);
    for (const keyword of ['any', 'no_stream', 'stream_exists'])
      expect(fromEvents({ events: [user], expectedRevision: keyword }).expectedRevision).toBe(keyword);
    expect(fromEvents({ events: [user] }).expectedRevision).toBe('any');
  });

  it('null is refused (it could mean "no check" or "no stream"), with a message naming what to send instead', () => {
    const err = refusal(() => fromEvents({ events: [user], expectedRevision: null }));
    expect(err.code).toBe('validation_failed');
    expect(err.message).toMatch(/^expectedRevision: is null: leave it out \(or send "any"\).*revision.*"no_stream".*"stream_exists"/);
  });

  it('a JSON number past 2^53 − 1 is refused with a message saying it lost precision and to send a decimal string (HTTP and NATS)', async () => {
    // JSON.parse reads 9007199254740993 as 9007199254740992: the revision the client meant is gone.
    const body = '{"events": [{"id": "u1", "type": "user", "text": "hi"}], "expectedRevision": 9007199254740993}';
    const precision = /^expectedRevision: .*past 9007199254740991 \(2\^53 − 1\), read as \d+: .*lose precision.*send the revision as a decimal string/;
    for (const parsed of [JSON.parse(body), { events: [user], expectedRevision: 2 ** 60 }]) {
      const err = refusal(() => fromEvents(parsed));
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: 'expectedRevision' });
      expect(err.message).toMatch(precision);
    }
    // Any other refused revision: the rule says how far a JSON number goes.
    expect(refusal(() => fromEvents({ events: [user], expectedRevision: -1 })).message).toMatch(
      /from 0 to 9223372036854775807 as a string .*, or as a JSON number up to 9007199254740991 \(2\^53 − 1\)/,
    );
    const err = refusal(() => fromMessages({ messages: [{ role: 'user', content: 'hi' }], expectedRevision: 2 ** 53 }));
    expect(err.message).toMatch(precision);
    const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
    const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
    const answer = await executor.execute({
      subject: commandSubject('smc', 't', 's', 'append'),
      data: new TextEncoder().encode(body),
      commandId: 'c1',
      redelivered: false,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(precision) });
    // The largest safe integer is still a revision; a string carries any revision.
    expect(fromEvents({ events: [user], expectedRevision: Number.MAX_SAFE_INTEGER }).expectedRevision).toBe(9007199254740991n);
    expect(fromEvents({ events: [user], expectedRevision: '9007199254740993' }).expectedRevision).toBe(9007199254740993n);
  });

  // 1e400 (read as Infinity) and 2^64 were told to send the revision as a decimal string: no revision is that large.
  it('a JSON number certainly past 2^63 − 1 is refused as out of range, not told to send a decimal string', () => {
    const outOfRange = /^expectedRevision: is a JSON number past 9223372036854775807 \(2\^63 − 1\), the largest revision: out of range/;
    for (const parsed of [
      JSON.parse('{"events": [{"id": "u1", "type": "user", "text": "hi"}], "expectedRevision": 1e400}'),
      { events: [user], expectedRevision: 2 ** 64 },
    ]) {
      const err = refusal(() => fromEvents(parsed));
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: 'expectedRevision' });
      expect(err.message).toMatch(outOfRange);
      expect(err.message).not.toMatch(/decimal string|Infinity/);
    }
    // 9223372036854775807 itself arrives as 2^63: it may be the largest revision, so the precision message stays.
    expect(
      refusal(() => fromEvents(JSON.parse('{"events": [{"id": "u1", "type": "user", "text": "hi"}], "expectedRevision": 9223372036854775807}'))).message,
    ).toMatch(/lose precision.*decimal string/);
  });

  // newcomer ncgocurl A6: the message quoted 9007199254740993 whatever was sent.
  it('the precision message quotes the number as it was read, not a fixed example, and asks for its digits in quotes', () => {
    const sent = (number: string) =>
      refusal(() => fromEvents(JSON.parse(`{"events": [{"id": "u1", "type": "user", "text": "hi"}], "expectedRevision": ${number}}`))).message;
    expect(sent('9223372036854775807')).toMatch(
      /^expectedRevision: is a JSON number past 9007199254740991 \(2\^53 − 1\), read as 9223372036854775808: .*may not be the number sent; send the revision as a decimal string, your revision's exact digits in quotes \("expectedRevision": "<digits>"/,
    );
    expect(sent('9007199254740993')).toMatch(/read as 9007199254740992: /);
    for (const number of ['9223372036854775807', '9007199254740993']) expect(sent(number)).not.toMatch(/9007199254740993/);
  });

  it('the NATS append command follows the same rule (same function, same 400)', async () => {
    const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
    const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
    const answer = await executor.execute({
      subject: commandSubject('smc', 't', 's', 'append'),
      data: new TextEncoder().encode(JSON.stringify({ events: [user], expectedRevision: '07' })),
      commandId: 'c1',
      redelivered: false,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/^expectedRevision: .*without leading zeros/) });
  });
});

describe('native events: an optional field sent as null counts as absent', () => {
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['user', { id: 'x', type: 'user', text: 'hi' }, ['createdAt', 'metadata', 'name', 'textParts']],
    ['system', { id: 'x', type: 'system', text: 'be brief' }, ['createdAt', 'metadata', 'name', 'textParts', 'notice']],
    ['assistant', { id: 'x', type: 'assistant', text: 'done' }, ['createdAt', 'metadata', 'name', 'textParts', 'toolCalls', 'refusal']],
    ['tool', { id: 'x', type: 'tool', responses: [{ toolCallId: 'k', name: 'f', data: 'ok' }] }, ['createdAt', 'metadata', 'name']],
    ['summary', { id: 'x', type: 'summary', shadowPrompt: 'p', text: 's' }, ['createdAt', 'metadata']],
  ];

  it.each(cases)('%s: each optional field null gives the very command (same bytes) as leaving it out', (_type, event, fields) => {
    const absent = JSON.stringify(fromEvents({ events: [event] }).events);
    for (const field of fields) expect([field, JSON.stringify(fromEvents({ events: [{ ...event, [field]: null }] }).events)]).toEqual([field, absent]);
    // all at once, and an id sent as null gets an assigned one as if left out
    expect(JSON.stringify(fromEvents({ events: [{ ...event, ...Object.fromEntries(fields.map((f) => [f, null])) }] }).events)).toBe(absent);
    const { id: _id, ...withoutId } = event;
    expect(JSON.stringify(fromEvents({ events: [{ ...withoutId, id: null }] }).events)).toBe(JSON.stringify(fromEvents({ events: [withoutId] }).events));
  });

  it('inside a tool response too (dataParts null)', () => {
    const response = { toolCallId: 'k', name: 'f', data: 'ok' };
    const absent = JSON.stringify(fromEvents({ events: [{ id: 'x', type: 'tool', responses: [response] }] }).events);
    expect(JSON.stringify(fromEvents({ events: [{ id: 'x', type: 'tool', responses: [{ ...response, dataParts: null }] }] }).events)).toBe(absent);
  });

  it('an assistant with text null keeps it (null is its "no text"); refusal null is no refusal, so text null alone is still refused', () => {
    const call = { id: 'k', name: 'f', arguments: '{}' };
    const kept = fromEvents({ events: [{ id: 'x', type: 'assistant', text: null, toolCalls: [call], refusal: null }] }).events[0].event;
    expect(kept).toEqual({ id: 'x', type: 'assistant', text: null, toolCalls: [call] });
    expect('refusal' in kept).toBe(false);
    const err = refusal(() => fromEvents({ events: [{ id: 'x', type: 'assistant', text: null, refusal: null }] }));
    expect(err.message).toMatch(/needs text, at least one tool call, or a refusal/);
  });

  it('required fields keep their errors: user text null, tool responses null, an unknown field null', () => {
    expect(refusal(() => fromEvents({ events: [{ id: 'x', type: 'user', text: null }] })).message).toMatch(/^events\[0\]\.text: .*need text/);
    expect(refusal(() => fromEvents({ events: [{ id: 'x', type: 'tool', responses: null }] })).parameter).toBe('events[0].responses');
    expect(refusal(() => fromEvents({ events: [{ id: 'x', type: 'user', text: 'hi', mood: null }] })).message).toMatch(/unknown field "mood"/);
    expect(refusal(() => fromEvents({ events: [{ id: 'x', type: 'summary', shadowPrompt: 'p', text: 's', name: null }] })).message).toMatch(
      /unknown field "name"/,
    );
  });

  it('keeps a metadata "__proto__" key as sent when another field is dropped', () => {
    const body = JSON.parse('{"events":[{"id":"x","type":"user","text":"hi","name":null,"metadata":{"__proto__":{"a":1}}}]}');
    const metadata = fromEvents(body).events[0].metadata!;
    expect(Object.keys(metadata)).toEqual(['__proto__']);
    expect(JSON.stringify(metadata)).toBe('{"__proto__":{"a":1}}');
  });
});

describe('policy: a clear carries no trigger nor estimator; the answer shape is accepted back; null is absent (HTTP and NATS)', () => {
  const trigger = { type: 'turn-count', maxTurns: 3 };

  it('refuses a trigger or an estimator sent with a null strategy, naming it (it was recorded with the trigger)', () => {
    for (const [body, parameter] of [
      [{ strategy: null, trigger, estimator: 'chars' }, 'trigger'],
      [{ strategy: null, trigger }, 'trigger'],
      [{ strategy: null, estimator: 'cl100k_base' }, 'estimator'],
    ] as const) {
      const err = refusal(() => policyCommandFrom(schemas, 't', 's', body));
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'invalid_parameter', parameter });
      expect(err.message).toBe(
        `${parameter}: a policy without a strategy has no ${parameter}: to clear the policy send {"strategy": null} (${parameter} null or left out), or give a strategy to set one`,
      );
    }
  });

  it('says how to clear the policy when the strategy is left out with nothing else amiss ({} included; newcomer ncfresh63 F4)', () => {
    for (const body of [{}, { trigger }, { estimator: 'chars' }, { sessionId: 's', expectedRevision: 'any' }]) {
      const err = refusal(() => policyCommandFrom(schemas, 't', 's', body));
      expect({ parameter: err.parameter, message: err.message }).toEqual({
        parameter: 'strategy',
        message: 'strategy: is required: send a strategy to set the policy, or {"strategy": null} to clear it',
      });
    }
    // a near miss keeps its own hint, without the clearing advice
    expect(refusal(() => policyCommandFrom(schemas, 't', 's', { stratgy: null })).message).toMatch(
      /^strategy: is required \(the body has an unknown field "stratgy"/,
    );
  });

  it('accepts a clear alone or with a null trigger, and a strategy with a trigger and an estimator', () => {
    expect(policyCommandFrom(schemas, 't', 's', { strategy: null })).toMatchObject({ strategy: null, trigger: null });
    expect(policyCommandFrom(schemas, 't', 's', { strategy: null, trigger: null })).toMatchObject({ strategy: null, trigger: null });
    expect(policyCommandFrom(schemas, 't', 's', { strategy: { type: 'sliding-window', maxEvents: 4 }, trigger, estimator: 'chars' })).toMatchObject({
      trigger,
      estimator: 'chars',
    });
  });

  it('reads a null estimator as absent (cl100k_base), as a null trigger (always)', () => {
    const strategy = { type: 'sliding-window', maxEvents: 4 };
    expect(policyCommandFrom(schemas, 't', 's', { strategy, trigger: null, estimator: null })).toMatchObject({ trigger: null, estimator: 'cl100k_base' });
    expect(policyCommandFrom(schemas, 't', 's', { strategy: null, trigger: null, estimator: null })).toMatchObject({ strategy: null, trigger: null });
  });

  it('accepts the answer shape back: its read-only fields are ignored, a sessionId must be the session of the request', () => {
    const answer = {
      sessionId: 's',
      strategy: { type: 'sliding-window', maxEvents: 4 },
      trigger,
      estimator: 'chars',
      setAt: '2026-01-01T00:00:00.000Z',
      revision: '3',
      position: '9',
    };
    const command = policyCommandFrom(schemas, 't', 's', answer);
    expect(command).toEqual(policyCommandFrom(schemas, 't', 's', { strategy: answer.strategy, trigger, estimator: 'chars' }));
    expect(policyCommandFrom(schemas, 't', 's', { sessionId: 's', strategy: null, trigger: null, estimator: null, revision: '0' })).toMatchObject({
      strategy: null,
    });
    const err = refusal(() => policyCommandFrom(schemas, 't', 'other', answer));
    expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'invalid_parameter', parameter: 'sessionId' });
    expect(refusal(() => policyCommandFrom(schemas, 't', 's', { ...answer, revision: '03' })).parameter).toBe('revision');
  });

  it('the NATS policy command follows the same rule (same function, same 400)', async () => {
    const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
    const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
    const answer = await executor.execute({
      subject: commandSubject('smc', 't', 's', 'policy'),
      data: new TextEncoder().encode(JSON.stringify({ strategy: null, trigger })),
      commandId: 'c1',
      redelivered: false,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_parameter', parameter: 'trigger' });
  });
});

describe("compaction without a strategy: by the session's stored policy; trigger and estimator go with the policy (newcomer ncsdkuser F3; HTTP and NATS)", () => {
  const trigger = { type: 'turn-count', maxTurns: 3 };

  it('strategy absent or null (trigger and estimator null or absent): a command by policy, strategy, trigger and estimator null (the handler reads the policy)', () => {
    for (const body of [{}, { strategy: null }, { strategy: null, trigger: null, estimator: null }, { dryRun: null }]) {
      expect(compactCommandFrom(schemas, 't', 's', body)).toMatchObject({ strategy: null, trigger: null, estimator: null, dryRun: false, origin: 'command' });
    }
    expect(compactCommandFrom(schemas, 't', 's', { dryRun: true })).toMatchObject({ strategy: null, dryRun: true });
  });

  it('refuses a trigger or an estimator sent without a strategy, naming it: 400 invalid_parameter (never mixed into the policy)', () => {
    for (const [body, parameter] of [
      [{ trigger }, 'trigger'],
      [{ strategy: null, trigger, estimator: 'chars' }, 'trigger'],
      [{ estimator: 'chars' }, 'estimator'],
      [{ strategy: null, estimator: 'cl100k_base', dryRun: true }, 'estimator'],
    ] as const) {
      const err = refusal(() => compactCommandFrom(schemas, 't', 's', body));
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'invalid_parameter', parameter });
      expect(err.message).toBe(
        `${parameter}: sent without a strategy: a compaction without one uses the session's policy, its strategy, trigger and estimator together; leave ${parameter} out (null) to compact by the policy, or send a strategy with it`,
      );
    }
  });

  it('the NATS compact command follows the same rule (same function, same 400, the bus never runs)', async () => {
    const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
    const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
    const answer = await executor.execute({
      subject: commandSubject('smc', 't', 's', 'compact'),
      data: new TextEncoder().encode(JSON.stringify({ trigger })),
      commandId: 'c1',
      redelivered: false,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_parameter', parameter: 'trigger' });
  });
});

describe("policy: expectedRevision is the precondition, in the append routes' forms (HTTP and NATS)", () => {
  const strategy = { type: 'sliding-window', maxEvents: 4 };

  it('takes a revision as a number or a decimal string, and every keyword; absent is "any"; the read-only revision is no precondition', () => {
    expect(policyCommandFrom(schemas, 't', 's', { strategy, expectedRevision: 7 }).expectedRevision).toBe(7n);
    expect(policyCommandFrom(schemas, 't', 's', { strategy, expectedRevision: '9223372036854775807' }).expectedRevision).toBe(9223372036854775807n);
    for (const keyword of ['any', 'no_stream', 'stream_exists'])
      expect(policyCommandFrom(schemas, 't', 's', { strategy, expectedRevision: keyword }).expectedRevision).toBe(keyword);
    expect(policyCommandFrom(schemas, 't', 's', { strategy, revision: '3' }).expectedRevision).toBe('any');
    expect(policyCommandFrom(schemas, 't', 's', { strategy: null, expectedRevision: '3', revision: '2' }).expectedRevision).toBe(3n);
  });

  it("refuses a malformed revision and null (not read as absent, unlike the other optional policy fields), with the appends' messages", () => {
    for (const bad of ['03', '+3', 'latest', -1, 1.5, 2 ** 60]) {
      const err = refusal(() => policyCommandFrom(schemas, 't', 's', { strategy, expectedRevision: bad }));
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: 'expectedRevision' });
      expect(err.message).toBe(refusal(() => fromEvents({ events: [user], expectedRevision: bad })).message);
    }
    const nul = refusal(() => policyCommandFrom(schemas, 't', 's', { strategy, trigger: null, expectedRevision: null }));
    expect(nul.message).toMatch(/^expectedRevision: is null: leave it out \(or send "any"\)/);
  });

  it('over NATS too: a malformed expectedRevision is 400 before the command runs', async () => {
    const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
    const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
    const answer = await executor.execute({
      subject: commandSubject('smc', 't', 's', 'policy'),
      data: new TextEncoder().encode(JSON.stringify({ strategy, expectedRevision: null })),
      commandId: 'c1',
      redelivered: false,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter: 'expectedRevision' });
  });
});

describe('a body sent to the other append route is told where it goes (HTTP and NATS)', () => {
  const executor = () => {
    const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
    return new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
  };
  const send = (kind: 'append' | 'messages', body: unknown) =>
    executor().execute({
      subject: commandSubject('smc', 't', 's', kind),
      data: new TextEncoder().encode(JSON.stringify(body)),
      commandId: 'c1',
      redelivered: false,
    });
  const toEvents =
    'events: is required: this route takes native session events; OpenAI chat messages ({"messages": […]}) go to POST /v1/sessions/:sessionId/messages (over NATS: the messages command)';
  const toMessages =
    'messages: is required: this route takes OpenAI chat messages; native session events ({"events": […]}) go to POST /v1/sessions/:sessionId/events (over NATS: the append command)';

  it('OpenAI messages sent to /events (NATS append): 400 naming /messages', async () => {
    const err = refusal(() => fromEvents({ messages: [{ role: 'user', content: 'hi' }] }));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'validation_failed', parameter: 'events', message: toEvents });
    const answer = await send('append', { messages: [{ role: 'user', content: 'hi' }], expectedRevision: 'any' });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter: 'events', message: toEvents });
  });

  it('native events sent to /messages (NATS messages): 400 naming /events', async () => {
    const err = refusal(() => fromMessages({ events: [user] }));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({
      code: 'validation_failed',
      parameter: 'messages',
      message: toMessages,
    });
    const answer = await send('messages', { events: [user] });
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter: 'messages', message: toMessages });
  });

  it('other bodies keep their own messages', () => {
    expect(refusal(() => fromEvents({})).message).toBe('events: is required');
    expect(refusal(() => fromEvents({ events: [user], messages: [] })).message).toBe('messages: unknown field "messages": remove it');
    expect(refusal(() => fromMessages({ userId: 'x' })).message).toBe('messages: is required');
  });
});

/** The answer of a NATS command of `kind` with `body` (tenant `t`, session `s`), validated only: its command bus refuses to run anything. */
function natsAnswer(kind: 'append' | 'messages' | 'compact' | 'policy', body: unknown) {
  const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
  const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
  return executor.execute({
    subject: commandSubject('smc', 't', 's', kind),
    data: new TextEncoder().encode(JSON.stringify(body)),
    commandId: 'c1',
    redelivered: false,
  });
}

describe('a misspelled required field is named, with the field it may have meant (HTTP and NATS)', () => {
  const send = natsAnswer;

  it('given {"evnts": […]} on /events (NATS append), when validated, then 400 validation_failed "events: is required" names "evnts" and suggests "events"', async () => {
    const message = 'events: is required (the body has an unknown field "evnts": did you mean "events"?)';
    const err = refusal(() => fromEvents({ evnts: [user] }));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'validation_failed', parameter: 'events', message });
    const answer = await send('append', { evnts: [user] });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter: 'events', message });
  });

  it('given several unknown keys, when validated, then all are named and each near miss of a missing or known field is suggested', () => {
    expect(refusal(() => fromEvents({ evnts: [user], userid: 'u', extra: 1 })).message).toBe(
      'events: is required (the body has unknown fields "evnts", "userid", "extra": did you mean "events" for "evnts", "userId" for "userid"?)',
    );
  });

  it('given an event with "txt" (or no "type" but "typ"), when validated, then the event\'s path names the key and suggests the field', () => {
    expect(refusal(() => fromEvents({ events: [{ id: 'u1', type: 'user', txt: 'hi' }] })).message).toBe(
      'events[0].text: is required (events[0] has an unknown field "txt": did you mean "text"?)',
    );
    expect(refusal(() => fromEvents({ events: [{ id: 'u1', typ: 'user', text: 'hi' }] })).message).toBe(
      'events[0].type: must be one of user, assistant, tool, system, summary (events[0] has an unknown field "typ": did you mean "type"?)',
    );
  });

  it('given {"mesages": […]} on /messages or an OpenAI message without role, when validated, then the key is named (codes unchanged)', async () => {
    const message = 'messages: is required (the body has an unknown field "mesages": did you mean "messages"?)';
    expect(refusal(() => fromMessages({ mesages: [{ role: 'user', content: 'hi' }] })).message).toBe(message);
    expect((await send('messages', { mesages: [{ role: 'user', content: 'hi' }] })).body).toMatchObject({ code: 'validation_failed', message });
    const err = refusal(() => fromMessages({ messages: [{ rol: 'user', content: 'hi' }] }));
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'invalid_message',
      message: 'messages[0].role: must be one of system, developer, user, assistant, tool (messages[0] has an unknown field "rol": did you mean "role"?)',
    });
  });

  it('given {"stratgy": …} on policies (NATS policy), when validated, then "strategy: is required" names it', async () => {
    const message = 'strategy: is required (the body has an unknown field "stratgy": did you mean "strategy"?)';
    const body = { stratgy: { type: 'sliding-window' } };
    const err = refusal(() => policyCommandFrom(schemas, 't', 's', body));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'validation_failed', parameter: 'strategy', message });
    expect((await send('policy', body)).body).toMatchObject({ code: 'validation_failed', message });
  });

  it('given {"stratgy": …} on compactions (NATS compact), where strategy may be left out (the policy), then the unknown field is refused, suggesting "strategy"', async () => {
    // Never a compaction by the policy: the misspelled strategy is refused, nothing is read.
    const message = 'stratgy: unknown field "stratgy": did you mean "strategy"?';
    const body = { stratgy: { type: 'sliding-window' } };
    const err = refusal(() => compactCommandFrom(schemas, 't', 's', body));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'validation_failed', parameter: 'stratgy', message });
    expect((await send('compact', body)).body).toMatchObject({ code: 'validation_failed', message });
  });

  it('given a strategy {"tpye": …}, when validated, then 400 invalid_parameter "strategy.type: is required: …" names it', () => {
    const err = refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { tpye: 'sliding-window' } }));
    expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'invalid_parameter', parameter: 'strategy.type' });
    expect(err.message).toMatch(/^strategy\.type: is required: one of .* \(strategy has an unknown field "tpye": did you mean "type"\?\)$/);
  });

  it('given a missing field and no unknown key, or an unknown key and nothing missing, when validated, then the message is as before', () => {
    expect(refusal(() => fromEvents({ expectedRevision: 'any' })).message).toBe('events: is required');
    expect(refusal(() => fromEvents({ events: [user], evnts: [] })).message).toBe('evnts: unknown field "evnts": remove it');
  });
});

describe('an unknown key that is a near miss of an optional field is suggested, not "remove it" (removing it changes the request; newcomer ncopsalerts M1)', () => {
  const strategy = { type: 'sliding-window', maxEvents: 4 };

  it('given {"dryrun": true} on a compaction, when validated, then it asks "did you mean dryRun?" (removing it would make the dry run write)', () => {
    const err = refusal(() => compactCommandFrom(schemas, 't', 's', { strategy, dryrun: true }));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({
      code: 'validation_failed',
      parameter: 'dryrun',
      message: 'dryrun: unknown field "dryrun": did you mean "dryRun"?',
    });
  });

  it('given "expectedRevison" on an append, or "userid", when validated, then the field each may have meant is suggested', () => {
    expect(refusal(() => fromEvents({ events: [user], expectedRevison: 3 })).message).toBe(
      'expectedRevison: unknown field "expectedRevison": did you mean "expectedRevision"?',
    );
    expect(refusal(() => fromEvents({ events: [user], userid: 'u' })).message).toBe('userid: unknown field "userid": did you mean "userId"?');
  });

  it('given a trigger {"type": "turn-count", "maxTurn": 3}, when validated, then the unknown key\'s error suggests maxTurns', () => {
    for (const run of [
      () => compactCommandFrom(schemas, 't', 's', { strategy, trigger: { type: 'turn-count', maxTurn: 3 } }),
      () => policyCommandFrom(schemas, 't', 's', { strategy, trigger: { type: 'turn-count', maxTurn: 3 } }),
    ]) {
      const err = refusal(run);
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'invalid_parameter', parameter: 'trigger.maxTurn' });
      expect(err.message).toMatch(/\(got an unknown key; did you mean "maxTurns"\?\)$/);
    }
    expect(refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { type: 'sliding-window', maxEvent: 4 } })).message).toMatch(
      /did you mean "maxEvents"\?\)$/,
    );
  });

  it('given an OpenAI message with "nam" (and with "Role" beside "role"), when validated, then "name" is suggested (and "Role" is to remove)', () => {
    expect(refusal(() => fromMessages({ messages: [{ role: 'user', content: 'hi', nam: 'ann' }] })).message).toMatch(
      /^messages\[0\]\.nam: unknown field "nam": did you mean "name"\? \(the service stores /,
    );
    expect(refusal(() => fromMessages({ messages: [{ role: 'user', Role: 'user', content: 'hi' }] })).message).toMatch(
      /^messages\[0\]\.Role: unknown field "Role": remove it \(the service stores /,
    );
  });

  it('given a junk key before the typo in a strategy or a trigger, when validated, then the typo is the key named, with its suggestion (newcomer ncverify46)', () => {
    const err = refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { type: 'sliding-window', junk0: 1, maxEvent: 1 } }));
    expect(err.parameter).toBe('strategy.maxEvent');
    expect(err.message).toMatch(/did you mean "maxEvents"\? strategy has another unknown key: "junk0"\)$/);
    const trigger = refusal(() => compactCommandFrom(schemas, 't', 's', { strategy, trigger: { type: 'turn-count', junk: 1, maxTurn: 3 } }));
    expect(trigger.parameter).toBe('trigger.maxTurn');
    expect(refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { type: 'sliding-window', junk0: 1 } })).parameter).toBe('strategy.junk0');
  });

  it('given "Id" beside "id" in an event, when validated, then "remove it" (a field the object holds is no suggestion)', () => {
    expect(refusal(() => fromEvents({ events: [{ id: 'u1', Id: 'u1', type: 'user', text: 'hi' }] })).message).toBe(
      'events[0].Id: unknown field "Id": remove it',
    );
  });

  // Near misses are looked for among the first MAX_SCANNED_UNKNOWN_KEYS (64) unknown keys only (newcomer ncbounds: many-unknown-keys.spec.ts).
  it('given 20,000 unknown keys with one typo among the first ones, when validated, then the message names five (the typo first) and stays short', () => {
    const body: Record<string, unknown> = { events: [user] };
    for (let i = 0; i < 20_000; i++) {
      if (i === 10) body.userid = 'u';
      body[`junk${i}`] = i;
    }
    const message = refusal(() => fromEvents(body)).message;
    expect(message.length).toBeLessThan(300);
    expect(message).toBe(
      'userid: unknown fields "userid", "junk0", "junk1", "junk2", "junk3" and 19996 more: did you mean "userId" for "userid"? remove the others',
    );
  });
});

describe('a strategy or trigger parameter sent beside them is told where it belongs, not "remove it" (HTTP and NATS)', () => {
  // Removing it, as "remove it" said, ran the compaction with the default (maxTurns 10 for 3).
  const cases: Array<[kind: 'compact' | 'policy', body: Record<string, unknown>, parameter: string, message: string]> = [
    [
      'compact',
      { strategy: { type: 'turn-window' }, maxTurns: 3 },
      'maxTurns',
      'maxTurns: unknown field "maxTurns": it is a parameter of the strategy or the trigger; move it into "strategy" or "trigger" (strategy.maxTurns / trigger.maxTurns)',
    ],
    [
      'policy',
      { strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', maxTurns: 4 }, maxEvents: 5 },
      'maxEvents',
      'maxEvents: unknown field "maxEvents": it is a parameter of the strategy; move it into "strategy" (strategy.maxEvents)',
    ],
    [
      'policy',
      { strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', maxTurns: 4 }, threshold: 1000 },
      'threshold',
      'threshold: unknown field "threshold": it is a parameter of the token-count trigger, not of the turn-count trigger sent: change the type, or remove it',
    ],
    [
      'compact',
      { strategy: { type: 'sliding-window' }, junk: 1, maxEvent: 5, dryrun: true },
      'dryrun',
      'dryrun: unknown fields "dryrun", "junk", "maxEvent": did you mean "dryRun" for "dryrun"? move "maxEvent" into "strategy" (strategy.maxEvents); remove the others',
    ],
  ];

  it.each(cases)('%s %j: 400 validation_failed naming where it belongs, parameter as before', async (kind, body, parameter, message) => {
    const err = refusal(() => (kind === 'compact' ? compactCommandFrom(schemas, 't', 's', body) : policyCommandFrom(schemas, 't', 's', body)));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'validation_failed', parameter, message });
    const answer = await natsAnswer(kind, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter, message });
  });

  it('an unknown key of an append (no strategy there) is still to remove', () => {
    expect(refusal(() => fromEvents({ events: [user], maxTurns: 3 })).message).toBe('maxTurns: unknown field "maxTurns": remove it');
  });
});

describe('a body field sent inside the strategy or trigger is told to move out, not that it "must be absent" (HTTP and NATS)', () => {
  // Before: `invalid strategy.dryRun: must be absent (allowed keys: type, maxTurns)`, read as "dry runs are not allowed here".
  const cases: Array<[kind: 'compact' | 'policy', body: Record<string, unknown>, parameter: string, message: string]> = [
    [
      'compact',
      { strategy: { type: 'turn-window', maxTurns: 3, dryRun: true } },
      'strategy.dryRun',
      'strategy.dryRun: unknown field "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    ],
    [
      'compact',
      { strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', maxTurns: 2, estimator: 'chars' } },
      'trigger.estimator',
      'trigger.estimator: unknown field "estimator": it is a field of the request body, not of the trigger; move it out of "trigger", beside it in the body',
    ],
    [
      'compact',
      { strategy: { type: 'sliding-window', trigger: { type: 'turn-count', maxTurns: 2 } } },
      'strategy.trigger',
      'strategy.trigger: unknown field "trigger": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    ],
    [
      'compact',
      { strategy: { type: 'sliding-window', dryRun: true }, dryRun: false },
      'strategy.dryRun',
      'strategy.dryRun: unknown field "dryRun": it is a field of the request body, not of the strategy; the body has its own: remove it from "strategy"',
    ],
    [
      'policy',
      { strategy: { type: 'sliding-window', expectedRevision: 'no_stream' } },
      'strategy.expectedRevision',
      'strategy.expectedRevision: unknown field "expectedRevision": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    ],
    // a near miss of a body field (newcomer ncverify48 F5)
    [
      'compact',
      { strategy: { type: 'turn-window', maxTurns: 3, dryrun: true } },
      'strategy.dryrun',
      'strategy.dryrun: unknown field "dryrun": did you mean "dryRun"? it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body (as "dryRun")',
    ],
    [
      'compact',
      { strategy: { type: 'turn-window', dryrun: true }, dryRun: false },
      'strategy.dryrun',
      'strategy.dryrun: unknown field "dryrun": did you mean "dryRun"? it is a field of the request body, not of the strategy; the body has its own: remove it from "strategy"',
    ],
    // after another unknown key: the body field is the one named
    [
      'compact',
      { strategy: { type: 'turn-window', maxTurns: 3, foo: 1, dryRun: true } },
      'strategy.dryRun',
      'strategy.dryRun: unknown field "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    ],
    // inside a composite trigger's member, at any depth
    [
      'compact',
      { strategy: { type: 'turn-window' }, trigger: { type: 'any-of', triggers: [{ type: 'turn-count', maxTurns: 2, dryRun: true }] } },
      'trigger.triggers[0].dryRun',
      'trigger.triggers[0].dryRun: unknown field "dryRun": it is a field of the request body, not of the trigger; move it out of "trigger", beside it in the body',
    ],
    [
      'policy',
      {
        strategy: { type: 'turn-window' },
        trigger: {
          type: 'all-of',
          triggers: [
            { type: 'token-count', threshold: 9 },
            { type: 'any-of', triggers: [{ type: 'turn-count', maxTurns: 2, estimatr: 'chars' }] },
          ],
        },
      },
      'trigger.triggers[1].triggers[0].estimatr',
      'trigger.triggers[1].triggers[0].estimatr: unknown field "estimatr": did you mean "estimator"? it is a field of the request body, not of the trigger; move it out of "trigger", beside it in the body (as "estimator")',
    ],
  ];

  it.each(cases)('%s %j: 400 invalid_parameter naming the field inside, saying where it belongs', async (kind, body, parameter, message) => {
    const err = refusal(() => (kind === 'compact' ? compactCommandFrom(schemas, 't', 's', body) : policyCommandFrom(schemas, 't', 's', body)));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'invalid_parameter', parameter, message });
    const answer = await natsAnswer(kind, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_parameter', parameter, message });
  });

  it.each([
    // not a body field: the parser's own message, with the keys the type takes
    [
      { strategy: { type: 'turn-window', junk: 1 } },
      'strategy.junk',
      'invalid strategy.junk: must be absent (allowed keys: type, maxTurns) (got an unknown key)',
    ],
    // a body field of the policy, not of a compaction
    [
      { strategy: { type: 'turn-window', expectedRevision: 3 } },
      'strategy.expectedRevision',
      'invalid strategy.expectedRevision: must be absent (allowed keys: type, maxTurns) (got an unknown key)',
    ],
    // a composite trigger's member: its own path, the parser's message
    [
      { strategy: { type: 'turn-window' }, trigger: { type: 'any-of', triggers: [{ type: 'turn-count', maxTurns: 2, junk: true }] } },
      'trigger.triggers[0].junk',
      'invalid trigger.triggers[0].junk: must be absent (allowed keys: type, maxTurns) (got an unknown key)',
    ],
    // a near miss of the type's own parameter is the parser's question, not a body field
    [
      { strategy: { type: 'turn-window', maxturns: 3 } },
      'strategy.maxturns',
      'invalid strategy.maxturns: must be absent (allowed keys: type, maxTurns) (got an unknown key; did you mean "maxTurns"?)',
    ],
  ])("compact %j: other unknown keys keep the parser's message", (body, parameter, message) => {
    const err = refusal(() => compactCommandFrom(schemas, 't', 's', body));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'invalid_parameter', parameter, message });
  });
});

describe("dryRun sent in a policy's strategy or trigger is told that a policy has no dry run (HTTP and NATS; newcomer ncverify50 F2)", () => {
  // Before: `invalid strategy.dryRun: must be absent (allowed keys: type, maxTurns) (got an unknown key)`, as for any unknown key.
  const advice =
    'a policy has no dry run: "dryRun" is a field of a compaction request only (POST /v1/sessions/{sessionId}/compactions, NATS compact); remove it (to see what a pass would do without writing it, send "dryRun": true to POST …/compactions with this strategy and trigger, or with neither once the policy is set)';
  const cases: Array<[body: Record<string, unknown>, parameter: string, message: string]> = [
    [{ strategy: { type: 'turn-window', maxTurns: 3, dryRun: true } }, 'strategy.dryRun', `strategy.dryRun: unknown field "dryRun": ${advice}`],
    [{ strategy: { type: 'turn-window', dryrun: true } }, 'strategy.dryrun', `strategy.dryrun: unknown field "dryrun": did you mean "dryRun"? ${advice}`],
    [
      { strategy: { type: 'turn-window' }, trigger: { type: 'any-of', triggers: [{ type: 'turn-count', maxTurns: 2, dryRun: false }] } },
      'trigger.triggers[0].dryRun',
      `trigger.triggers[0].dryRun: unknown field "dryRun": ${advice}`,
    ],
    [
      { strategy: { dryRun: true } },
      'strategy.type',
      `strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has an unknown field "dryRun"); "dryRun": ${advice}`,
    ],
  ];

  it.each(cases)('policy %j: 400 invalid_parameter saying dryRun belongs to a compaction only', async (body, parameter, message) => {
    const err = refusal(() => policyCommandFrom(schemas, 't', 's', body));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'invalid_parameter', parameter, message });
    const answer = await natsAnswer('policy', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_parameter', parameter, message });
  });

  // Before: `dryRun: unknown field "dryRun": remove it`, the generic answer, while inside the strategy it got the advice above.
  const topLevel: Array<[body: Record<string, unknown>, parameter: string, message: string]> = [
    [{ strategy: { type: 'turn-window', maxTurns: 3 }, dryRun: true }, 'dryRun', `dryRun: unknown field "dryRun": ${advice}`],
    [{ strategy: null, dryRun: false }, 'dryRun', `dryRun: unknown field "dryRun": ${advice}`],
    [{ strategy: { type: 'turn-window' }, dryRun: null }, 'dryRun', `dryRun: unknown field "dryRun": ${advice}`],
    [{ strategy: { type: 'turn-window' }, dryrun: true }, 'dryrun', `dryrun: unknown field "dryrun": did you mean "dryRun"? ${advice}`],
    // with other unknown keys: their message, then the advice
    [{ strategy: { type: 'turn-window' }, junk: 1, dryRun: true }, 'junk', `junk: unknown fields "junk", "dryRun": remove them; "dryRun": ${advice}`],
    [
      { strategy: { type: 'turn-window' }, dryRun: true, maxTurns: 3 },
      'dryRun',
      `dryRun: unknown fields "dryRun", "maxTurns": move "maxTurns" into "strategy" or "trigger" (strategy.maxTurns / trigger.maxTurns); remove the others; "dryRun": ${advice}`,
    ],
    // a near miss of the body's own field is still asked about that field
    [
      { strategy: { type: 'turn-window' }, estimatr: 'chars', dryRun: true },
      'estimatr',
      `estimatr: unknown fields "estimatr", "dryRun": did you mean "estimator" for "estimatr"? remove the others; "dryRun": ${advice}`,
    ],
    // beside a missing strategy: the missing field first, then the advice
    [{ dryRun: true }, 'strategy', `strategy: is required (the body has an unknown field "dryRun"); "dryRun": ${advice}`],
  ];

  it.each(topLevel)('policy %j (dryRun beside the strategy): 400 validation_failed as before, with the same advice', async (body, parameter, message) => {
    const err = refusal(() => policyCommandFrom(schemas, 't', 's', body));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'validation_failed', parameter, message });
    const answer = await natsAnswer('policy', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter, message });
  });

  it("a compaction's top-level dryRun is its own field; another request's unknown field keeps the generic answer", () => {
    expect(compactCommandFrom(schemas, 't', 's', { strategy: { type: 'turn-window' }, dryRun: true })).toMatchObject({ dryRun: true });
    expect(refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { type: 'turn-window' }, junk: true })).message).toBe(
      'junk: unknown field "junk": remove it',
    );
    expect(refusal(() => fromEvents({ events: [user], dryRun: true })).message).toBe('dryRun: unknown field "dryRun": remove it');
  });

  it("a compaction's dryRun in its strategy is still told to move beside it", () => {
    expect(refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { type: 'turn-window', dryRun: true } })).message).toBe(
      'strategy.dryRun: unknown field "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    );
  });
});

describe('a parameter of another strategy or trigger type, or a body field in a strategy or trigger without a type, is told where it belongs (HTTP and NATS)', () => {
  // Before: `invalid trigger.threshold: must be absent (allowed keys: type, maxTurns) (got an unknown key)`, and for a
  // type-less `{"strategy": {"dryRun": true}}` only `strategy.type: is required: …` (newcomer confighints F1).
  const cases: Array<[kind: 'compact' | 'policy', body: Record<string, unknown>, parameter: string, message: string]> = [
    // a parameter of another type of the same object: change the type, or use the sent type's own
    [
      'compact',
      { strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', threshold: 5 } },
      'trigger.threshold',
      'trigger.threshold: unknown field "threshold": it is a parameter of the token-count trigger, not of the turn-count trigger sent; change "type" to "token-count", or use what the turn-count trigger takes: "maxTurns"',
    ],
    [
      'policy',
      { strategy: { type: 'sliding-window' }, trigger: { type: 'token-count', maxTurns: 5 } },
      'trigger.maxTurns',
      'trigger.maxTurns: unknown field "maxTurns": it is a parameter of the turn-count trigger, not of the token-count trigger sent; change "type" to "turn-count", or use what the token-count trigger takes: "threshold"',
    ],
    [
      'compact',
      { strategy: { type: 'sliding-window', maxTurns: 3 } },
      'strategy.maxTurns',
      'strategy.maxTurns: unknown field "maxTurns": it is a parameter of the turn-window strategy, not of the sliding-window strategy sent; change "type" to "turn-window", or use what the sliding-window strategy takes: "maxEvents"',
    ],
    [
      'compact',
      { strategy: { type: 'recursive-summarization', keepTurns: 2 } },
      'strategy.keepTurns',
      'strategy.keepTurns: unknown field "keepTurns": it is a parameter of the rolling-summary strategy, not of the recursive-summarization strategy sent; change "type" to "rolling-summary", or use what the recursive-summarization strategy takes: "maxEventsToKeep", "overlapSize", "shadowPrompt" or "systemPrompt"',
    ],
    [
      'compact',
      { strategy: { type: 'sliding-window', shadowPrompt: 'x' } },
      'strategy.shadowPrompt',
      'strategy.shadowPrompt: unknown field "shadowPrompt": it is a parameter of the recursive-summarization or rolling-summary strategy, not of the sliding-window strategy sent; change "type" to "recursive-summarization" or "rolling-summary", or use what the sliding-window strategy takes: "maxEvents"',
    ],
    // a near miss of one
    [
      'compact',
      { strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', treshold: 5 } },
      'trigger.treshold',
      'trigger.treshold: unknown field "treshold": did you mean "threshold"? it is a parameter of the token-count trigger, not of the turn-count trigger sent; change "type" to "token-count", or use what the turn-count trigger takes: "maxTurns"',
    ],
    // a composite trigger: its members take the parameters
    [
      'compact',
      { strategy: { type: 'sliding-window' }, trigger: { type: 'any-of', threshold: 5, triggers: [{ type: 'turn-count', maxTurns: 1 }] } },
      'trigger.threshold',
      'trigger.threshold: unknown field "threshold": it is a parameter of the token-count trigger, not of the any-of trigger sent; change "type" to "token-count", or move it into a member of its "triggers"',
    ],
    [
      'compact',
      { strategy: { type: 'turn-window' }, trigger: { type: 'any-of', triggers: [{ type: 'turn-count', maxTurns: 2, threshold: 3 }] } },
      'trigger.triggers[0].threshold',
      'trigger.triggers[0].threshold: unknown field "threshold": it is a parameter of the token-count trigger, not of the turn-count trigger sent; change "type" to "token-count", or use what the turn-count trigger takes: "maxTurns"',
    ],
    // a parameter of the other object: move it there, when the type sent there takes it
    [
      'compact',
      { strategy: { type: 'token-count', threshold: 3 } },
      'strategy.threshold',
      'strategy.threshold: unknown field "threshold": it is a parameter of the token-count trigger, not of a strategy; move it into "trigger" (trigger.threshold)',
    ],
    [
      'policy',
      { strategy: { type: 'token-count', threshold: 3 }, trigger: { type: 'turn-count', maxTurns: 3 } },
      'strategy.threshold',
      'strategy.threshold: unknown field "threshold": it is a parameter of the token-count trigger, not of a strategy, nor of the turn-count trigger sent: change the trigger\'s type, or remove it',
    ],
    [
      'compact',
      { strategy: { type: 'token-count' }, trigger: { type: 'token-count', threshold: 3, maxTokens: 5 } },
      'trigger.maxTokens',
      'trigger.maxTokens: unknown field "maxTokens": it is a parameter of the token-count strategy, not of a trigger; move it into "strategy" (strategy.maxTokens)',
    ],
    // a body field in a strategy or trigger without a type: the type is still what is named, and the field told to move out
    [
      'compact',
      { strategy: { dryRun: true } },
      'strategy.type',
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has an unknown field "dryRun"); "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    ],
    [
      'compact',
      { strategy: { dryrun: true }, dryRun: false },
      'strategy.type',
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has an unknown field "dryrun"); "dryrun": did you mean "dryRun"? it is a field of the request body, not of the strategy; the body has its own: remove it from "strategy"',
    ],
    [
      'compact',
      { strategy: { tpye: 'turn-window', dryRun: true } },
      'strategy.type',
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has unknown fields "tpye", "dryRun": did you mean "type" for "tpye"?); "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    ],
    [
      'policy',
      { strategy: { type: 'turn-window' }, trigger: { expectedRevision: 'no_stream', maxTurns: 2 } },
      'trigger.type',
      'trigger.type: is required: one of turn-count, token-count, any-of, all-of (trigger has an unknown field "expectedRevision"); "expectedRevision": it is a field of the request body, not of the trigger; move it out of "trigger", beside it in the body',
    ],
    [
      'compact',
      { strategy: { type: 'turn-window' }, trigger: { type: 'any-of', triggers: [{ estimator: 'chars', maxTurns: 2 }] } },
      'trigger.triggers[0].type',
      'trigger.triggers[0].type: is required: one of turn-count, token-count, any-of, all-of (trigger.triggers[0] has an unknown field "estimator"); "estimator": it is a field of the request body, not of the trigger; move it out of "trigger", beside it in the body',
    ],
    // and a parameter of the other object in one
    [
      'compact',
      { strategy: { threshold: 100 } },
      'strategy.type',
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has an unknown field "threshold"); "threshold": it is a parameter of the token-count trigger, not of a strategy; move it into "trigger" (trigger.threshold)',
    ],
  ];

  it.each(cases)('%s %j: 400 invalid_parameter saying where it belongs', async (kind, body, parameter, message) => {
    const err = refusal(() => (kind === 'compact' ? compactCommandFrom(schemas, 't', 's', body) : policyCommandFrom(schemas, 't', 's', body)));
    expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({ code: 'invalid_parameter', parameter, message });
    const answer = await natsAnswer(kind, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_parameter', parameter, message });
  });

  it('every parameter of every type, sent in a strategy or trigger of another type that refuses it, is told where it belongs (never "must be absent")', () => {
    const strategies = Object.entries(STRATEGY_ALLOWED_KEYS);
    const triggers = Object.entries(TRIGGER_ALLOWED_KEYS);
    for (const [holder, table] of [
      ['strategy', strategies],
      ['trigger', triggers],
    ] as const)
      for (const [sent, keys] of table)
        for (const key of [...keysOf('strategy'), ...keysOf('trigger')].filter((k) => !keys.includes(k))) {
          const object = { type: sent, [key]: 1 };
          const body = holder === 'strategy' ? { strategy: object } : { strategy: { type: 'sliding-window' }, trigger: object };
          const err = refusal(() => compactCommandFrom(schemas, 't', 's', body));
          expect({ body, parameter: err.parameter }).toEqual({ body, parameter: `${holder}.${key}` });
          expect(err.message).toMatch(new RegExp(`^${holder}\\.${key}: unknown field "${key}": it is a parameter of the `));
        }
  });

  it("a key belonging nowhere keeps the parser's message, typed or not", () => {
    expect(refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { maxEvents: 3, junk: 1 } })).message).toBe(
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has an unknown field "junk")',
    );
    expect(refusal(() => compactCommandFrom(schemas, 't', 's', { strategy: { type: 'turn-window', junk: 1 } })).message).toBe(
      'invalid strategy.junk: must be absent (allowed keys: type, maxTurns) (got an unknown key)',
    );
  });
});

describe('trigger parameters are positive, as strategy parameters are (HTTP and NATS)', () => {
  const strategy = { type: 'sliding-window', maxEvents: 4 };

  it.each([
    [{ type: 'token-count', threshold: 0 }, 'trigger.threshold'],
    [{ type: 'turn-count', maxTurns: 0 }, 'trigger.maxTurns'],
    [{ type: 'all-of', triggers: [{ type: 'token-count', threshold: 0 }] }, 'trigger.triggers[0].threshold'],
  ])('refuses %j with 400 invalid_parameter naming %s, on compactions and policies', (trigger, parameter) => {
    for (const run of [() => compactCommandFrom(schemas, 't', 's', { strategy, trigger }), () => policyCommandFrom(schemas, 't', 's', { strategy, trigger })]) {
      const err = refusal(run);
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'invalid_parameter', parameter });
      expect(err.message).toBe(`invalid ${parameter}: must be an integer from 1 to 1000000000 (got 0)`);
    }
  });
});

describe('a left-out required strategy or trigger field says it is required (HTTP and NATS)', () => {
  it.each([
    [{ strategy: {} }, 'strategy.type', 'one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary'],
    [{ strategy: { type: 'sliding-window' }, trigger: { type: 'any-of' } }, 'trigger.triggers', 'a non-empty array of at most 32 triggers'],
    [{ strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count' } }, 'trigger.maxTurns', 'an integer from 1 to 1000000000'],
  ])('%j: 400 invalid_parameter "%s: is required: …", on compactions and policies', (body, parameter, allowed) => {
    for (const run of [() => compactCommandFrom(schemas, 't', 's', body), () => policyCommandFrom(schemas, 't', 's', body)]) {
      const err = refusal(run);
      expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({
        code: 'invalid_parameter',
        parameter,
        message: `${parameter}: is required: ${allowed}`,
      });
    }
  });
});

describe('client times: years 0001 to 9999 once in UTC, as the read models keep them (HTTP and NATS)', () => {
  const at = (createdAt: string) => ({ events: [{ ...user, createdAt }] });
  const range = 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z once in UTC (years 0001 to 9999, as times are kept and answered in UTC)';

  it.each(['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '0000-12-31T23:59:59.999Z', '9999-12-31T23:30:00-01:00'])(
    'refuses createdAt %s (year 0000 or past 9999 in UTC) with 400 validation_failed saying the range',
    async (createdAt) => {
      const err = refusal(() => fromEvents(at(createdAt)));
      expect({ code: err.code, parameter: err.parameter, message: err.message }).toEqual({
        code: 'validation_failed',
        parameter: 'events[0].createdAt',
        message: `events[0].createdAt: ${range}`,
      });
      const answer = await natsAppendAnswer(at(createdAt));
      expect(answer.body).toMatchObject({ code: 'validation_failed', parameter: 'events[0].createdAt', message: `events[0].createdAt: ${range}` });
    },
  );

  it.each(['0001-01-01T00:00:00Z', '0001-01-01T01:00:00+01:00', '9999-12-31T23:59:59.999Z', '9999-12-31T22:59:59-01:00', '2026-01-31T12:00:00Z'])(
    'accepts createdAt %s',
    (createdAt) => {
      expect(fromEvents(at(createdAt)).events[0].createdAt).toBe(createdAt);
    },
  );

  it('still says what the form is for a time that is not ISO-8601; a year past 9999 (expanded years too) gets the range, as year 0000 does', () => {
    expect(refusal(() => fromEvents(at('yesterday'))).message).toBe('events[0].createdAt: must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z');
    for (const createdAt of ['10000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', '-000001-01-01T00:00:00Z']) {
      expect(refusal(() => fromEvents(at(createdAt))).message).toBe(`events[0].createdAt: ${range}`);
    }
  });

  it('refuses a date-time past 100 characters by its length, the text neither read nor quoted (newcomer ncfresh70 N2: 2 MB of fraction digits was kept)', async () => {
    const tooLong = `2026-01-31T12:00:00.${'1'.repeat(2_000_000)}Z`;
    const message = 'events[0].createdAt: must be an ISO-8601 date-time of at most 100 characters (Unicode code points), not 2000021';
    for (const createdAt of [tooLong, tooLong.replace('T', ' '), `2026-01-31T12:00:00.${'9'.repeat(80)}Z`]) {
      const err = refusal(() => fromEvents(at(createdAt)));
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: 'events[0].createdAt' });
      expect(err.message).toContain(message.replace('2000021', String(createdAt.length)));
      expect(err.message.length).toBeLessThan(300);
    }
    expect((await natsAppendAnswer(at(tooLong.slice(0, 521) + 'Z'))).body).toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining(message.replace('2000021', '522')),
    });
    const longest = `2026-01-31T12:00:00.${'1'.repeat(74)}+01:00`;
    expect(longest).toHaveLength(100);
    expect(fromEvents(at(longest)).events[0].createdAt).toBe(longest);
    const asQuery = dateTimeParam().safeParse(tooLong);
    expect(asQuery.error?.issues.map((issue) => issue.message)).toEqual([
      expect.stringMatching(/^must be an ISO-8601 date-time of at most 100 characters \(Unicode code points\), not 2000021 /),
    ]);
  });

  it("counts a date-time's length in characters (Unicode code points), as every length limit: 51 emoji are refused by their form, 101 by their length (newcomer ncverify71 F7)", () => {
    const formMessage = 'events[0].createdAt: must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z';
    expect(refusal(() => fromEvents(at('😀'.repeat(51)))).message).toBe(formMessage);
    expect(refusal(() => fromEvents(at('2026-01-31T12:00:00Z' + '😀'.repeat(80)))).message).toBe(formMessage);
    expect(refusal(() => fromEvents(at('😀'.repeat(101)))).message).toContain(
      'must be an ISO-8601 date-time of at most 100 characters (Unicode code points), not 101 ',
    );
  });

  it('refuses a policy setAt out of the range too (read-only, but one rule for every time)', () => {
    const err = refusal(() => policyCommandFrom(schemas, 't', 's', { strategy: null, setAt: '0000-06-01T00:00:00Z' }));
    expect({ parameter: err.parameter, message: err.message }).toEqual({ parameter: 'setAt', message: `setAt: ${range}` });
  });
});

describe('time errors say what to fix, on every route that reads a time (newcomer nctime, F7)', () => {
  const at = (createdAt: string) => ({ events: [{ ...user, createdAt }] });
  /** The example a message gives, `(e.g. <time>)` at its end. */
  const example = (message: string): string | undefined => /\(e\.g\. ([^ ()]+)\)$/.exec(message)?.[1];

  it.each([
    ['2026-01-01T00:00:00', /add its zone: "Z" when it is UTC, else its offset/],
    ['2016-12-31T23:59:60Z', /second 60 \(a leap second\)/],
    ['2026-01-01t00:00:00z', /"T" .* and the "Z" of UTC in upper case/],
    ['2026-01-01t00:00:00', /upper case; add its zone/],
    ['2026-01-01 00:00:00Z', /write a "T" between date and time, not a space/],
    ['2026-01-01T00:00Z', /add the seconds \(hh:mm:ss\)/],
    ['2026-01-01T00:00:00+0530', /write the offset with a colon \(\+05:30, as ±hh:mm\)/],
    ['2026-01-01 12:30+0530', /not a space; add the seconds .*; write the offset with a colon/],
    ['1767225600000', /not a number: a number of milliseconds since 1970/],
  ])('createdAt %s: 400 validation_failed naming the fix, whose example is accepted (HTTP, NATS, policy setAt)', async (createdAt, fix) => {
    const err = refusal(() => fromEvents(at(createdAt)));
    expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: 'events[0].createdAt' });
    expect(err.message).toMatch(fix);
    const fixed = example(err.message);
    expect(fixed).toBeDefined();
    expect(fromEvents(at(fixed!)).events[0].createdAt).toBe(fixed);
    const answer = await natsAppendAnswer(at(createdAt));
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter: 'events[0].createdAt', message: err.message });
    expect(refusal(() => policyCommandFrom(schemas, 't', 's', { strategy: null, setAt: createdAt })).message).toMatch(fix);
  });

  it('createdAt as a JSON number (Unix milliseconds): 400 naming the fix, the same instant as text as the example, which is accepted', () => {
    const millis = 1767225600000;
    const err = refusal(() => fromEvents({ events: [{ ...user, createdAt: millis }] }));
    expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: 'events[0].createdAt' });
    expect(err.message).toMatch(/not a number: a number of milliseconds since 1970/);
    expect(Date.parse(example(err.message)!)).toBe(millis);
    expect(fromEvents(at(example(err.message)!)).events[0].createdAt).toBe(example(err.message));
  });

  it('year 10000 gets the range message year 0000 gets', () => {
    const year0 = refusal(() => fromEvents(at('0000-01-01T00:00:00Z'))).message;
    expect(refusal(() => fromEvents(at('10000-01-01T00:00:00Z'))).message).toBe(year0);
  });
});

describe('/messages: a message may carry createdAt, as a native event does (newcomer nctime, F5)', () => {
  const message = (createdAt: unknown) => ({ messages: [{ role: 'user', content: 'hi', id: 'm1', createdAt }] });

  it.each(['2026-01-01T00:00:00Z', '2026-01-01T05:30:00+05:30', '0001-01-01T00:00:00Z'])(
    'gives createdAt %s to the event, as /events gives the same event',
    (createdAt) => {
      const [appended] = fromMessages(message(createdAt)).events;
      const [native] = fromEvents({ events: [{ id: 'm1', type: 'user', text: 'hi', createdAt }] }).events;
      expect(appended.createdAt).toBe(createdAt);
      expect(appended).toEqual(native);
    },
  );

  it('counts createdAt null (or left out) as absent: the store gives the time', () => {
    for (const body of [message(null), { messages: [{ role: 'assistant', content: 'ok' }] }]) expect(fromMessages(body).events[0].createdAt).toBeUndefined();
  });

  it.each(['2026-01-01T00:00:00', '10000-01-01T00:00:00Z', 'yesterday', 1767225600000])(
    'refuses createdAt %s with 400 invalid_message at messages[0].createdAt, with the message /events gives',
    (createdAt) => {
      const err = refusal(() => fromMessages(message(createdAt)));
      const native = refusal(() => fromEvents({ events: [{ id: 'm1', type: 'user', text: 'hi', createdAt }] }));
      expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'invalid_message', parameter: 'messages[0].createdAt' });
      expect(err.message).toBe(native.message.replace('events[0]', 'messages[0]'));
    },
  );
});

describe('metadata numbers a double does not hold as sent (newcomer ncpolyglot F2)', () => {
  /** The body of an /events append of one user event with `metadata` as this JSON text. */
  const bodyWith = (metadata: string) => `{"events":[{"id":"u1","type":"user","text":"hi","metadata":${metadata}}]}`;

  it.each([
    ['{"snowflake":1234567890123456789}', 'events[0].metadata.snowflake'],
    ['{"ok":1,"a":[0,{"big":12345678901234567890}]}', 'events[0].metadata.a[1].big'],
    ['{"huge":1e400}', 'events[0].metadata.huge'],
    ['{"negative":-9007199254740992}', 'events[0].metadata.negative'],
    ['{"large":1e300}', 'events[0].metadata.large'],
  ])('refuses %s (400 naming %s, asking for a string), over HTTP and NATS', async (metadata, path) => {
    const err = refusal(() => fromEvents(JSON.parse(bodyWith(metadata))));
    expect({ code: err.code, parameter: err.parameter }).toEqual({ code: 'validation_failed', parameter: path });
    expect(err.message).toMatch(new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}: .*send it as a string`));
    const answer = await natsAppendAnswerOf(bodyWith(metadata));
    expect(answer.body).toMatchObject({ code: 'validation_failed', parameter: path, message: err.message });
  });

  it('keeps the numbers a double holds as sent: integers up to ±(2^53 − 1), fractions, big integers sent as strings', () => {
    const metadata = '{"max":9007199254740991,"min":-9007199254740991,"f":1.5,"tiny":5e-324,"zero":0,"id":"12345678901234567890"}';
    expect(JSON.stringify(fromEvents(JSON.parse(bodyWith(metadata))).events[0].metadata)).toBe(metadata);
  });

  it('an integer sent as JSON text is kept exactly when accepted, refused past 2^53 − 1 (property)', () => {
    const limit = 2n ** 53n - 1n;
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (n) => {
        const body = JSON.parse(bodyWith(`{"n":${n}}`));
        if (n > limit || n < -limit) {
          expect(refusal(() => fromEvents(body)).parameter).toBe('events[0].metadata.n');
        } else {
          // The stored number, written back, is the integer sent (BigInt of its text, not a double).
          expect(BigInt(JSON.stringify(fromEvents(body).events[0].metadata!.n))).toBe(n);
        }
      }),
      { numRuns: 300, examples: [[limit], [limit + 1n], [-limit], [-limit - 1n], [2n ** 63n]] },
    );
  });
});

// Some OpenAI-compatible frameworks send `content: []` beside tool_calls (it was refused: "textParts: must hold at least one part").
describe('an assistant message with content [] beside tool_calls is no text (HTTP /messages and NATS messages)', () => {
  const call = { id: 'k1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
  const body = {
    messages: [
      { id: 'u1', role: 'user', content: 'find it' },
      { id: 'a1', role: 'assistant', content: [], tool_calls: [call] },
    ],
  };
  const assistant = { id: 'a1', type: 'assistant', text: null, toolCalls: [{ id: 'k1', name: 'lookup', arguments: '{}' }] };

  it('/messages: the event of content null (text null, no textParts)', () => {
    expect(fromMessages(body).events[1]).toEqual({ event: assistant });
    expect(fromMessages({ messages: [body.messages[0], { ...body.messages[1], content: null }] }).events).toEqual(fromMessages(body).events);
  });

  it('the NATS messages command carries the same events (same function)', async () => {
    let command: { events?: unknown } | undefined;
    const commandBus = {
      execute: (sent: { events?: unknown }) => {
        command = sent;
        return Promise.reject(new Error('stop here'));
      },
    } as unknown as CommandBus;
    const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 1 << 20 });
    await executor
      .execute({
        subject: commandSubject('smc', 't', 's', 'messages'),
        data: new TextEncoder().encode(JSON.stringify(body)),
        commandId: 'c1',
        redelivered: false,
      })
      .catch(() => undefined);
    expect(command?.events).toEqual(fromMessages(body).events);
  });
});

describe('an append body: userId null is absent, as every optional field; expectedRevision null stays refused (newcomer ncgocurl A8; HTTP and NATS)', () => {
  it.each([
    ['events', fromEvents, { events: [user] }],
    ['messages', fromMessages, { messages: [{ role: 'user', content: 'hi' }] }],
  ] as const)('%s: userId null gives the very command of leaving it out', (_route, from, body) => {
    expect(JSON.stringify(from({ ...body, userId: null }))).toBe(JSON.stringify(from(body)));
    expect(refusal(() => from({ ...body, expectedRevision: null })).parameter).toBe('expectedRevision');
  });

  it('over NATS too: userId null is not refused (the command reaches the bus)', async () => {
    // (the bus of natsAppendAnswer refuses to run: an answer other than a userId refusal)
    const answer = await natsAppendAnswer({ events: [user], userId: null });
    expect(JSON.stringify(answer)).not.toMatch(/userId/);
  });
});
