/**
 * Makes a value JSON-serialisable for HTTP answers: every `bigint` (revisions, positions) becomes
 * its decimal string, `Date` its ISO-8601 string. Plain objects and arrays are copied.
 */
export function jsonSafe<T>(value: T): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = jsonSafe(v);
    return out;
  }
  return value;
}
