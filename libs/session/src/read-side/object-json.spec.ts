import fc from 'fast-check';
import { objectJson } from './object-json';

/** JSON-like values with what JSON.stringify leaves out or turns into null (undefined, functions, NaN, -0) mixed in. */
const member = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue() },
  fc.constant(undefined),
  fc.constant(() => 1),
  fc.constantFrom(Number.NaN, -0, Infinity, '\ud800', 'a"b\\c\n\u2028'),
);

/** Objects with keys in any order: integer-like keys (which objects list first), `__proto__` as an own key, the projector's `event` and `costs`. */
const record = fc
  .array(fc.tuple(fc.oneof(fc.string(), fc.constantFrom('event', 'costs', '0', '10', '__proto__', '')), member), { maxLength: 8 })
  .map((entries) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of entries) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    return out;
  });

describe('objectJson', () => {
  it('gives what JSON.stringify gives, whichever members are passed already serialised', () => {
    fc.assert(
      fc.property(record, fc.func(fc.boolean()), (value, passed) => {
        const known: Record<string, string> = {};
        for (const key of Object.keys(value)) {
          const json = JSON.stringify(value[key]) as string | undefined;
          if (json !== undefined && passed(key)) known[key] = json;
        }
        expect(objectJson(value, known)).toBe(JSON.stringify(value));
      }),
      { numRuns: 500 },
    );
  });

  it('gives what JSON.stringify gives for objects parsed from JSON text (the projector reads stored events so)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (built) => {
        const value = JSON.parse(JSON.stringify(built)) as Record<string, unknown>;
        const known = Object.fromEntries(Object.keys(value).map((key) => [key, JSON.stringify(value[key])]));
        expect(objectJson(value, known)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('leaves anything but a plain object to JSON.stringify: arrays, dates, objects with toJSON, class instances, primitives', () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const withToJson = { event: { id: 'a' }, toJSON: () => 'replaced' };
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { event: { id: 'a' }, b: 1 });
    for (const value of [[1, 2], new Date(0), withToJson, new Point(1), null, 'text', 3, nullProto]) {
      expect(objectJson(value, { event: '{"id":"a"}' })).toBe(JSON.stringify(value));
    }
  });
});
