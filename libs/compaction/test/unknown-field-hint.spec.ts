/**
 * The one rule for a misspelled field (`unknownFieldHint`): what a "required" message adds when
 * the object also holds keys the service does not know, and which of them are near misses.
 */
import { fieldNameDistance, nearMissOf, parseStrategy, parseTrigger, unknownFieldHint } from '@lib/compaction';

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
