import { createServer } from 'node:http';
import { FETCH_BLOCKED_PORTS, fetchBlockedPort } from './fetch-blocked-port';

/** The message of the innermost cause of `fetch`'s rejection for `url` (it never connects to a blocked port). */
async function fetchFailure(url: string): Promise<string> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return `answered ${response.status}`;
  } catch (err) {
    let e: unknown = err;
    while (typeof e === 'object' && e !== null && (e as { cause?: unknown }).cause !== undefined) e = (e as { cause: unknown }).cause;
    // jest's realm: the error is not `instanceof Error` here
    return typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string' ? (e as { message: string }).message : String(e);
  }
}

describe('fetchBlockedPort: the ports Node’s fetch refuses', () => {
  it('lists exactly ports Node’s fetch refuses with "bad port", without connecting', async () => {
    for (const port of FETCH_BLOCKED_PORTS) expect([port, await fetchFailure(`http://127.0.0.1:${port}/v1`)]).toEqual([port, 'bad port']);
  });

  it('does not list a port fetch connects to', async () => {
    const server = createServer((_request, response) => response.writeHead(204).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      expect(fetchBlockedPort(new URL(`http://127.0.0.1:${port}/v1`))).toBeUndefined();
      expect(await fetchFailure(`http://127.0.0.1:${port}/v1`)).toBe('answered 204');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('names the port of a URL on a blocked port; a scheme’s default port never is', () => {
    expect(fetchBlockedPort(new URL('http://127.0.0.1:4190/v1'))).toBe(4190);
    expect(fetchBlockedPort(new URL('https://llm.internal:6000/v1?api-version=1'))).toBe(6000);
    expect(fetchBlockedPort(new URL('http://llm.internal/v1'))).toBeUndefined();
    expect(fetchBlockedPort(new URL('https://llm.internal:443/v1'))).toBeUndefined();
    expect(fetchBlockedPort(new URL('http://llm.internal:8080/v1'))).toBeUndefined();
  });
});
