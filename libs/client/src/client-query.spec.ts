/**
 * The typed client writes every query parameter it is given, or refuses it before sending
 * (newcomer nctime, F4: openapi-fetch's default wrote a `Date` passed as recall's `from` as
 * nothing, so the request went out without the filter and the answer was unfiltered).
 */
import fc from 'fast-check';
import { createSessionServiceClient } from './index';
import { TIME_QUERY_PARAMETERS } from './query-serializer';

/** A client whose requests are recorded (their URLs) and answered 200 `{"items":[]}` without a network. */
function recordingClient() {
  const urls: URL[] = [];
  const client = createSessionServiceClient('http://service.test', {
    fetch: (request: Request) => {
      urls.push(new URL(request.url));
      return Promise.resolve(new Response('{"items":[]}', { status: 200, headers: { 'content-type': 'application/json' } }));
    },
  });
  return { client, urls };
}

describe('typed client query parameters', () => {
  it('sends a Date given as recall from/to, and as the session list updatedSince, as its ISO-8601 UTC text', async () => {
    const { client, urls } = recordingClient();
    const from = new Date('2027-01-01T00:00:00+05:30');
    const to = new Date(Date.UTC(2027, 5, 1, 12, 30, 15, 250));
    await client.GET('/v1/recall', { params: { query: { q: 'ocelot', sessionId: 's1', from, to } } });
    await client.GET('/v1/sessions', { params: { query: { updatedSince: from } } });
    expect(urls[0].searchParams.get('from')).toBe(from.toISOString());
    expect(urls[0].searchParams.get('to')).toBe(to.toISOString());
    expect(urls[1].searchParams.get('updatedSince')).toBe(from.toISOString());
    expect(new Date(urls[0].searchParams.get('from')!).getTime()).toBe(from.getTime());
  });

  it('sends any valid Date as the same instant, in UTC, and strings, numbers and booleans as their text (property)', async () => {
    const { client, urls } = recordingClient();
    await fc.assert(
      fc.asyncProperty(
        fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
        fc.string({ minLength: 1 }),
        fc.integer({ min: 1, max: 100 }),
        fc.boolean(),
        async (from, q, limit, archived) => {
          urls.length = 0;
          await client.GET('/v1/recall', { params: { query: { q, from, limit, archived } } });
          const sent = urls[0].searchParams;
          expect(new Date(sent.get('from')!).getTime()).toBe(from.getTime());
          expect(sent.get('from')).toMatch(/Z$/);
          expect([sent.get('q'), sent.get('limit'), sent.get('archived')]).toEqual([q, String(limit), String(archived)]);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('leaves out undefined and null; keeps an offset "+" as %2B', async () => {
    const { client, urls } = recordingClient();
    await client.GET('/v1/recall', { params: { query: { q: 'a', from: '2026-01-01T00:00:00+05:30', to: undefined, sessionId: null } } });
    expect(urls[0].search).toBe('?q=a&from=2026-01-01T00%3A00%3A00%2B05%3A30');
  });

  it.each([
    ['an invalid Date', 'from', new Date('not a time'), /query parameter "from": the Date is invalid/],
    ['an array', 'type', ['user', 'assistant'], /query parameter "type": an array cannot be sent/],
    ['an empty array', 'type', [], /query parameter "type": an array cannot be sent/],
    ['an object', 'sessionId', {}, /query parameter "sessionId": an object cannot be sent/],
    ['text with a lone surrogate (newcomer ncapi71 F2: a bare URIError)', 'q', 'a\ud800', /query parameter "q": contains a lone UTF-16 surrogate/],
    ['text with a lone low surrogate', 'userId', '\udc00b', /query parameter "userId": contains a lone UTF-16 surrogate/],
  ])('refuses %s with a TypeError naming the parameter, sending nothing', async (_kind, name, value, message) => {
    const { client, urls } = recordingClient();
    await expect(client.GET('/v1/recall', { params: { query: { q: 'a', [name]: value } as never } })).rejects.toThrow(message);
    expect(urls).toHaveLength(0);
  });

  it('types: a Date is accepted for the time parameters only', () => {
    expect([...TIME_QUERY_PARAMETERS].sort()).toEqual(['atTime', 'from', 'to', 'updatedBefore', 'updatedSince']);
    const { client } = recordingClient();
    // Compile-time checks (tsc): a Date for `q` is refused, for `from` accepted.
    // @ts-expect-error q is text, not a time
    void client.GET('/v1/recall', { params: { query: { q: new Date() } } });
    void client.GET('/v1/recall', { params: { query: { q: 'a', from: new Date(), to: '2026-01-01T00:00:00Z' } } });
    void client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 's' }, query: { atTime: new Date() } } });
  });
});
