/**
 * The one rule for a misspelled field (`unknownFieldHint`): what a "required" message adds when
 * the object also holds keys the service does not know, and which of them are near misses.
 */
import fc from 'fast-check';
import {
  fieldNameDistance,
  firstUnknownKey,
  MAX_NAMED_UNKNOWN_KEYS,
  MAX_SCANNED_UNKNOWN_KEYS,
  nearMissOf,
  parseStrategy,
  parseTrigger,
  STRATEGY_ALLOWED_KEYS,
  TRIGGER_ALLOWED_KEYS,
  unknownFieldHint,
  unknownKeysMessage,
  type InvalidParameterError,
} from '@lib/compaction';

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('fieldNameDistance and nearMissOf', () => {
  it('given a dropped letter, a swap or another letter case, when compared, then they are one edit or none apart', () => {
    expect(fieldNameDistance('evnts', 'events')).toBe(1);
    expect(fieldNameDistance('tpye', 'type')).toBe(1);
    expect(fieldNameDistance('userid', 'userId')).toBe(0);
    expect(fieldNameDistance('', 'abc')).toBe(3);
  });

  it('given field names, when a key is a near miss of one, then that name (the first of the closest) is suggested, else nothing', () => {
    expect(nearMissOf('evnts', ['events', 'expectedRevision'])).toBe('events');
    expect(nearMissOf('Strategy', ['strategy'])).toBe('strategy');
    expect(nearMissOf('strtegy', ['strategy'])).toBe('strategy');
    expect(nearMissOf('x', ['q'])).toBeUndefined();
    expect(nearMissOf('foo', ['events', 'userId'])).toBeUndefined();
    expect(nearMissOf('e'.repeat(10_000), ['events'])).toBeUndefined();
  });
});

describe('unknownFieldHint', () => {
  it('given no unknown key, when asked, then there is no hint', () => {
    expect(unknownFieldHint({ holder: 'the body', unknownKeys: [], candidates: ['events'] })).toBe('');
  });

  it('given one misspelled key, when asked, then it is named and the field suggested', () => {
    expect(unknownFieldHint({ holder: 'the body', unknownKeys: ['evnts'], candidates: ['events'] })).toBe(
      ' (the body has an unknown field "evnts": did you mean "events"?)',
    );
  });

  it('given several keys, when asked, then all are named and each near miss gets its field', () => {
    expect(unknownFieldHint({ holder: 'events[0]', unknownKeys: ['txt', 'zzz'], candidates: ['text', 'id'] })).toBe(
      ' (events[0] has unknown fields "txt", "zzz": did you mean "text" for "txt"?)',
    );
    expect(unknownFieldHint({ holder: 'the query', unknownKeys: ['zzz'], candidates: ['q'], noun: 'parameter' })).toBe(
      ' (the query has an unknown parameter "zzz")',
    );
  });

  it('given many keys, when asked, then it names five and counts the rest', () => {
    const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
    expect(unknownFieldHint({ holder: 'the body', unknownKeys: keys, candidates: ['events'] })).toBe(
      ' (the body has unknown fields "k0", "k1", "k2", "k3", "k4" and 3 more)',
    );
  });
});

describe('a strategy or trigger without its type names the keys no variant takes', () => {
  it('given strategy {"tpye": …}, when parsed, then the required type names "tpye" and suggests "type"', () => {
    expect(messageOf(() => parseStrategy({ tpye: 'sliding-window', maxEvents: 4 }))).toBe(
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has an unknown field "tpye": did you mean "type"?)',
    );
  });

  it('given a nested trigger {"Type": …}, when parsed, then its path names "Type" and suggests "type"', () => {
    expect(messageOf(() => parseTrigger({ type: 'any-of', triggers: [{ Type: 'turn-count', maxTurns: 2 }] }))).toBe(
      'trigger.triggers[0].type: is required: one of turn-count, token-count, any-of, all-of (trigger.triggers[0] has an unknown field "Type": did you mean "type"?)',
    );
  });

  it('given a strategy with only known keys and no type, when parsed, then the message is as before', () => {
    expect(messageOf(() => parseStrategy({ maxEvents: 4 }))).toBe(
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary',
    );
  });
});

describe('unknownKeysMessage: a strategy or trigger parameter sent beside them is told where it belongs, not "remove it" (removing it runs with the default)', () => {
  const body = ['strategy', 'trigger', 'estimator', 'dryRun'];

  // Newcomer ncbigwindow F1: the advice named places whose types as sent refuse the parameter.
  it('given the types sent, when one refuses the parameter, then only the others are named; when all do, the types that take it are', () => {
    const message = (key: string, held: object) => unknownKeysMessage({ unknownKeys: [key], candidates: [], fields: body, held });
    expect(message('maxTurns', { strategy: { type: 'token-count' }, trigger: { type: 'token-count', threshold: 5 } })).toBe(
      'unknown field "maxTurns": it is a parameter of the turn-window strategy or the turn-count trigger, not of the token-count strategy or the token-count trigger sent: change the type, or remove it',
    );
    expect(message('maxTurns', { strategy: { type: 'sliding-window', maxEvents: 3 } })).toBe(
      'unknown field "maxTurns": it is a parameter of the trigger; move it into "trigger" (trigger.maxTurns)',
    );
    expect(message('threshold', { strategy: { type: 'sliding-window' }, trigger: { type: 'any-of', triggers: [{ type: 'token-count' }] } })).toBe(
      'unknown field "threshold": it is a parameter of a member of the trigger; move it into "trigger.triggers[…]" (trigger.triggers[…].threshold)',
    );
    expect(message('maxTurns', { strategy: { type: 'turn-window' }, trigger: { type: 'token-count' } })).toBe(
      'unknown field "maxTurns": it is a parameter of the strategy; move it into "strategy" (strategy.maxTurns)',
    );
    // A type that is none of the holder's (refused anyway by its own parser) counts as not sent.
    expect(message('maxEvents', { strategy: { type: 'no-such-type' } })).toBe(
      'unknown field "maxEvents": it is a parameter of the strategy; move it into "strategy" (strategy.maxEvents)',
    );
    expect(
      unknownKeysMessage({
        unknownKeys: ['maxTurns', 'junk'],
        candidates: [],
        fields: body,
        held: { strategy: { type: 'token-count' }, trigger: { type: 'token-count' } },
      }),
    ).toBe(
      'unknown fields "maxTurns", "junk": "maxTurns" is a parameter of the turn-window strategy or the turn-count trigger, not of the token-count strategy or the token-count trigger sent: change the type, or remove it; remove the others',
    );
  });

  it('given "maxTurns" beside a strategy and a trigger, when refused, then it is moved into either (a turn-window and a turn-count parameter)', () => {
    expect(unknownKeysMessage({ unknownKeys: ['maxTurns'], candidates: ['estimator', 'dryRun'], fields: body })).toBe(
      'unknown field "maxTurns": it is a parameter of the strategy or the trigger; move it into "strategy" or "trigger" (strategy.maxTurns / trigger.maxTurns)',
    );
  });

  it('given "maxEvents" or "threshold", when refused, then only the object whose types take it is named', () => {
    expect(unknownKeysMessage({ unknownKeys: ['maxEvents'], candidates: [], fields: body })).toBe(
      'unknown field "maxEvents": it is a parameter of the strategy; move it into "strategy" (strategy.maxEvents)',
    );
    expect(unknownKeysMessage({ unknownKeys: ['threshold'], candidates: [], fields: body })).toBe(
      'unknown field "threshold": it is a parameter of the trigger; move it into "trigger" (trigger.threshold)',
    );
  });

  it('given a near miss of a parameter, when refused, then the parameter is suggested with where it belongs', () => {
    expect(unknownKeysMessage({ unknownKeys: ['maxevent'], candidates: [], fields: body })).toBe(
      'unknown field "maxevent": did you mean "maxEvents", a parameter of the strategy? move it into "strategy" (strategy.maxEvents)',
    );
  });

  it('given an object without a strategy field, or a parameter of the object the schema lacks, when refused, then "remove it" as before', () => {
    expect(unknownKeysMessage({ unknownKeys: ['maxTurns'], candidates: [], fields: ['events', 'userId'] })).toBe('unknown field "maxTurns": remove it');
    expect(unknownKeysMessage({ unknownKeys: ['maxTurns'], candidates: [] })).toBe('unknown field "maxTurns": remove it');
    expect(unknownKeysMessage({ unknownKeys: ['threshold'], candidates: [], fields: ['strategy'] })).toBe('unknown field "threshold": remove it');
    expect(unknownKeysMessage({ unknownKeys: ['maxTurns'], candidates: [], fields: ['strategy'] })).toBe(
      'unknown field "maxTurns": it is a parameter of the strategy; move it into "strategy" (strategy.maxTurns)',
    );
    expect(unknownKeysMessage({ unknownKeys: ['type'], candidates: [], fields: body })).toBe('unknown field "type": remove it');
  });

  it('given a near miss of a body field that is also near a parameter, when refused, then the body field wins ("did you mean" as before)', () => {
    expect(unknownKeysMessage({ unknownKeys: ['triggers'], candidates: ['trigger', 'estimator', 'dryRun'], fields: body })).toBe(
      'unknown field "triggers": did you mean "trigger"?',
    );
  });

  it('given several keys, when refused, then near misses stay first, five are named, and each parameter named gets its place', () => {
    expect(unknownKeysMessage({ unknownKeys: ['junk', 'maxTurns', 'dryrun', 'threshold'], candidates: ['dryRun'], fields: body })).toBe(
      'unknown fields "dryrun", "junk", "maxTurns", "threshold": did you mean "dryRun" for "dryrun"? move "maxTurns" into "strategy" or "trigger" (strategy.maxTurns / trigger.maxTurns), "threshold" into "trigger" (trigger.threshold); remove the others',
    );
    expect(unknownKeysMessage({ unknownKeys: ['maxEvents', 'threshold'], candidates: [], fields: body })).toBe(
      'unknown fields "maxEvents", "threshold": move "maxEvents" into "strategy" (strategy.maxEvents), "threshold" into "trigger" (trigger.threshold)',
    );
    expect(unknownKeysMessage({ unknownKeys: ['j0', 'j1', 'j2', 'j3', 'j4', 'maxTurns'], candidates: [], fields: body })).toBe(
      'unknown fields "j0", "j1", "j2", "j3", "j4" and 1 more: remove them',
    );
  });

  it('property: the places named are exactly the objects of the body whose parser takes the key as a parameter of some type', () => {
    const holders = ['strategy', 'trigger'] as const;
    const parse = { strategy: parseStrategy, trigger: parseTrigger };
    const types = { strategy: Object.keys(STRATEGY_ALLOWED_KEYS), trigger: Object.keys(TRIGGER_ALLOWED_KEYS) };
    // the parsers are the oracle: a key is a parameter of `h` when some type of `h` does not refuse it as unknown ("must be absent")
    const takes = (h: (typeof holders)[number], key: string) =>
      types[h].some((type) => {
        try {
          parse[h]({ type, [key]: 1 });
          return true;
        } catch (err) {
          return (err as InvalidParameterError).parameter !== `${h}.${key}` || !(err as Error).message.includes('must be absent');
        }
      });
    const names = [...new Set([...Object.values(STRATEGY_ALLOWED_KEYS), ...Object.values(TRIGGER_ALLOWED_KEYS)].flat())];
    fc.assert(
      fc.property(fc.constantFrom(...names, 'dryRun', 'junk', 'events'), fc.subarray([...holders, 'estimator']), (key, fields) => {
        const message = unknownKeysMessage({ unknownKeys: [key], candidates: [], fields });
        const expected = holders.filter((h) => key !== 'type' && fields.includes(h) && takes(h, key));
        for (const h of holders) expect(message.includes(`${h}.${key}`)).toBe(expected.includes(h));
        expect(message.endsWith('remove it')).toBe(expected.length === 0);
      }),
    );
  });
});

/**
 * `keys` behind a proxy that counts the elements read (`reads.count`): what a hint does per key,
 * whatever the time it takes (newcomer ncbounds: 300,000 unknown keys held the event loop for 5 s).
 */
function countingReads(keys: string[]): { keys: string[]; reads: { count: number } } {
  const reads = { count: 0 };
  const proxy = new Proxy(keys, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && /^\d+$/.test(prop)) reads.count++;
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { keys: proxy, reads };
}

describe('many unknown keys: a hint reads a bounded number of them, names five and counts the rest (newcomer ncbounds)', () => {
  const junk = (n: number) => Array.from({ length: n }, (_, i) => `junk${i}`);

  it('given 100,000 unknown keys, when hinted or refused, then at most MAX_SCANNED_UNKNOWN_KEYS of them are read', () => {
    const hint = countingReads(junk(100_000));
    expect(unknownFieldHint({ holder: 'the body', unknownKeys: hint.keys, candidates: ['events'] })).toBe(
      ' (the body has unknown fields "junk0", "junk1", "junk2", "junk3", "junk4" and 99995 more)',
    );
    expect(hint.reads.count).toBeLessThanOrEqual(MAX_SCANNED_UNKNOWN_KEYS);
    const message = countingReads(junk(100_000));
    expect(unknownKeysMessage({ unknownKeys: message.keys, candidates: ['dryRun'], fields: ['strategy', 'trigger', 'dryRun'] })).toBe(
      'unknown fields "junk0", "junk1", "junk2", "junk3", "junk4" and 99995 more: remove them',
    );
    expect(message.reads.count).toBeLessThanOrEqual(MAX_SCANNED_UNKNOWN_KEYS);
  });

  it('property: a near miss among the first MAX_SCANNED_UNKNOWN_KEYS unknown keys is named first with its field; one after them is only counted', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 * MAX_SCANNED_UNKNOWN_KEYS }), fc.nat(), (n, at) => {
        const keys = junk(n);
        const position = at % n;
        keys[position] = 'evnts';
        const { keys: counted, reads } = countingReads(keys);
        const hint = unknownFieldHint({ holder: 'the body', unknownKeys: counted, candidates: ['events'] });
        expect(reads.count).toBeLessThanOrEqual(MAX_SCANNED_UNKNOWN_KEYS);
        // the list of keys comes before the question (no key here holds a colon)
        const named = hint.split(':')[0].match(/"[^"]+"/g)!;
        expect(named.length).toBe(Math.min(n, MAX_NAMED_UNKNOWN_KEYS));
        if (n > MAX_NAMED_UNKNOWN_KEYS) expect(hint).toContain(` and ${n - MAX_NAMED_UNKNOWN_KEYS} more`);
        expect(hint.includes('did you mean "events"?') || hint.includes('did you mean "events" for "evnts"?')).toBe(position < MAX_SCANNED_UNKNOWN_KEYS);
        if (position < MAX_SCANNED_UNKNOWN_KEYS) expect(named[0]).toBe('"evnts"');
      }),
      { numRuns: 200 },
    );
  });

  it('given a strategy with a near miss among its first unknown keys, or after them, when parsed, then the near miss is named, or the first key', () => {
    const strategy = (before: number) => ({ type: 'sliding-window', ...Object.fromEntries(junk(before).map((k) => [k, 1])), maxEvent: 3 });
    expect(firstUnknownKey(strategy(MAX_SCANNED_UNKNOWN_KEYS - 1), STRATEGY_ALLOWED_KEYS['sliding-window'])).toBe('maxEvent');
    expect(firstUnknownKey(strategy(MAX_SCANNED_UNKNOWN_KEYS), STRATEGY_ALLOWED_KEYS['sliding-window'])).toBe('junk0');
    expect(messageOf(() => parseStrategy(strategy(MAX_SCANNED_UNKNOWN_KEYS - 1)))).toMatch(
      /^invalid strategy\.maxEvent: .*did you mean "maxEvents"\? strategy has 63 other unknown keys: "junk0", "junk1", "junk2", "junk3" and 59 more\)$/,
    );
    expect(
      (() => {
        try {
          parseStrategy(strategy(100_000));
        } catch (err) {
          return { parameter: (err as InvalidParameterError).parameter, unknownKey: (err as InvalidParameterError).unknownKey };
        }
      })(),
    ).toEqual({ parameter: 'strategy.junk0', unknownKey: 'junk0' });
  });

  it('given a strategy without a type and 100,000 unknown keys, when parsed, then five are named and the rest counted', () => {
    const input = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`maxEventz${i}`, 1]));
    expect(messageOf(() => parseStrategy(input))).toBe(
      'strategy.type: is required: one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary (strategy has unknown fields "maxEventz0", "maxEventz1", "maxEventz2", "maxEventz3", "maxEventz4" and 99995 more: did you mean "maxEvents" for "maxEventz0", "maxEvents" for "maxEventz1", "maxEvents" for "maxEventz2", "maxEvents" for "maxEventz3", "maxEvents" for "maxEventz4"?)',
    );
  });
});

describe('a strategy or trigger refusing an unknown key names its other unknown keys too (newcomer ncverify53: only the first was named)', () => {
  it('given one unknown key, when parsed, then the message is as before', () => {
    expect(messageOf(() => parseStrategy({ type: 'sliding-window', k0: 1 }))).toBe(
      'invalid strategy.k0: must be absent (allowed keys: type, maxEvents) (got an unknown key)',
    );
  });

  it('given 10 unknown keys and a known one, when parsed, then the first is refused, four others named and the rest counted', () => {
    const strategy = { type: 'sliding-window', k0: 1, maxEvents: 5, ...Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i + 1}`, 1])) };
    expect(messageOf(() => parseStrategy(strategy))).toBe(
      'invalid strategy.k0: must be absent (allowed keys: type, maxEvents) (got an unknown key; strategy has 9 other unknown keys: "k1", "k2", "k3", "k4" and 5 more)',
    );
  });

  it('given a nested trigger with a near miss and another key, when parsed, then the near miss is asked about and the other named with its path', () => {
    const trigger = {
      type: 'any-of',
      triggers: [
        { type: 'turn-count', maxTurns: 2 },
        { type: 'turn-count', junk: 1, maxTurn: 3 },
      ],
    };
    expect(messageOf(() => parseTrigger(trigger))).toBe(
      'invalid trigger.triggers[1].maxTurn: must be absent (allowed keys: type, maxTurns) (got an unknown key; did you mean "maxTurns"? trigger.triggers[1] has another unknown key: "junk")',
    );
  });

  it('property: every unknown key of the strategy is the one refused, one of those named, or counted', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 30 }), (names) => {
        const unknown = names.filter((n) => !STRATEGY_ALLOWED_KEYS['sliding-window'].includes(n));
        fc.pre(unknown.length > 0);
        const message = messageOf(() => parseStrategy({ type: 'sliding-window', ...Object.fromEntries(unknown.map((k) => [k, 1])) }));
        const refused = /^invalid strategy\.([a-z]+):/.exec(message)![1];
        const named = [...message.matchAll(/"([a-z]+)"/g)].map((m) => m[1]).filter((k) => unknown.includes(k));
        const counted = Number(/ and (\d+) more\)$/.exec(message)?.[1] ?? 0);
        expect(new Set([refused, ...named]).size + counted).toBe(unknown.length);
        expect(named.length).toBeLessThanOrEqual(MAX_NAMED_UNKNOWN_KEYS - 1);
      }),
    );
  });
});
