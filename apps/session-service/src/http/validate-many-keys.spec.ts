/**
 * Validation of objects with many keys does work bounded by the schema, not by the keys sent
 * (newcomer ncbounds): counted with proxies that record what is read, never timed.
 */
import fc from 'fast-check';
import { z } from 'zod';
import { jsonLimitExceeded, MAX_METADATA_DEPTH, MAX_METADATA_LENGTH, nullOptionalsAsAbsent, requestSchemas } from './request-schemas';
import { plainWording, validate } from './validate';

const schemas = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
const N = 100_000;
const keys = (n: number, prefix = 'k') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 1]));

/** `value` behind a proxy that counts the members read and the key listings made. */
function counting<T extends object>(value: T): { value: T; reads: { members: number; listings: number } } {
  const reads = { members: 0, listings: 0 };
  const proxy = new Proxy(value, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && Object.hasOwn(target, prop)) reads.members++;
      return Reflect.get(target, prop, receiver) as unknown;
    },
    ownKeys(target) {
      reads.listings++;
      return Reflect.ownKeys(target);
    },
  });
  return { value: proxy, reads };
}

/** Nesting depth of a JSON value, objects and arrays one level each (a primitive: 0). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

describe('metadata: its size and depth are checked without reading (or serializing) all of a large value', () => {
  it(`given metadata of ${N.toLocaleString('en-US')} keys, when validated, then it is refused as too large having read a bounded part of it`, () => {
    const { value: metadata, reads } = counting(keys(N));
    expect(() => validate(schemas.appendEvents, { events: [{ type: 'user', text: 'x', metadata }] })).toThrow(
      'events[0].metadata: is larger than 65536 characters (Unicode code points) of JSON, a fixed limit: keep large data elsewhere and put a reference to it in metadata',
    );
    expect(reads.members).toBeLessThanOrEqual(MAX_METADATA_LENGTH / 4);
  });

  it('property: "length" only for a value whose JSON is longer than the limit; "depth" exactly for one nested deeper', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(400), fc.integer({ min: 1, max: 8 }), (value, maxLength, maxDepth) => {
        const exceeded = jsonLimitExceeded(value, maxDepth, maxLength);
        if (exceeded === 'length') expect([...JSON.stringify(value)].length).toBeGreaterThan(maxLength);
        if (exceeded === 'depth') expect(depthOf(value)).toBeGreaterThan(maxDepth);
        if (jsonLimitExceeded(value, maxDepth, Infinity) !== 'depth') expect(depthOf(value)).toBeLessThanOrEqual(maxDepth);
      }),
      { numRuns: 500 },
    );
  });

  it('given metadata nested deeper than the limit, when validated, then the depth is named (before anything is serialized)', () => {
    let deep: unknown = 1;
    for (let i = 0; i <= MAX_METADATA_DEPTH; i++) deep = { a: deep };
    expect(jsonLimitExceeded(deep, MAX_METADATA_DEPTH, MAX_METADATA_LENGTH)).toBe('depth');
  });
});

describe('null optional fields: an object is looked up by its schema, not listed', () => {
  it(`given an event of ${N.toLocaleString('en-US')} unknown keys and no null field, when read, then none of its keys is listed or read`, () => {
    const { value: event, reads } = counting({ type: 'user', text: 'x', ...keys(N) });
    const body = { events: [event] };
    expect(nullOptionalsAsAbsent(schemas.appendEvents, body)).toBe(body);
    expect(reads).toEqual({ members: expect.any(Number), listings: 0 });
    expect(reads.members).toBeLessThanOrEqual(20);
  });

  it('given a null optional field among unknown keys, when read, then it is dropped and the others are kept in their order', () => {
    const read = nullOptionalsAsAbsent(schemas.appendEvents, { events: [{ k0: 1, type: 'user', id: null, text: 'x', k1: null }] });
    expect(read).toEqual({ events: [{ k0: 1, type: 'user', text: 'x', k1: null }] });
    expect(Object.keys((read as { events: object[] }).events[0])).toEqual(['k0', 'type', 'text', 'k1']);
  });
});

describe('unknown keys: the issue zod reports is worded without listing them', () => {
  it(`given ${N.toLocaleString('en-US')} unknown keys, when parsed with the API's wording, then the issue's message is short`, () => {
    const parsed = z.strictObject({ a: z.number().optional() }).safeParse(keys(N), { error: plainWording });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0].message.length).toBeLessThan(100);
  });
});
