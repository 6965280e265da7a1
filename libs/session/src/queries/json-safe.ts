/**
 * Makes a value JSON-serialisable for HTTP answers: every `bigint` (revisions, positions) becomes
 * its decimal string, `Date` its ISO-8601 string. Plain objects and arrays are copied.
 */
export function jsonSafe<T>(value: T): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object') {
    // fromEntries defines own properties: an assignment would turn a `__proto__` key (client
    // metadata is stored verbatim) into the object's prototype and lose it.
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, jsonSafe(v)]),
    );
  }
  return value;
}
