/**
 * Path parameters through the typed client and a real service (newcomer ncapi66 F3): an id is
 * read back by the service as the same id, in its own route (a session id the service takes is
 * written and read under it; one it does not take is answered by the route's own 400
 * `invalid_session_id`, a compaction id it does not know by 404 `compaction_not_found`, never
 * `route_not_found` nor another session), and `''`, `.` and `..`, which the URL would not carry so,
 * are refused by the client before anything is sent (they read session "window"'s summary as a
 * window, and sent DELETE to `/v1/`).
 */
import type { Middleware } from '@lib/client';
import { startListeningService, type ClientHarness } from '../support/client-harness';

jest.setTimeout(60_000);

describe('typed client path parameters against the service', () => {
  let harness: ClientHarness;
  const requests: string[] = [];
  const counting: Middleware = {
    onRequest({ request }) {
      requests.push(`${request.method} ${new URL(request.url).pathname}`);
    },
  };
  const client = () => {
    const c = harness.client();
    c.use(counting);
    return c;
  };

  beforeAll(async () => {
    harness = await startListeningService();
  });
  afterAll(async () => {
    await harness?.stop();
  });
  beforeEach(() => {
    requests.length = 0;
  });

  it.each(['...', '.a', 'a.', 'a..b', '.-_', 'user@example.com:42'])('writes and reads session %j under that id', async (sessionId) => {
    const c = client();
    const write = await c.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId } },
      body: { events: [{ type: 'user', text: `hi ${sessionId}` }] },
    });
    expect(write.error).toBeUndefined();
    const { data, error } = await c.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId } } });
    expect(error).toBeUndefined();
    expect(data && !('messages' in data) ? { sessionId: data.sessionId, texts: data.events.map((e) => ('text' in e ? e.text : null)) } : data).toEqual({
      sessionId,
      texts: [`hi ${sessionId}`],
    });
    const summary = await c.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId } } });
    expect(summary.data?.sessionId).toBe(sessionId);
  });

  it.each(['a b', ' ', '%', '100%', '%2E', '%2e%2e', 'a/b', '/', '../window', 'a\\b', 'a?b#c', 'café', '会话', '😀', '{sessionId}', 'x'.repeat(129)])(
    'sends session id %j to its route, which answers 400 invalid_session_id',
    async (sessionId) => {
      const c = client();
      const window = await c.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId } } });
      expect({ status: window.response.status, code: window.error?.code }).toEqual({ status: 400, code: 'invalid_session_id' });
      const erase = await c.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } });
      expect({ status: erase.response.status, code: erase.error?.code }).toEqual({ status: 400, code: 'invalid_session_id' });
      expect(requests).toHaveLength(2);
    },
  );

  it('sends a compaction id that is no UUID to its route, which answers 404 compaction_not_found', async () => {
    const c = client();
    await c.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 'has-compactions' } }, body: { events: [{ type: 'user', text: 'Hi' }] } });
    for (const compactionId of ['a b', '%', '%2E', 'a/b', '../..', 'café', '😀']) {
      const { response, error } = await c.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
        params: { path: { sessionId: 'has-compactions', compactionId } },
      });
      expect({ compactionId, status: response.status, code: error?.code }).toEqual({ compactionId, status: 404, code: 'compaction_not_found' });
    }
  });

  it('refuses "", "." and ".." before sending anything, on every route they were tried on (session "window" exists)', async () => {
    const c = client();
    await c.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 'window' } }, body: { events: [{ type: 'user', text: 'not a window' }] } });
    requests.length = 0;
    for (const sessionId of ['', '.', '..']) {
      await expect(c.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId } } })).rejects.toThrow(/^path parameter "sessionId": /);
      await expect(c.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } })).rejects.toThrow(/^path parameter "sessionId": /);
      await expect(
        c.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: { sessionId: 'window', compactionId: sessionId } } }),
      ).rejects.toThrow(/^path parameter "compactionId": /);
    }
    expect(requests).toEqual([]);
    const summary = await c.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId: 'window' } } });
    expect(summary.data?.sessionId).toBe('window'); // not erased by `..` on DELETE
  });
});
