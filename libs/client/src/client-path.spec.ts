/**
 * The typed client sends a path parameter as one path segment that the service reads back as the
 * same id, or refuses it before anything is sent (newcomer ncapi66 F3: `sessionId: '.'` read
 * `/v1/sessions/window`, session "window"'s summary typed as a window; `..` on DELETE went to
 * `/v1/`; `''` gave `/v1/sessions//window`, 404 `route_not_found`).
 */
import fc from 'fast-check';
import { createSessionServiceClient, type SessionServiceClient } from './index';

/** A client whose requests are recorded (method and URL) and answered 200 `{}` without a network. */
function recordingClient() {
  const sent: Array<{ method: string; url: URL }> = [];
  const client = createSessionServiceClient('http://service.test/', {
    fetch: (request: Request) => {
      sent.push({ method: request.method, url: new URL(request.url) });
      return Promise.resolve(new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } }));
    },
  });
  return { client, sent };
}

const UUID = '0b7c6a52-3f1e-4d4b-9a51-2f6f3f0c9e11';

/** Calls of several routes and methods; `id` is the value given to the parameter `name`, the other one a valid id. */
const calls = [
  { method: 'GET', path: '/v1/sessions/{sessionId}/window', name: 'sessionId' },
  { method: 'DELETE', path: '/v1/sessions/{sessionId}', name: 'sessionId' },
  { method: 'POST', path: '/v1/sessions/{sessionId}/events', name: 'sessionId', body: { events: [{ type: 'user', text: 'Hi' }] } },
  { method: 'POST', path: '/v1/sessions/{sessionId}/compactions', name: 'sessionId', body: { strategy: { type: 'turn-window' } } },
  { method: 'GET', path: '/v1/sessions/{sessionId}/compactions/{compactionId}', name: 'sessionId', other: { compactionId: UUID } },
  { method: 'GET', path: '/v1/sessions/{sessionId}/compactions/{compactionId}', name: 'compactionId', other: { sessionId: 's1' } },
] as const;
type Call = (typeof calls)[number];

/** Sends `call` with `id` as its parameter `name`, through the client's method of that name. */
function send(client: SessionServiceClient, call: Call, id: unknown): Promise<unknown> {
  const method = client[call.method] as (path: string, init: object) => Promise<unknown>;
  return method(call.path, { params: { path: { ...('other' in call ? call.other : {}), [call.name]: id } }, ...('body' in call ? { body: call.body } : {}) });
}

/** The path parameters `url` carries for the template `path`, percent-decoded (undefined when a literal segment differs or the counts do). */
function readBack(path: string, url: URL): Record<string, string> | undefined {
  const template = path.split('/');
  const segments = url.pathname.split('/');
  if (segments.length !== template.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of template.entries()) {
    if (/^\{\w+\}$/.test(part)) params[part.slice(1, -1)] = decodeURIComponent(segments[i]);
    else if (part !== segments[i]) return undefined;
  }
  return params;
}

describe('typed client path parameters', () => {
  describe.each(calls)('$method $path, $name', (call) => {
    it.each([
      ['empty', '', /is empty: the path would have an empty segment/],
      [
        '"."',
        '.',
        /"\." cannot be sent: URLs resolve a "\." path segment away .*the service refuses "\." and "\.\." as session ids \(docs\/http-api\.md "Session ids"\)/,
      ],
      ['".."', '..', /"\.\." cannot be sent: URLs resolve a "\.\." path segment away/],
      ['a lone surrogate', 'a\uD800b', /contains a lone UTF-16 surrogate/],
      ['undefined', undefined, /is undefined; pass the id/],
      ['null', null, /is null; pass the id/],
      ['an array', ['a', 'b'], /an array cannot be sent/],
      ['an object', { id: 'a' }, /an object cannot be sent/],
    ])('refuses %s with a TypeError naming the parameter, sending nothing', async (_kind, value, message) => {
      const { client, sent } = recordingClient();
      const answer = send(client, call, value);
      await expect(answer).rejects.toThrow(TypeError);
      await expect(answer).rejects.toThrow(new RegExp(`^path parameter "${call.name}": ${message.source}`));
      expect(sent).toHaveLength(0);
    });
  });

  it('refuses a path parameter left out, and checks request() and the GET of a text route too', async () => {
    const { client, sent } = recordingClient();
    await expect((client.GET as (path: string) => Promise<unknown>)('/v1/sessions/{sessionId}/window')).rejects.toThrow(
      /^path parameter "sessionId": is undefined/,
    );
    await expect(client.request('get', '/v1/sessions/{sessionId}/window', { params: { path: { sessionId: '..' } } })).rejects.toThrow(
      /^path parameter "sessionId": "\.\." cannot be sent/,
    );
    expect(sent).toHaveLength(0);
    await client.GET('/metrics');
    await client.request('get', '/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 's1' } } });
    expect(sent.map((s) => s.url.pathname)).toEqual(['/metrics', '/v1/sessions/s1/window']);
  });

  it.each([
    'session-1',
    '...',
    '.a',
    'a.',
    'a..b',
    'user@example.com:42_x-y',
    '%2E',
    '%2e%2e',
    '%',
    '100%',
    'a b',
    ' ',
    'a/b',
    '/',
    '../x',
    './',
    'a\\b',
    'a?b#c',
    'tab\there\nline',
    'café',
    '会话',
    '😀',
    '{sessionId}',
  ])('sends %j as one path segment that reads back as the same id, on every route', async (id) => {
    const { client, sent } = recordingClient();
    for (const call of calls) await send(client, call, id);
    expect(sent.map(({ method, url }, i) => ({ method, params: readBack(calls[i].path, url) }))).toEqual(
      calls.map((call) => ({ method: call.method, params: { ...('other' in call ? call.other : {}), [call.name]: id } })),
    );
  });

  it('sends any well-formed text but "", "." and ".." as one segment that reads back as the same id (property)', async () => {
    const { client, sent } = recordingClient();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1 }).filter((s) => s !== '.' && s !== '..'),
        async (sessionId) => {
          sent.length = 0;
          await client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId } } });
          expect(readBack('/v1/sessions/{sessionId}/window', sent[0].url)).toEqual({ sessionId });
        },
      ),
      { numRuns: 200 },
    );
  });
});
