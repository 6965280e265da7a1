/**
 * `createSessionServiceClient(url, { headers, apiKey })` sends `headers` in every `HeadersInit`
 * form openapi-fetch's type accepts (a plain object, a `Headers` instance, `[name, value]` pairs),
 * with the API key's `Authorization` beside them (ncsdk repro 08: only a plain object reached the
 * server, the other forms were spread as a record and silently dropped).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSessionServiceClient, type SessionServiceClientOptions } from './index';

describe('createSessionServiceClient headers', () => {
  let server: http.Server;
  let base: string;
  const seen: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
  });

  const forms: Array<[string, NonNullable<SessionServiceClientOptions['headers']>]> = [
    ['a plain object', { 'X-Trace-Id': 'trace-1', 'x-tag': ['a', 'b'] }],
    [
      'a Headers instance',
      new Headers([
        ['X-Trace-Id', 'trace-1'],
        ['x-tag', 'a'],
        ['x-tag', 'b'],
      ]),
    ],
    [
      '[name, value] pairs',
      [
        ['X-Trace-Id', 'trace-1'],
        ['x-tag', 'a'],
        ['x-tag', 'b'],
      ],
    ],
  ];

  it.each(forms)('sends headers given as %s, and the API key', async (_form, headers) => {
    const { response } = await createSessionServiceClient(`${base}/`, { headers, apiKey: 'key-1' }).GET('/health');
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect({ trace: seen[0]['x-trace-id'], tag: seen[0]['x-tag'], auth: seen[0].authorization }).toEqual({
      trace: 'trace-1',
      tag: 'a, b',
      auth: 'Bearer key-1',
    });
  });

  it('sends no Authorization for an undefined or empty apiKey (process.env.API_KEY unset), and the key replaces one in headers', async () => {
    await createSessionServiceClient(base, { apiKey: undefined }).GET('/health');
    await createSessionServiceClient(base, { apiKey: '' }).GET('/health');
    await createSessionServiceClient(base, { headers: [['Authorization', 'Bearer old']], apiKey: 'new' }).GET('/health');
    expect(seen.map((h) => h.authorization)).toEqual([undefined, undefined, 'Bearer new']);
  });

  it('leaves out a plain object header whose value is undefined or null', async () => {
    await createSessionServiceClient(base, { headers: { 'x-a': undefined, 'x-b': null, 'x-c': 1 } }).GET('/health');
    expect([seen[0]['x-a'], seen[0]['x-b'], seen[0]['x-c']]).toEqual([undefined, undefined, '1']);
  });
});
