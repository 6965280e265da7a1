/**
 * `JSON.stringify(value)` for a plain object some of whose members' JSON the caller already has
 * (`known`: member name → `JSON.stringify(value[name])`, e.g. an event's payload and costs the
 * projector also writes on their own), so that their text is not serialised a second time. The
 * result is the same string `JSON.stringify(value)` gives: members in `Object.keys` order, those
 * whose value serialises to nothing (undefined, a function, a symbol) left out. Anything but a
 * plain object (`null` or `Object.prototype` as its prototype) without `toJSON` is serialised by
 * `JSON.stringify` itself.
 *
 * @param known texts that must equal `JSON.stringify(value[name])` for each name (not checked).
 * @throws TypeError as `JSON.stringify` does (a bigint, a cycle).
 */
export function objectJson(value: unknown, known: Readonly<Record<string, string>>): string {
  if (!isPlainObject(value)) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(record)) {
    const member = Object.prototype.hasOwnProperty.call(known, key) ? known[key] : (JSON.stringify(record[key]) as string | undefined);
    if (member === undefined) continue;
    if (out.length > 1) out += ',';
    out += JSON.stringify(key) + ':' + member;
  }
  return out + '}';
}

/** Whether `value` is an object JSON.stringify walks member by member: prototype `Object.prototype` or null, no `toJSON`. */
function isPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
