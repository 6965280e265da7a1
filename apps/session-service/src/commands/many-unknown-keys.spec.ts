/**
 * A body with many unknown keys is refused at about the cost of reading it (newcomer ncbounds:
 * 300,000 unknown keys in one event held the event loop, and `/health`, for 5 s; 15–20 µs of hint
 * work per key). What is checked is the work, never the time: the near-miss comparisons the
 * service's code asks for (`nearMissOf`, counted at the library's boundary) and the unknown keys the
 * library's message builders read (each list behind a counting proxy), whatever the number of keys;
 * and that every refusal names at most five keys and counts the rest. HTTP and NATS run the same
 * functions; the NATS executor is checked once too.
 */
import type { CommandBus } from '@nestjs/cqrs';
import * as compaction from '@lib/compaction';
import type { EventStore } from '@lib/event-store';
import { InvalidRequestError } from '@lib/session';
import { requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from '../nats/nats-command-executor';
import { commandSubject } from '../nats/nats-names';
import { appendEventsCommandFrom, appendMessagesCommandFrom, compactCommandFrom, policyCommandFrom } from './session-command-requests';
import { refusal } from './testing/refusal';

/** Work counted across the library's boundary: near-miss comparisons asked for, unknown keys read by the message builders. */
interface Work {
  nearMisses: number;
  keysRead: number;
}

jest.mock('@lib/compaction', () => {
  const actual = jest.requireActual<typeof compaction>('@lib/compaction');
  const work: Work = { nearMisses: 0, keysRead: 0 };
  const counted = (keys: readonly string[]) =>
    new Proxy(keys, {
      get(target, prop, receiver) {
        if (typeof prop === 'string' && /^\d+$/.test(prop)) work.keysRead++;
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
  return {
    ...actual,
    mockWork: work,
    nearMissOf: (key: string, candidates: readonly string[]) => {
      work.nearMisses++;
      return actual.nearMissOf(key, candidates);
    },
    unknownKeysMessage: (input: Parameters<typeof actual.unknownKeysMessage>[0]) =>
      actual.unknownKeysMessage({ ...input, unknownKeys: counted(input.unknownKeys) }),
    unknownFieldHint: (input: Parameters<typeof actual.unknownFieldHint>[0]) => actual.unknownFieldHint({ ...input, unknownKeys: counted(input.unknownKeys) }),
  };
});

const work = (compaction as unknown as { mockWork: Work }).mockWork;
const { MAX_SCANNED_UNKNOWN_KEYS } = compaction;
/** Most comparisons a refusal may ask for: a few per key looked at (a body field, each place a key may belong to), never one per key sent. */
const MAX_COMPARISONS = 6 * MAX_SCANNED_UNKNOWN_KEYS;
const N = 100_000;
const schemas = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });

/** `{"<prefix>0": 1, …}` with `n` keys. */
const keys = (n: number, prefix = 'junk') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 1]));

/** The refusal of `run` and the work it did. */
function refusedWithWork(run: () => unknown): { err: InvalidRequestError; work: Work } {
  work.nearMisses = 0;
  work.keysRead = 0;
  const err = refusal(run);
  return { err, work: { ...work } };
}

const events = (body: unknown) => () => appendEventsCommandFrom(schemas, 't', 's', body, () => 'gen');
const messages = (body: unknown) => () => appendMessagesCommandFrom(schemas, 't', 's', body, () => 'gen');
const compact = (body: unknown) => () => compactCommandFrom(schemas, 't', 's', body);
const policy = (body: unknown) => () => policyCommandFrom(schemas, 't', 's', body);
const remove = (first: string, prefix = 'junk') =>
  `${first}: unknown fields "${prefix}0", "${prefix}1", "${prefix}2", "${prefix}3", "${prefix}4" and ${N - 5} more: remove them`;

describe(`a body with ${N.toLocaleString('en-US')} unknown keys is refused with bounded hint work, five keys named and the rest counted`, () => {
  const cases: Array<[name: string, run: () => unknown, code: string, parameter: string, message: string | RegExp]> = [
    ['an event', events({ events: [{ type: 'user', text: 'x', ...keys(N) }] }), 'validation_failed', 'events[0].junk0', remove('events[0].junk0')],
    [
      'an event without its text',
      events({ events: [{ type: 'user', ...keys(N) }] }),
      'validation_failed',
      'events[0].text',
      `events[0].text: is required (events[0] has unknown fields "junk0", "junk1", "junk2", "junk3", "junk4" and ${N - 5} more)`,
    ],
    [
      'a tool call',
      events({ events: [{ type: 'assistant', toolCalls: [{ id: 'c1', name: 'f', arguments: '{}', ...keys(N) }] }] }),
      'validation_failed',
      'events[0].toolCalls[0].junk0',
      remove('events[0].toolCalls[0].junk0'),
    ],
    [
      'a body without events',
      events(keys(N)),
      'validation_failed',
      'events',
      `events: is required (the body has unknown fields "junk0", "junk1", "junk2", "junk3", "junk4" and ${N - 5} more)`,
    ],
    [
      'an OpenAI message',
      messages({ messages: [{ role: 'user', content: 'x', ...keys(N) }] }),
      'invalid_message',
      'messages[0].junk0',
      /^messages\[0\]\.junk0: unknown field "junk0": remove it \(the service stores /,
    ],
    [
      'an OpenAI message without its role',
      messages({ messages: [{ content: 'x', ...keys(N) }] }),
      'invalid_message',
      'messages[0].role',
      `messages[0].role: must be one of system, developer, user, assistant, tool (messages[0] has unknown fields "junk0", "junk1", "junk2", "junk3", "junk4" and ${N - 5} more)`,
    ],
    ['a compaction body', compact({ strategy: { type: 'sliding-window' }, ...keys(N) }), 'validation_failed', 'junk0', remove('junk0')],
    [
      'a strategy of near misses',
      compact({ strategy: { type: 'sliding-window', ...keys(N, 'maxEventz') } }),
      'invalid_parameter',
      'strategy.maxEventz0',
      `invalid strategy.maxEventz0: must be absent (allowed keys: type, maxEvents) (got an unknown key; did you mean "maxEvents"? strategy has ${N - 1} other unknown keys: "maxEventz1", "maxEventz2", "maxEventz3", "maxEventz4" and ${N - 5} more)`,
    ],
    [
      'a strategy without its type',
      compact({ strategy: keys(N, 'maxEventz') }),
      'invalid_parameter',
      'strategy.type',
      /^strategy\.type: is required: one of .* \(strategy has unknown fields "maxEventz0", .*"maxEventz4" and 99995 more: did you mean "maxEvents" for "maxEventz0", /,
    ],
    [
      'a trigger',
      compact({ strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', maxTurns: 2, ...keys(N, 'thresh') } }),
      'invalid_parameter',
      'trigger.thresh0',
      `invalid trigger.thresh0: must be absent (allowed keys: type, maxTurns) (got an unknown key; trigger has ${N - 1} other unknown keys: "thresh1", "thresh2", "thresh3", "thresh4" and ${N - 5} more)`,
    ],
    [
      'a policy body with dryRun sent last',
      policy({ strategy: { type: 'sliding-window' }, ...keys(N), dryRun: true }),
      'validation_failed',
      'junk0',
      /^junk0: unknown fields "junk0", "junk1", "junk2", "junk3", "junk4" and 99996 more: remove them; "dryRun": a policy has no dry run: /,
    ],
  ];

  it.each(cases)('%s', (_name, run, code, parameter, message) => {
    const { err, work: done } = refusedWithWork(run);
    expect({ code: err.code, parameter: err.parameter }).toEqual({ code, parameter });
    expect(err.message).toMatch(typeof message === 'string' ? new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : message);
    expect(err.message.length).toBeLessThan(600);
    expect(done.nearMisses).toBeLessThanOrEqual(MAX_COMPARISONS);
    expect(done.keysRead).toBeLessThanOrEqual(2 * MAX_SCANNED_UNKNOWN_KEYS);
  });

  it('a key of the body sent in a strategy after the first unknown keys looked at is not looked for: the refusal stays the parser’s', () => {
    const late = compact({ strategy: { type: 'sliding-window', ...keys(MAX_SCANNED_UNKNOWN_KEYS), dryRun: true } });
    expect(refusedWithWork(late).err.message).toBe(
      `invalid strategy.junk0: must be absent (allowed keys: type, maxEvents) (got an unknown key; strategy has ${MAX_SCANNED_UNKNOWN_KEYS} other unknown keys: "junk1", "junk2", "junk3", "junk4" and ${MAX_SCANNED_UNKNOWN_KEYS - 4} more)`,
    );
    const early = compact({ strategy: { type: 'sliding-window', ...keys(MAX_SCANNED_UNKNOWN_KEYS - 1), dryRun: true } });
    expect(refusedWithWork(early).err.message).toBe(
      'strategy.dryRun: unknown field "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body',
    );
  });

  it('a typo among the first unknown keys looked at is named first with its field; one after them is counted with the others', () => {
    const body = (before: number) => ({ events: [{ type: 'user', text: 'x' }], ...keys(before), userid: 'u', ...keys(N, 'more') });
    expect(refusal(events(body(MAX_SCANNED_UNKNOWN_KEYS - 1))).message).toBe(
      `userid: unknown fields "userid", "junk0", "junk1", "junk2", "junk3" and ${N + MAX_SCANNED_UNKNOWN_KEYS - 5} more: did you mean "userId" for "userid"? remove the others`,
    );
    expect(refusal(events(body(MAX_SCANNED_UNKNOWN_KEYS))).message).toBe(
      `junk0: unknown fields "junk0", "junk1", "junk2", "junk3", "junk4" and ${N + MAX_SCANNED_UNKNOWN_KEYS - 4} more: remove them`,
    );
  });

  it('over NATS: the same refusal, with the same bounded work', async () => {
    const commandBus = { execute: () => Promise.reject(new Error('must not run')) } as unknown as CommandBus;
    const executor = new NatsCommandExecutor(commandBus, {} as EventStore, schemas, { prefix: 'smc', tenants: new Set(['t']), maxBodyBytes: 5 << 20 });
    work.nearMisses = 0;
    work.keysRead = 0;
    const answer = await executor.execute({
      subject: commandSubject('smc', 't', 's', 'compact'),
      data: new TextEncoder().encode(JSON.stringify({ strategy: { type: 'sliding-window', ...keys(N, 'maxEventz') } })),
      commandId: 'c1',
      redelivered: false,
    });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 400,
      body: {
        code: 'invalid_parameter',
        message: `invalid strategy.maxEventz0: must be absent (allowed keys: type, maxEvents) (got an unknown key; did you mean "maxEvents"? strategy has ${N - 1} other unknown keys: "maxEventz1", "maxEventz2", "maxEventz3", "maxEventz4" and ${N - 5} more)`,
        parameter: 'strategy.maxEventz0',
      },
    });
    expect(work.nearMisses).toBeLessThanOrEqual(MAX_COMPARISONS);
  });

  it('metadata may hold many keys: as many as fit in its 64 KiB are accepted', () => {
    const metadata = keys(6_000, 'k');
    expect(JSON.stringify(metadata).length).toBeLessThanOrEqual(65_536);
    const command = appendEventsCommandFrom(schemas, 't', 's', { events: [{ type: 'user', text: 'x', metadata }] }, () => 'gen');
    expect(Object.keys(command.events[0].metadata!)).toHaveLength(6_000);
  });
});
