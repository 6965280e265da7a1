import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { firstDifference } from './first-difference';

/** The value at `path` (`a.b[2].c`) of `value`, and whether it is there. */
function at(value: unknown, path: string): { has: boolean; value?: unknown } {
  let current: unknown = value;
  for (const part of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    const key = part.startsWith('[') ? Number(part.slice(1, -1)) : part;
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return { has: false };
    current = (current as Record<string | number, unknown>)[key];
  }
  return { has: true, value: current };
}

/** Whether every key of `value`, at any depth, is non-empty and holds no '.', '[' or ']'. */
function plainKeys(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(plainKeys);
  if (typeof value !== 'object' || value === null) return true;
  return Object.entries(value).every(([k, v]) => /^[^.[\]]+$/.test(k) && plainKeys(v));
}

describe('firstDifference (the field a 409 duplicate_event_id names)', () => {
  const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  const events = fc
    .dictionary(fc.constantFrom('id', 'type', 'text', 'name', 'responses', 'metadata'), json)
    .map((v) => JSON.parse(JSON.stringify(v)) as unknown);

  it('finds none exactly when the two are equal, and names a path where they differ', () => {
    fc.assert(
      fc.property(events, events, (stored, sent) => {
        // Paths are read back below by splitting on '.' and '[…]': keys holding those (or empty) are left out.
        fc.pre(plainKeys(stored) && plainKeys(sent));
        const found = firstDifference(stored, sent);
        expect(found === undefined).toBe(isDeepStrictEqual(stored, sent));
        if (!found) return;
        const [a, b] = [at(stored, found.path), at(sent, found.path)];
        expect([a.has, b.has]).toEqual([found.stored, found.sent]);
        if (a.has && b.has) expect(isDeepStrictEqual(a.value, b.value)).toBe(false);
      }),
    );
  });

  it('names an optional field left out of a resend', () => {
    expect(firstDifference({ id: 't1', type: 'tool', name: 'lookup' }, { id: 't1', type: 'tool' })).toEqual({ path: 'name', stored: true, sent: false });
    expect(firstDifference({ responses: [{ name: 'a' }] }, { responses: [{ name: 'b' }] })).toEqual({ path: 'responses[0].name', stored: true, sent: true });
  });
});
