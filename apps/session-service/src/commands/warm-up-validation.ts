/**
 * Validation warmed up at start-up: the first parse of a body by a freshly built schema set costs
 * ~8–10 ms of the event loop more than any later one (zod builds its lazily computed parts and V8
 * compiles the parse code on first use), and that fell in the middle of the first append a service
 * answered: with a maximum-size text, on top of the ~2 ms its validation costs, in one stretch.
 */
import type { RequestSchemas } from '../http/request-schemas';
import { appendEventsCommandFrom } from './session-command-requests';

/** An `/events` body with one valid event of each type and every optional field the checks read: parsing it runs each branch of the schema once. */
export const WARM_UP_APPEND_BODY = {
  expectedRevision: 'any',
  userId: 'warm-up',
  events: [
    { type: 'user', id: 'u1', text: 'hello', createdAt: '2026-01-01T00:00:00Z', metadata: { k: 1 }, name: 'n', textParts: ['hel', 'lo'] },
    { type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] },
    { type: 'tool', responses: [{ toolCallId: 'c1', name: 'f', data: 'ok' }] },
    { type: 'system', text: 'be brief', notice: false },
    { type: 'summary', shadowPrompt: 'Earlier:', text: 'a summary' },
  ],
} as const;

/**
 * Parses {@link WARM_UP_APPEND_BODY} with `schemas` (the append route's whole check, as a request
 * runs it), so that the first real request does not pay for the first use of its validation code.
 * Pure (builds a command and drops it); ~15 ms, at start-up. Never throws: returns whether the
 * body passed (false only under limits too small for it, e.g. `MAX_TEXT_LENGTH` under 9 or
 * `MAX_EVENTS_PER_REQUEST` under 5: the code was warmed up all the same, up to the refusal).
 */
export function warmUpValidation(schemas: RequestSchemas): boolean {
  try {
    appendEventsCommandFrom(schemas, 'warm-up', 'warm-up', WARM_UP_APPEND_BODY);
    return true;
  } catch {
    return false;
  }
}
