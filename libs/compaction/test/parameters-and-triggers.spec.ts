/**
 * Parameter validation (DESIGN §3.4: rejected before anything is read, naming the parameter and
 * its allowed range) and triggers (§3.5).
 */
import {
  codePointLength,
  costEvents,
  DEFAULT_SHADOW_PROMPT,
  DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
  describeValue,
  evaluateTrigger,
  getEstimator,
  InvalidParameterError,
  MAX_PARAMETER_VALUE,
  MAX_TRIGGER_DEPTH,
  parseStrategy,
  parseTrigger,
  type SessionEvent,
  type Trigger,
} from '../src';

function rejection(fn: () => unknown): InvalidParameterError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidParameterError);
    return e as InvalidParameterError;
  }
  throw new Error('expected an InvalidParameterError');
}

describe('parseStrategy (DESIGN §3.4)', () => {
  it('applies the defaults', () => {
    expect(parseStrategy({ type: 'sliding-window' })).toEqual({ type: 'sliding-window', maxEvents: 20 });
    expect(parseStrategy({ type: 'turn-window' })).toEqual({ type: 'turn-window', maxTurns: 10 });
    expect(parseStrategy({ type: 'token-count' })).toEqual({ type: 'token-count', maxTokens: 4000 });
    expect(parseStrategy({ type: 'recursive-summarization' })).toEqual({
      type: 'recursive-summarization',
      maxEventsToKeep: 10,
      overlapSize: 2,
      shadowPrompt: DEFAULT_SHADOW_PROMPT,
      systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
    });
    expect(parseStrategy({ type: 'rolling-summary' })).toEqual({
      type: 'rolling-summary',
      keepTurns: 2,
      summarizeAtTokens: 2500,
      shadowPrompt: DEFAULT_SHADOW_PROMPT,
      systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
    });
  });

  it('keeps given values and does not modify the input', () => {
    const input = { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 0, shadowPrompt: 'Recap?', systemPrompt: 'Be short.' };
    const copy = { ...input };
    expect(parseStrategy(input)).toEqual(input);
    expect(input).toEqual(copy);
  });

  it('clamps the default overlap below a small maxEventsToKeep', () => {
    expect(parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 1 })).toMatchObject({ overlapSize: 0 });
    expect(parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2 })).toMatchObject({ overlapSize: 1 });
  });

  // null is not among them: an optional parameter sent null is absent (its default; see below).
  const badCounts: unknown[] = [0, -1, 1.5, NaN, Infinity, -Infinity, '5', true, 1e9 + 1, 1e12, [], {}];
  const countParams: Array<[string, string]> = [
    ['sliding-window', 'maxEvents'],
    ['turn-window', 'maxTurns'],
    ['token-count', 'maxTokens'],
    ['recursive-summarization', 'maxEventsToKeep'],
    ['rolling-summary', 'keepTurns'],
    ['rolling-summary', 'summarizeAtTokens'],
  ];
  it.each(countParams)('%s rejects invalid %s, naming it and the range', (type, param) => {
    for (const value of badCounts) {
      const err = rejection(() => parseStrategy({ type, [param]: value }));
      expect(err.parameter).toBe(`strategy.${param}`);
      expect(err.message).toContain(param);
      expect(err.allowed).toContain('1 to 1000000000');
    }
    expect(() => parseStrategy({ type, [param]: 1e9 })).not.toThrow();
    expect(() => parseStrategy({ type, [param]: 1 })).not.toThrow();
  });

  it('rejects overlapSize outside 0 … maxEventsToKeep − 1', () => {
    for (const overlapSize of [3, 4, -1, 0.5, NaN, '1']) {
      const err = rejection(() => parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize }));
      expect(err.parameter).toBe('strategy.overlapSize');
      expect(err.allowed).toContain('maxEventsToKeep');
    }
    expect(parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 2 })).toMatchObject({ overlapSize: 2 });
  });

  it('rejects unknown types, keys, non-objects and blank prompts', () => {
    expect(rejection(() => parseStrategy({ type: 'fifo' })).parameter).toBe('strategy.type');
    expect(rejection(() => parseStrategy({})).parameter).toBe('strategy.type');
    expect(rejection(() => parseStrategy(null)).parameter).toBe('strategy');
    expect(rejection(() => parseStrategy([1])).parameter).toBe('strategy');
    expect(rejection(() => parseStrategy({ type: 'sliding-window', maxTurns: 3 })).parameter).toBe('strategy.maxTurns');
    expect(rejection(() => parseStrategy({ type: 'token-count', maxTokens: 5, extra: 1 })).parameter).toBe('strategy.extra');
    expect(rejection(() => parseStrategy({ type: 'rolling-summary', shadowPrompt: '  ' })).parameter).toBe('strategy.shadowPrompt');
    expect(rejection(() => parseStrategy({ type: 'rolling-summary', systemPrompt: 42 })).parameter).toBe('strategy.systemPrompt');
    expect(rejection(() => parseStrategy({ type: 'rolling-summary', shadowPrompt: 'x'.repeat(10_001) })).parameter).toBe('strategy.shadowPrompt');
    expect(rejection(() => parseStrategy({ type: 'rolling-summary', shadowPrompt: 'p\ud800' })).parameter).toBe('strategy.shadowPrompt');
    expect(rejection(() => parseStrategy({ type: 'recursive-summarization', systemPrompt: '\udc00 rules' })).parameter).toBe('strategy.systemPrompt');
  });

  it('takes an optional parameter sent null as absent (its default), as every request body does; a required one null is refused', () => {
    const strategies = [
      { type: 'sliding-window', maxEvents: null },
      { type: 'turn-window', maxTurns: null },
      { type: 'token-count', maxTokens: null },
      { type: 'recursive-summarization', maxEventsToKeep: null, overlapSize: null, shadowPrompt: null, systemPrompt: null },
      { type: 'rolling-summary', keepTurns: null, summarizeAtTokens: null, shadowPrompt: null, systemPrompt: null },
    ];
    for (const input of strategies) expect(parseStrategy(input)).toEqual(parseStrategy({ type: input.type }));
    expect(rejection(() => parseTrigger({ type: 'token-count', threshold: null })).parameter).toBe('trigger.threshold');
    expect(rejection(() => parseStrategy({ type: null })).parameter).toBe('strategy.type');
  });
});

describe('parseTrigger (DESIGN §3.5)', () => {
  it('accepts nested triggers', () => {
    const t = {
      type: 'any-of',
      triggers: [
        { type: 'turn-count', maxTurns: 3 },
        { type: 'all-of', triggers: [{ type: 'token-count', threshold: 10 }] },
      ],
    };
    expect(parseTrigger(t)).toEqual(t);
  });

  it('rejects bad values, naming the path', () => {
    expect(rejection(() => parseTrigger({ type: 'turn-count', maxTurns: -1 })).parameter).toBe('trigger.maxTurns');
    expect(rejection(() => parseTrigger({ type: 'turn-count' })).parameter).toBe('trigger.maxTurns');
    expect(rejection(() => parseTrigger({ type: 'token-count', threshold: 2.5 })).parameter).toBe('trigger.threshold');
    expect(rejection(() => parseTrigger({ type: 'any-of', triggers: [] })).parameter).toBe('trigger.triggers');
    expect(rejection(() => parseTrigger({ type: 'all-of' })).parameter).toBe('trigger.triggers');
    expect(rejection(() => parseTrigger({ type: 'any-of', triggers: [{ type: 'token-count', threshold: -1 }] })).parameter).toBe(
      'trigger.triggers[0].threshold',
    );
    expect(rejection(() => parseTrigger({ type: 'soon' })).parameter).toBe('trigger.type');
    expect(rejection(() => parseTrigger({ type: 'turn-count', maxTurns: 2, threshold: 3 })).parameter).toBe('trigger.threshold');
    expect(rejection(() => parseTrigger('turn-count')).parameter).toBe('trigger');
  });

  it('counts prompt lengths in Unicode code points, as its message says (an emoji is one character)', () => {
    const emoji = (n: number) => '😀'.repeat(n);
    expect(parseStrategy({ type: 'recursive-summarization', shadowPrompt: emoji(10_000) })).toMatchObject({ shadowPrompt: emoji(10_000) });
    expect(rejection(() => parseStrategy({ type: 'recursive-summarization', shadowPrompt: emoji(10_001) })).message).toContain(
      'at most 10000 characters (Unicode code points)',
    );
    expect(codePointLength('a😀b')).toBe(3);
    expect(codePointLength('\ud800x')).toBe(2);
  });

  // {"maxEvents": 1152921504606846976} was answered "(got 1152921504606847000)", a value never sent.
  it('describes a number JSON cannot carry exactly in words instead of echoing the double it was read as', () => {
    const sent = JSON.parse('{"type": "sliding-window", "maxEvents": 1152921504606846976}') as Record<string, unknown>;
    const message = rejection(() => parseStrategy(sent)).message;
    expect(message).toBe(
      `invalid strategy.maxEvents: must be an integer from 1 to ${MAX_PARAMETER_VALUE} (got a number beyond 2^53 − 1 (9007199254740991), which JSON cannot carry exactly here)`,
    );
    expect(message).not.toContain('1152921504606847000');
    expect(rejection(() => parseTrigger(JSON.parse('{"type": "token-count", "threshold": 1e400}') as Record<string, unknown>)).message).toMatch(
      /\(got a number too large to read \(beyond the largest double, about 1\.8e308\)\)$/,
    );
    // Numbers sent exactly are still quoted as sent.
    expect(rejection(() => parseStrategy({ type: 'sliding-window', maxEvents: Number.MAX_SAFE_INTEGER })).message).toMatch(/\(got 9007199254740991\)$/);
    expect(describeValue(-(2 ** 60))).toBe('a number beyond 2^53 − 1 (9007199254740991), which JSON cannot carry exactly here');
    expect(describeValue(1.5)).toBe('1.5');
  });

  // A left-out required field was answered "(got undefined)" (strategy.type, trigger.type,
  // trigger.triggers) or "must be an integer from 1 to 1000000000 (required) (got nothing)"
  // (trigger.maxTurns / threshold): one wording now, that of every missing request field.
  it.each([
    ['strategy.type', () => parseStrategy({}), 'one of sliding-window, turn-window, token-count, recursive-summarization, rolling-summary'],
    ['strategy', () => parseStrategy(undefined), 'an object with a "type"'],
    ['trigger.type', () => parseTrigger({}), 'one of turn-count, token-count, any-of, all-of'],
    ['trigger.triggers', () => parseTrigger({ type: 'any-of' }), 'a non-empty array of at most 32 triggers'],
    ['trigger.maxTurns', () => parseTrigger({ type: 'turn-count' }), `an integer from 1 to ${MAX_PARAMETER_VALUE}`],
    [
      'trigger.triggers[1].threshold',
      () => parseTrigger({ type: 'all-of', triggers: [{ type: 'turn-count', maxTurns: 1 }, { type: 'token-count' }] }),
      `an integer from 1 to ${MAX_PARAMETER_VALUE}`,
    ],
    ['trigger.triggers[0].type', () => parseTrigger({ type: 'any-of', triggers: [{ threshold: 5 }] }), 'one of turn-count, token-count, any-of, all-of'],
  ])('a left-out %s reads "<field>: is required: <what to send>"', (parameter, parse, allowed) => {
    const err = rejection(parse);
    expect({ parameter: err.parameter, message: err.message }).toEqual({ parameter, message: `${parameter}: is required: ${allowed}` });
    expect(err.message).not.toMatch(/undefined|got nothing|\(required\)/);
  });

  it('a required field sent null is not "required" but refused as sent (got null)', () => {
    expect(rejection(() => parseStrategy({ type: null })).message).toMatch(/^invalid strategy\.type: must be one of .* \(got null\)$/);
    expect(rejection(() => parseTrigger({ type: 'turn-count', maxTurns: null })).message).toBe(
      `invalid trigger.maxTurns: must be an integer from 1 to ${MAX_PARAMETER_VALUE} (got null)`,
    );
  });

  it('says an empty any-of / all-of list must not be empty, and how long a too-long one is', () => {
    expect(rejection(() => parseTrigger({ type: 'any-of', triggers: [] })).message).toBe(
      'invalid trigger.triggers: must be a non-empty array: list at least one trigger (got an empty array)',
    );
    const many = Array.from({ length: 33 }, () => ({ type: 'turn-count', maxTurns: 1 }));
    expect(rejection(() => parseTrigger({ type: 'all-of', triggers: many })).message).toMatch(/at most 32 triggers \(got an array of 33\)$/);
  });

  it('refuses 0, as strategy parameters are refused (a trigger of 0 always fires: leave it out), naming the parameter', () => {
    expect(rejection(() => parseTrigger({ type: 'token-count', threshold: 0 }))).toMatchObject({
      parameter: 'trigger.threshold',
      message: `invalid trigger.threshold: must be an integer from 1 to ${MAX_PARAMETER_VALUE} (got 0)`,
    });
    expect(rejection(() => parseTrigger({ type: 'turn-count', maxTurns: 0 })).parameter).toBe('trigger.maxTurns');
    expect(
      rejection(() =>
        parseTrigger({
          type: 'any-of',
          triggers: [
            { type: 'turn-count', maxTurns: 2 },
            { type: 'token-count', threshold: 0 },
          ],
        }),
      ).parameter,
    ).toBe('trigger.triggers[1].threshold');
    const events = costEvents([{ id: 'u', type: 'user', text: 'hi' }], getEstimator('chars'));
    expect(evaluateTrigger(parseTrigger({ type: 'turn-count', maxTurns: 1 }), events)).toBe(false);
    expect(evaluateTrigger(parseTrigger({ type: 'token-count', threshold: 1 }), events)).toBe(true);
  });

  it('limits the nesting depth', () => {
    const nest = (depth: number): unknown => (depth === 1 ? { type: 'turn-count', maxTurns: 1 } : { type: 'any-of', triggers: [nest(depth - 1)] });
    expect(() => parseTrigger(nest(MAX_TRIGGER_DEPTH))).not.toThrow();
    expect(rejection(() => parseTrigger(nest(MAX_TRIGGER_DEPTH + 1))).parameter).toContain('triggers');
  });
});

describe('evaluateTrigger (DESIGN §3.5)', () => {
  const chars = getEstimator('chars');
  const events: SessionEvent[] = [
    { id: 's1', type: 'system', text: 'old rules' }, // superseded: "System: old rules" = 17, not counted
    { id: 'u1', type: 'user', text: 'hi' }, // 8
    { id: 'm', type: 'summary', shadowPrompt: 'S?', text: 'ok' }, // "User: S?" 8 + "Assistant: ok" 13
    { id: 's2', type: 'system', text: 'rules' }, // pinned: 13
    { id: 'a1', type: 'assistant', text: 'yo' }, // 13
    { id: 'u2', type: 'user', text: 'go' }, // 8
  ];
  const costed = costEvents(events, chars);
  const total = 8 + 21 + 13 + 13 + 8; // 63

  it('no trigger always fires', () => {
    expect(evaluateTrigger(null, costed)).toBe(true);
    expect(evaluateTrigger(undefined, [])).toBe(true);
  });
  it('turn-count counts user events, the turn in progress included', () => {
    expect(evaluateTrigger({ type: 'turn-count', maxTurns: 1 }, costed)).toBe(true);
    expect(evaluateTrigger({ type: 'turn-count', maxTurns: 2 }, costed)).toBe(false);
  });
  it('token-count adds pinned system, summaries and real events, at or over the threshold', () => {
    expect(evaluateTrigger({ type: 'token-count', threshold: total }, costed)).toBe(true);
    expect(evaluateTrigger({ type: 'token-count', threshold: total + 1 }, costed)).toBe(false);
  });
  it('any-of / all-of', () => {
    const yes: Trigger = { type: 'turn-count', maxTurns: 1 };
    const no: Trigger = { type: 'token-count', threshold: 1000 };
    expect(evaluateTrigger({ type: 'any-of', triggers: [no, yes] }, costed)).toBe(true);
    expect(evaluateTrigger({ type: 'all-of', triggers: [no, yes] }, costed)).toBe(false);
    expect(evaluateTrigger({ type: 'all-of', triggers: [yes, { type: 'any-of', triggers: [no, yes] }] }, costed)).toBe(true);
  });
});

describe('unknown keys of a strategy or a trigger', () => {
  const longKey = 'x'.repeat(8000);
  it.each([
    ['strategy', () => parseStrategy({ type: 'token-count', maxTokens: 60, [longKey]: 1 }), 'strategy.'],
    ['trigger', () => parseTrigger({ type: 'turn-count', maxTurns: 3, [longKey]: 1 }), 'trigger.'],
    ['nested trigger', () => parseTrigger({ type: 'any-of', triggers: [{ type: 'turn-count', maxTurns: 3, [longKey]: 1 }] }), 'trigger.triggers[0].'],
  ])('a %s key of 8,000 characters is named by its first 64 and its length, not whole', (_, parse, prefix) => {
    const error = rejection(parse);
    expect(error.parameter).toBe(`${prefix}${'x'.repeat(64)}… (8000 characters)`);
    expect(error.message.length).toBeLessThan(400);
  });

  it('a short unknown key is named whole', () => {
    expect(rejection(() => parseStrategy({ type: 'token-count', maxTokens: 60, maxToken: 1 })).parameter).toBe('strategy.maxToken');
  });
});
