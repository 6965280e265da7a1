/**
 * Counting how often code reads the objects of a value, never timing it: {@link countingReads}
 * copies a JSON-like value (plain objects and arrays, at any depth) with each object behind a
 * proxy that tells, on each read, which kind of read it was. A spec adds the kinds it cares about
 * into its own counters ({@link ReadCounters}), e.g. to assert that validation lists an object's
 * keys once, or that a serialized value is not read again.
 */

/**
 * A kind of read of an object, by the proxy trap it goes through:
 * - `listing`: its keys listed (`ownKeys`: `Object.keys`, `Object.entries`, spread, `JSON.stringify`, …);
 * - `member`: a member read (`get` of an own string-keyed member: an array's `length` counts,
 *   inherited members such as its methods and symbol-keyed ones do not);
 * - `descriptor`: a member's descriptor looked up (`getOwnPropertyDescriptor`: `Object.hasOwn`,
 *   `Object.entries`, spread and `JSON.stringify` per key, …);
 * - `has`: a member looked for (`has`: the `in` operator, `Reflect.has`).
 */
export type ObjectRead = 'listing' | 'member' | 'descriptor' | 'has';

/** Counters by name, and which of them each kind of read adds 1 to (a kind left out is not counted). */
export type ReadCounters<C extends string> = { counts: Record<C, number>; into: Partial<Record<ObjectRead, C>> };

/**
 * A copy of `value` whose objects and arrays (at any depth, each copied) are behind proxies that
 * add 1 to `counters.counts[counters.into[kind]]` on each read of kind `kind` ({@link ObjectRead})
 * for which `into` names a counter. The proxies answer as the copy does (every trap forwards to
 * `Reflect`), so code reading them behaves as on `value`. Primitives are returned as they are.
 * Meant for JSON-like values: class instances, getters and cycles are not supported.
 */
export function countingReads<T, C extends string>(value: T, counters: ReadCounters<C>): T {
  if (value === null || typeof value !== 'object') return value;
  const count = (kind: ObjectRead) => {
    const counter = counters.into[kind];
    if (counter !== undefined) counters.counts[counter]++;
  };
  const target = Array.isArray(value)
    ? value.map((v) => countingReads(v, counters))
    : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, countingReads(v, counters)]));
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (typeof prop === 'string' && Object.hasOwn(t, prop)) count('member');
      return Reflect.get(t, prop, receiver) as unknown;
    },
    getOwnPropertyDescriptor(t, prop) {
      count('descriptor');
      return Reflect.getOwnPropertyDescriptor(t, prop);
    },
    has(t, prop) {
      count('has');
      return Reflect.has(t, prop);
    },
    ownKeys(t) {
      count('listing');
      return Reflect.ownKeys(t);
    },
  }) as T;
}
