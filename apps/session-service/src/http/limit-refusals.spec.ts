/**
 * ncnoisy A3: every refusal over a size or count limit names the limit, what sets it (its
 * environment variable, or that it is fixed) and how to stay under it, as the 413 over
 * MAX_BODY_BYTES does. The expected texts are written out here, not built by the code under test.
 */
import { requestSchemas } from './request-schemas';

const schemas = requestSchemas({ maxEventsPerRequest: 3, maxTextLength: 10 });

/** The messages of the issues `schema` finds in `input`, as `path: message`. */
function refusals(
  schema: { safeParse(input: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } },
  input: unknown,
): string[] {
  const result = schema.safeParse(input);
  expect(result.success).toBe(false);
  return (result.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`);
}

const user = (id: string, text = 'hi') => ({ id, type: 'user', text });

describe('size and count refusals', () => {
  it('events per request: the figure, MAX_EVENTS_PER_REQUEST and splitting into requests', () => {
    expect(refusals(schemas.appendEvents, { events: [user('a'), user('b'), user('c'), user('d')] })).toEqual([
      'events: at most 3 events per request, the limit set by MAX_EVENTS_PER_REQUEST: split the events into several requests, in order',
    ]);
  });

  it('messages per request: the same, for messages', () => {
    const messages = Array.from({ length: 4 }, () => ({ role: 'user', content: 'hi' }));
    expect(refusals(schemas.appendMessages, { messages })).toEqual([
      'messages: at most 3 messages per request, the limit set by MAX_EVENTS_PER_REQUEST: split the messages into several requests, in order',
    ]);
  });

  it('a text: the figure in characters, MAX_TEXT_LENGTH and how to shorten it', () => {
    expect(refusals(schemas.appendEvents, { events: [user('a', 'x'.repeat(11))] })).toEqual([
      'events.0.text: is longer than 10 characters (Unicode code points), the limit set by MAX_TEXT_LENGTH: shorten it, or split a long text across several events',
    ]);
  });

  it('metadata: its fixed size and depth, and what to do', () => {
    expect(refusals(schemas.appendEvents, { events: [{ ...user('a'), metadata: { blob: 'x'.repeat(65_536) } }] })).toEqual([
      'events.0.metadata: is larger than 65536 characters (Unicode code points) of JSON, a fixed limit: keep large data elsewhere and put a reference to it in metadata',
    ]);
    let deep: unknown = 1;
    for (let i = 0; i < 17; i++) deep = { a: deep };
    expect(refusals(schemas.appendEvents, { events: [{ ...user('a'), metadata: deep }] })).toEqual([
      'events.0.metadata: nests deeper than 16 levels, a fixed limit: flatten it',
    ]);
  });

  it("recall's q: its fixed length and word count, and how to search instead", () => {
    expect(refusals(schemas.recallQuery, { q: 'a'.repeat(1001) })).toEqual([
      'q: must be at most 1000 characters (Unicode code points), a fixed limit: search with fewer or shorter words',
    ]);
  });
});
