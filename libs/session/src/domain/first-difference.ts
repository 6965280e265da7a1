/**
 * Where a resent event's content first differs from the stored one's, so that a 409
 * `duplicate_event_id` names the field to fix (docs/http-api.md "Ids and retries": content is compared as
 * stored, field by field as text). Pure.
 */

/** The first field (in the stored event's field order, then the sent one's) whose value differs. */
export interface FieldDifference {
  /** Its path under the event in native terms, e.g. `name`, `responses[0].name`, `toolCalls[1].arguments`. */
  path: string;
  /** Whether the stored event has the field. */
  stored: boolean;
  /** Whether the sent event has it. */
  sent: boolean;
}

/**
 * The first field where `sent` differs from `stored` (two native events, JSON values; a field
 * whose value is `undefined` counts as absent, as in JSON), or undefined when they are equal.
 * Objects are compared key by key (the stored event's keys first, in order, then the sent one's
 * other keys), arrays index by index, other values with `===`.
 */
export function firstDifference(stored: unknown, sent: unknown): FieldDifference | undefined {
  return differenceAt(JSON.parse(JSON.stringify(stored ?? null)) as unknown, JSON.parse(JSON.stringify(sent ?? null)) as unknown, '');
}

function differenceAt(stored: unknown, sent: unknown, path: string): FieldDifference | undefined {
  const at = (key: string | number) => (typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`);
  if (Array.isArray(stored) && Array.isArray(sent)) {
    for (let i = 0; i < Math.max(stored.length, sent.length); i++) {
      if (i >= stored.length || i >= sent.length) return { path: at(i), stored: i < stored.length, sent: i < sent.length };
      const found = differenceAt(stored[i], sent[i], at(i));
      if (found) return found;
    }
    return undefined;
  }
  if (isRecord(stored) && isRecord(sent)) {
    for (const key of new Set([...Object.keys(stored), ...Object.keys(sent)])) {
      const [has, sends] = [Object.hasOwn(stored, key), Object.hasOwn(sent, key)];
      if (!has || !sends) return { path: at(key), stored: has, sent: sends };
      const found = differenceAt(stored[key], sent[key], at(key));
      if (found) return found;
    }
    return undefined;
  }
  return stored === sent ? undefined : { path: path === '' ? '(event)' : path, stored: true, sent: true };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
