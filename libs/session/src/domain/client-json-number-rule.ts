/**
 * The one rule for numbers in free-form JSON a client sends for the service to keep as sent (an
 * event's `metadata`, on every route that takes it: `POST …/events` over HTTP and NATS; the OpenAI
 * shape of `/messages` has no free-form JSON, and tool-call `arguments` are text). A request body
 * is read with `JSON.parse`, so every number is an IEEE-754 double (what JavaScript, and most JSON
 * libraries, hold): a number the double does not hold as sent would be stored changed, and a
 * resend with another such number would look like the same event (a retry). So such numbers are
 * refused (400) rather than changed:
 *
 * - a number that is not finite once read (`1e400` reads as Infinity, which JSON cannot hold: it
 *   would be stored as null);
 * - an integer-valued number past ±(2^53 − 1) (`12345678901234567890` reads as
 *   12345678901234567000: a 64-bit id, hash or nanosecond time loses its last digits). Every
 *   double that large is integer-valued, so `1e300` is refused as well: the service cannot tell
 *   from the double whether the digits sent were kept.
 *
 * Everything else is kept as the double it reads as (`1.0` comes back `1`, `0.1` as `0.1`). Send
 * big integers (and any number whose exact digits matter) as strings.
 */

/** Largest integer every JSON number up to it keeps exactly: 2^53 − 1. */
export const MAX_EXACT_JSON_INTEGER = Number.MAX_SAFE_INTEGER;

/** What to fix in a number {@link inexactJsonNumberAt} finds (a message to follow its path). */
export const INEXACT_JSON_NUMBER_RULE = `is a number the service cannot keep as sent (JSON numbers are kept as IEEE-754 doubles: finite, and integers only up to ±${MAX_EXACT_JSON_INTEGER}, 2^53 − 1): send it as a string (e.g. "12345678901234567890")`;

/** True when the JSON number `n` (as `JSON.parse` read it) is kept as sent: finite, and not an integer past ±(2^53 − 1). */
export function isExactJsonNumber(n: number): boolean {
  return Number.isFinite(n) && (Math.abs(n) <= MAX_EXACT_JSON_INTEGER || !Number.isInteger(n));
}

/**
 * The path (keys and array indexes from `value`, e.g. `['ids', 2]`) of the first number in the JSON
 * value `value` (as `JSON.parse` gives it) that {@link isExactJsonNumber} refuses, depth first in
 * key order; undefined when there is none (the common case: no allocation but the walk's stack).
 * Walks iteratively (never overflows the stack); O(size of `value`).
 */
export function inexactJsonNumberAt(value: unknown): Array<string | number> | undefined {
  if (typeof value === 'number') return isExactJsonNumber(value) ? undefined : [];
  if (value === null || typeof value !== 'object') return undefined;
  // Each entry: a value to look at and the index of its parent entry with the key that leads to it (paths built only when one is found).
  const nodes: Array<{ value: unknown; parent: number; key: string | number }> = [{ value, parent: -1, key: '' }];
  const stack = [0];
  while (stack.length > 0) {
    const at = stack.pop()!;
    const v = nodes[at].value;
    if (typeof v === 'number') {
      if (isExactJsonNumber(v)) continue;
      const path: Array<string | number> = [];
      for (let i = at; i > 0; i = nodes[i].parent) path.push(nodes[i].key);
      return path.reverse();
    }
    if (v === null || typeof v !== 'object') continue;
    const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    // Pushed in reverse, so the first key is looked at first.
    for (let k = keys.length - 1; k >= 0; k--) {
      const child = (v as Record<string | number, unknown>)[keys[k]];
      if (child === null || (typeof child !== 'object' && typeof child !== 'number')) continue;
      nodes.push({ value: child, parent: at, key: keys[k] });
      stack.push(nodes.length - 1);
    }
  }
  return undefined;
}
