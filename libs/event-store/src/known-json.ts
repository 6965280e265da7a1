/**
 * JSON texts already made for values that do not change afterwards, so that a large value is
 * serialized once on its way from a request to the log and the read models, not once per step
 * (newcomer: an append of 80 events of 6,000 metadata keys each was serialized by the metadata
 * check, by the store's append and by the projector). Whoever made `JSON.stringify(value)` for a
 * value it will not change (validation, for a request's metadata) remembers it here; the steps that
 * serialize something holding it (the store's {@link prepareAppend}, the projector's event JSON)
 * splice the text in instead of serializing the value again. Held weakly: a value no longer used is
 * collected with its text.
 */

import { freezeShared } from './shared-value-freeze';

/** What is known of a remembered value: its JSON text, and how many UTF-16 code units its strings hold when that was counted. */
interface Known {
  text: string;
  stringUnits?: number;
}

const KNOWN = new WeakMap<object, Known>();

/**
 * Remembers `text`, which must be `JSON.stringify(value)`, for `value`, an object or array that is not
 * changed from then on (a change would leave the text stale: every later serialization through
 * {@link jsonText} would write the old one); and `stringUnits`, when given: the UTF-16 code units
 * of the strings `value` holds at any depth, keys left out ({@link knownStringUnits}). Not checked
 * in production; frozen in test runs ({@link freezeShared}).
 */
export function rememberJsonText(value: object, text: string, stringUnits?: number): void {
  freezeShared(value);
  KNOWN.set(value, stringUnits === undefined ? { text } : { text, stringUnits });
}

/** The text {@link rememberJsonText} remembered for `value`, or undefined (never for a primitive). */
export function knownJsonText(value: unknown): string | undefined {
  return value !== null && typeof value === 'object' ? KNOWN.get(value)?.text : undefined;
}

/**
 * The UTF-16 code units of the strings `value` holds (keys left out), as {@link rememberJsonText}
 * remembered them, or undefined: so that a reader adding up the text of an event (the projector,
 * choosing the thread that projects a batch) need not walk its metadata again.
 */
export function knownStringUnits(value: unknown): number | undefined {
  return value !== null && typeof value === 'object' ? KNOWN.get(value)?.stringUnits : undefined;
}

/**
 * `JSON.stringify(value)` (the same string, undefined where it gives undefined), with the remembered
 * text ({@link knownJsonText}) of `value` itself or of a member of it, when `value` is a plain object
 * (prototype `Object.prototype` or null, no `toJSON`): its members in `Object.keys` order, those that
 * serialize to nothing (undefined, a function, a symbol) left out. Only one level is looked at: a
 * remembered value deeper down is serialized again.
 * @throws TypeError as `JSON.stringify` does (a bigint, a cycle).
 */
export function jsonText(value: unknown): string | undefined {
  const known = knownJsonText(value);
  if (known !== undefined) return known;
  if (!isPlainObject(value)) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (!keys.some((key) => knownJsonText(record[key]) !== undefined)) return JSON.stringify(value);
  let out = '{';
  for (const key of keys) {
    const member = record[key];
    // undefined for a member JSON leaves out (undefined, a function, a symbol), whatever the typings say
    const text: string | undefined = knownJsonText(member) ?? JSON.stringify(member);
    if (text === undefined) continue;
    if (out.length > 1) out += ',';
    out += JSON.stringify(key) + ':' + text;
  }
  return out + '}';
}

/** Whether `value` is an object JSON.stringify walks member by member: prototype `Object.prototype` or null, no `toJSON`. */
export function isPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
