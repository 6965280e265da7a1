import fc from 'fast-check';
import { BodyTooDeepError, MAX_BODY_DEPTH, rejectDeepBody } from './body-depth';

const bytes = (text: string) => new TextEncoder().encode(text);

/** Nesting depth of parsed JSON (arrays and objects). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('rejectDeepBody', () => {
  it(`accepts ${MAX_BODY_DEPTH} levels and refuses ${MAX_BODY_DEPTH + 1}`, () => {
    expect(() => rejectDeepBody(bytes('['.repeat(MAX_BODY_DEPTH) + ']'.repeat(MAX_BODY_DEPTH)))).not.toThrow();
    expect(() => rejectDeepBody(bytes('{"a":'.repeat(MAX_BODY_DEPTH + 1) + '1' + '}'.repeat(MAX_BODY_DEPTH + 1)))).toThrow(BodyTooDeepError);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const inString = JSON.stringify({ text: '['.repeat(1000) + '\\"{{{{' + '"'.repeat(3) });
    expect(() => rejectDeepBody(bytes(inString))).not.toThrow();
  });

  it('refuses exactly the JSON values deeper than the bound (random values)', () => {
    const arbitrary = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string(),
        fc.integer(),
        fc.array(tie('value'), { maxLength: 2 }),
        fc.dictionary(fc.string({ maxLength: 3 }), tie('value'), { maxKeys: 2 }),
      ),
    })).value;
    fc.assert(
      // shallow bodies (the native count passes them) and bodies near the bound (the full scan)
      fc.property(arbitrary, fc.oneof(fc.integer({ min: 0, max: 70 }), fc.integer({ min: MAX_BODY_DEPTH - 70, max: MAX_BODY_DEPTH })), (value, wrap) => {
        const text = '['.repeat(wrap) + JSON.stringify(value) + ']'.repeat(wrap);
        const deep = wrap + depthOf(value) > MAX_BODY_DEPTH;
        if (deep) expect(() => rejectDeepBody(bytes(text))).toThrow(BodyTooDeepError);
        else expect(() => rejectDeepBody(bytes(text))).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
