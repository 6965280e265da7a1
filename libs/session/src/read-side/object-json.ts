import { knownJsonText } from '@lib/event-store';

/**
 * `JSON.stringify(value)` for a plain object some of whose members' JSON the caller already has
 * (`known`: member name → `JSON.stringify(value[name])`, e.g. an event's payload and costs the
 * projector also writes on their own), so that their text is not serialised a second time. The
 * result is the same string `JSON.stringify(value)` gives: members in `Object.keys` order, those
 * whose value serialises to nothing (undefined, a function, a symbol) left out. Anything but a
 * plain object (`null` or `Object.prototype` as its prototype) without `toJSON` is serialised by
 * `JSON.stringify` itself. A member whose text was remembered when it was first serialized
 * (`knownJsonText`: a request's metadata, serialized when it was validated) is not serialized again.
 *
 * @param known texts that must equal `JSON.stringify(value[name])` for each name (not checked).
 * @throws TypeError as `JSON.stringify` does (a bigint, a cycle).
 */
export function objectJson(value: unknown, known: Readonly<Record<string, string>>): string {
  if (!isPlainObject(value)) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(record)) {
    // undefined for a member JSON leaves out (undefined, a function, a symbol), whatever the typings say
    const member: string | undefined = Object.prototype.hasOwnProperty.call(known, key)
      ? known[key]
      : (knownJsonText(record[key]) ?? JSON.stringify(record[key]));
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
