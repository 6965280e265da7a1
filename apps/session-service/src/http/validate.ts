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
  const emptyParts = emptyTextPartsAt(value, path);
  if (emptyParts) {
    const where = jsonPath(prefix, emptyParts.path);
    throw new InvalidRequestError(where, `${where}: ${emptyParts.message}`, 'validation_failed');
  }
  const where = jsonPath(prefix, path);
  throw new InvalidRequestError(where, `${where}: ${message}`, 'validation_failed');
}

/**
 * When an issue says an event has no text (`…text` missing or empty, or an assistant event with
 * nothing to say) and the caller sent the text as parts that are all empty, the issue is in the
 * parts: the path of the first part (`events[0].textParts[0]`) and what to do; else null.
 */
function emptyTextPartsAt(value: unknown, issuePath: ReadonlyArray<PropertyKey>): { path: PropertyKey[]; message: string } | null {
  const eventPath = issuePath[issuePath.length - 1] === 'text' ? issuePath.slice(0, -1) : issuePath;
  let event: unknown = value;
  for (const key of eventPath) event = event !== null && typeof event === 'object' ? (event as Record<PropertyKey, unknown>)[key] : undefined;
  if (event === null || typeof event !== 'object') return null;
  const { type, text, textParts, toolCalls, refusal } = event as Record<string, unknown>;
  if (!Array.isArray(textParts) || textParts.length === 0 || !textParts.every((p) => p === '') || (text !== undefined && text !== '')) return null;
  const path = [...eventPath, 'textParts', 0];
  if (type === 'user' || type === 'system') {
    return {
      path,
      message: 'the text parts are all empty: send some text in them (text, when sent, is their concatenation; user and system events need text)',
    };
  }
  if (type === 'assistant' && (!Array.isArray(toolCalls) || toolCalls.length === 0) && refusal === undefined) {
    return { path, message: 'the text parts are all empty: send some text in them, or a tool call or a refusal (then leave the text parts out)' };
  }
  return null;
}
