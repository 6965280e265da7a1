/**
 * The replay's transport under the typed client, against a scripted HTTP server: which answers it
 * retries (429, a GET's 503 projection_behind, a 503 counting_timeout), which it throws as ServiceHttpError (with the
 * service's status, code, message and body), the one-line ReplayErrors when nothing or something
 * else answers, and the API key header. About 1 s.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReplayClient, ok, probe, ServiceHttpError } from '../../apps/replay/src/service-client';
import { ReplayError } from '../../apps/replay/src/replay-error';

interface Seen {
  method: string;
  url: string;
  body: string;
  authorization?: string;
}

/** A server that answers the n-th request with `script[n]` (the last entry repeats). */
async function scripted(script: Array<{ status: number; body: unknown; headers?: Record<string, string> }>) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, authorization: req.headers.authorization });
      const answer = script[Math.min(seen.length - 1, script.length - 1)];
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const HEALTH = { status: 'ok', mode: 'open', projector: { lag: 'caught-up' }, autoCompactionsInProgress: 0 };
const APPENDED = { sessionId: 's1', revision: '0', position: '1', eventIds: ['e1'] };
const error = (code: string, message: string, extra: Record<string, unknown> = {}) => ({ code, message, ...extra });

describe('the replay client', () => {
  const servers: Array<{ close: () => Promise<void> }> = [];
  const serve = async (script: Parameters<typeof scripted>[0]) => {
    const s = await scripted(script);
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('retries a 429 (the body sent again whole) and answers the typed 2xx body; sends the API key', async () => {
    const s = await serve([
      { status: 429, body: error('rate_limited', 'slow down') },
      { status: 429, body: error('rate_limited', 'slow down') },
      { status: 201, body: APPENDED },
    ]);
    const client = createReplayClient(`${s.url}/`, 'k1');
    const messages = [{ role: 'user' as const, content: 'hello' }];
    const ack = await ok(client.POST('/v1/sessions/{sessionId}/messages', { params: { path: { sessionId: 's 1' } }, body: { messages } }));
    expect(ack.position).toBe('1');
    expect(s.seen.map((r) => [r.method, r.url, JSON.parse(r.body), r.authorization])).toEqual(
      Array.from({ length: 3 }, () => ['POST', '/v1/sessions/s%201/messages', { messages }, 'Bearer k1']),
    );
  });

  it("retries a GET's 503 projection_behind (not a POST's) and any 503 counting_timeout, but no other 503", async () => {
    const behind = { status: 503, body: error('projection_behind', 'the read models have not reached 9') };
    const get = await serve([behind, { status: 200, body: HEALTH }]);
    await expect(ok(createReplayClient(get.url).GET('/health'))).resolves.toMatchObject({ status: 'ok' });
    expect(get.seen).toHaveLength(2);

    const post = await serve([behind]);
    const refused = ok(
      createReplayClient(post.url).POST('/v1/sessions/{sessionId}/messages', { params: { path: { sessionId: 's1' } }, body: { messages: [] } }),
    );
    await expect(refused).rejects.toMatchObject({ name: 'ServiceHttpError', status: 503, code: 'projection_behind' });
    expect(post.seen).toHaveLength(1);

    // counting_timeout wrote nothing and asks for a retry: retried on any method.
    const counting = error('counting_timeout', 'counting the tokens of this request took longer than 30000 ms; nothing was written: retry shortly');
    const busy = await serve([
      { status: 503, body: counting },
      { status: 201, body: APPENDED },
    ]);
    const appended = ok(
      createReplayClient(busy.url).POST('/v1/sessions/{sessionId}/messages', { params: { path: { sessionId: 's1' } }, body: { messages: [] } }),
    );
    await expect(appended).resolves.toMatchObject({ position: '1' });
    expect(busy.seen.map((r) => r.method)).toEqual(['POST', 'POST']);

    const down = await serve([{ status: 503, body: error('store_unavailable', 'the store does not answer') }]);
    await expect(ok(createReplayClient(down.url).GET('/health'))).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(down.seen).toHaveLength(1);
  });

  it('throws any other non-2xx as ServiceHttpError: method, path without the query, status, code, one-line message, body', async () => {
    const s = await serve([{ status: 400, body: error('invalid_parameter', 'limit must be\n 1..100', { parameter: 'limit' }) }]);
    const call = ok(createReplayClient(s.url).GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 's1' }, query: { limit: '0' } } }));
    const err = (await call.catch((e: unknown) => e)) as ServiceHttpError;
    expect(err).toBeInstanceOf(ServiceHttpError);
    expect(err.isClientError).toBe(true);
    expect([err.method, err.path, err.status, err.code, err.detail, err.body?.parameter]).toEqual([
      'GET',
      '/v1/sessions/s1/events',
      400,
      'invalid_parameter',
      'limit must be 1..100',
      'limit',
    ]);
    expect(s.seen[0].url).toBe('/v1/sessions/s1/events?limit=0');
  });

  it('says in one line when the service stops answering, or when what answers is not the service or is unhealthy', async () => {
    const gone = await serve([{ status: 200, body: HEALTH }]);
    await gone.close();
    servers.splice(servers.indexOf(gone), 1);
    const call = ok(createReplayClient(gone.url).GET('/health'));
    await expect(call).rejects.toThrow(ReplayError);
    await expect(call).rejects.toThrow(new RegExp(`^the session service at ${gone.url} stopped answering \\(GET /health\\): ECONNREFUSED`));
    await expect(probe(createReplayClient(gone.url), gone.url)).rejects.toThrow(new RegExp(`^no session service answers at ${gone.url}: ECONNREFUSED`));

    const other = await serve([{ status: 200, body: '<html>hello</html>' }]);
    await expect(probe(createReplayClient(other.url), other.url)).rejects.toThrow(`${other.url} answered GET /health with 200 but is not the session service`);

    const sick = await serve([{ status: 503, body: { ...HEALTH, status: 'unavailable' } }]);
    await expect(probe(createReplayClient(sick.url), sick.url)).rejects.toThrow(`the session service at ${sick.url} is unhealthy: {"status":"unavailable"`);

    // what the service answers while its store is away: 200, saying unavailable
    const storeAway = await serve([{ status: 200, body: { ...HEALTH, status: 'unavailable' } }]);
    await expect(probe(createReplayClient(storeAway.url), storeAway.url)).rejects.toThrow(
      `the session service at ${storeAway.url} is unhealthy: {"status":"unavailable"`,
    );

    const well = await serve([{ status: 200, body: HEALTH }]);
    await expect(probe(createReplayClient(well.url), `${well.url}/`)).resolves.toEqual(HEALTH);
  });
});
