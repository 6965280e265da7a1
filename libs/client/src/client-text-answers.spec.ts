/**
 * `client.GET('/metrics')` answers the Prometheus text as `data` (newcomer ncfleet54: it threw
 * `SyntaxError: … "# HELP htt"… is not valid JSON`, openapi-fetch reading every answer as JSON,
 * though the generated type says `text/plain`); a call's own `parseAs` still wins, and JSON routes
 * are read as JSON.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSessionServiceClient } from './index';

describe('text answers of the typed client', () => {
  let server: http.Server;
  let base: string;
  const METRICS = '# HELP session_service_build_info build\nsession_service_build_info{version="0.1.0"} 1\n';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(METRICS);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"status":"ok"}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('given GET /metrics without parseAs, then data is the Prometheus text', async () => {
    const { data, error } = await createSessionServiceClient(base).GET('/metrics');
    expect(error).toBeUndefined();
    expect(data).toBe(METRICS);
  });

  it("given a call's own parseAs, then it is used", async () => {
    const { data } = await createSessionServiceClient(base).GET('/metrics', { parseAs: 'arrayBuffer' });
    expect(Buffer.from(data as unknown as ArrayBuffer).toString('utf8')).toBe(METRICS);
  });

  it('given a JSON route, then data is parsed JSON as before', async () => {
    const { data } = await createSessionServiceClient(base).GET('/health');
    expect(data).toEqual({ status: 'ok' });
  });
});
