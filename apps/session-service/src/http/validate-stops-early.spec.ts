/**
 * A body of many small invalid objects is refused at a cost bounded by its first invalid element,
 * not by the body (newcomer ncverify53): zod's issues and the error map's calls are counted, never timed.
 */
import { z } from 'zod';
import { requestSchemas } from './request-schemas';
import { parseStoppingEarly, validate } from './validate';

const schemas = requestSchemas({ maxEventsPerRequest: 1000, maxTextLength: 100_000 });
const many = <T>(n: number, item: T): T[] => Array.from({ length: n }, () => item);
/** The message `validate` refuses `body` with. */
const refusal = (schema: z.ZodType, body: unknown) => {
  try {
    validate(schema, body);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('accepted');
};

describe('validate stops at the first invalid element', () => {
  it('calls an error map a bounded number of times for 1000 events of 1024 invalid parts', () => {
    let calls = 0;
    const part = z.string({ error: () => (calls++, 'must be a string') });
    const schema = z.strictObject({ events: z.array(z.strictObject({ type: z.literal('user'), textParts: z.array(part) })) });
    const body = { events: many(1000, { type: 'user', textParts: many(1024, {}) }) };
    expect(refusal(schema, body)).toBe('events[0].textParts[0]: must be a string');
    expect(calls).toBeLessThanOrEqual(300);
  });

  it.each([
    ['textParts', { type: 'user', text: 'x', textParts: many(1024, {}) }, 'events[0].textParts[0]: must be a string'],
    ['toolCalls', { type: 'assistant', text: 'x', toolCalls: many(128, {}) }, 'events[0].toolCalls[0].id: is required'],
    ['responses', { type: 'tool', responses: many(128, {}) }, 'events[0].responses[0].toolCallId: is required'],
  ])('refuses 1000 events of invalid %s with the first one, from a few issues', (_, event, message) => {
    const body = { events: many(1000, event) };
    const parsed = parseStoppingEarly(schemas.appendEvents, body);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.length).toBeLessThanOrEqual(300);
    expect(refusal(schemas.appendEvents, body)).toBe(message);
  });

  it('keeps the hint that reads the other issues of the object (missing fields, unknown keys)', () => {
    const body = { events: [{ type: 'user', text: 'a' }, { type: 'user', txt: 'b' }, ...many(100, { type: 'user' })] };
    expect(refusal(schemas.appendEvents, body)).toMatch(/^events\[1\]\.text: is required.*"txt"/);
  });

  it('answers a valid body as safeParse does', () => {
    const body = { events: [{ type: 'user', text: 'a', textParts: ['a'] }], expectedRevision: '3' };
    expect(parseStoppingEarly(schemas.appendEvents, body)).toEqual(schemas.appendEvents.safeParse(body));
  });
});
