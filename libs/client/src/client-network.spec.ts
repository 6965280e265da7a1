/**
 * A call that gets no HTTP answer rejects, as the client's README says (newcomer ncsdkuser F6:
 * the docs only promised `{ data, error, response }`, and an agent loop written from them crashed
 * on `TypeError: fetch failed` while the service restarted); one that gets an answer, a 503 too,
 * resolves with `error`.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSessionServiceClient } from './index';

/** A port nothing listens on: one a server had, closed. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('typed client: network failures', () => {
  it('rejects with fetch\'s TypeError "fetch failed" (cause ECONNREFUSED) when nothing listens', async () => {
    const client = createSessionServiceClient(`http://127.0.0.1:${await closedPort()}`);
    const call = client.GET('/v1/sessions', { params: { query: { limit: 1 } } });
    // (its TypeError is Node's, of another realm than jest's sandbox: compared by name)
    await expect(call).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it('rejects when the connection closes without an answer (ECONNRESET or "other side closed")', async () => {
    const server = http.createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = createSessionServiceClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await expect(client.GET('/health')).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('rejects with undici\'s TypeError "terminated" (cause UND_ERR_SOCKET) when the connection breaks while the answer\'s body arrives', async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"status":"o', () => setTimeout(() => req.socket.destroy(), 20));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = createSessionServiceClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await expect(client.GET('/health')).rejects.toMatchObject({ name: 'TypeError', message: 'terminated', cause: { code: 'UND_ERR_SOCKET' } });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('resolves with a typed error, not a rejection, for an HTTP answer such as 503 shutting_down', async () => {
    const body = { code: 'shutting_down', message: 'the service is shutting down' };
    const client = createSessionServiceClient('http://service.test', {
      fetch: () => Promise.resolve(new Response(JSON.stringify(body), { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '1' } })),
    });
    const { data, error, response } = await client.GET('/v1/sessions', {});
    expect(data).toBeUndefined();
    expect(error).toEqual(body);
    expect(response.status).toBe(503);
  });
});
