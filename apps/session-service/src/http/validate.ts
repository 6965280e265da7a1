/**
 * Runs a zod schema and turns its first issue into an {@link InvalidRequestError} whose
 * `parameter` is the JSON path of the offending field (e.g. `events[2].text`).
 */
import type { z } from 'zod';
import { InvalidRequestError } from '@lib/session';

/** `['events', 2, 'text']` → `events[2].text`. */
export function jsonPath(prefix: string, path: ReadonlyArray<PropertyKey>): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(body)';
}

/**
 * Parses `value` with `schema`.
 * @throws InvalidRequestError (400, code `validation_failed`) naming the first invalid field.
 */
export function validate<T extends z.ZodType>(schema: T, value: unknown, prefix = ''): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  let path = issue.path;
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys: string[] }).keys;
    path = [...issue.path, keys[0]];
    message = `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(k)).join(', ')}: remove ${keys.length > 1 ? 'them' : 'it'}`;
  }
  if (issue.code === 'invalid_type' && / received undefined$/.test(message)) message = 'is required';
  if (path.length === 0 && !prefix && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new InvalidRequestError('(body)', 'the request body must be a JSON object (see /docs for its fields)', 'validation_failed');
  }
  const where = jsonPath(prefix, path);
  throw new InvalidRequestError(where, `${where}: ${message}`, 'validation_failed');
}
