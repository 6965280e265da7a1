/**
 * `DATABASE_URL` asking for SSL (`sslmode=require`) of a server without it (nck8s F5), with a stand-in server that
 * answers PostgreSQL's SSLRequest with `N` (no SSL), as a PostgreSQL without SSL does: `/health` `store.error` names
 * DATABASE_URL and the fix (not the driver's bare `The server does not support SSL connections`), and with
 * `LOG_FORMAT=json` every line the process writes is JSON (the driver's multi-line SECURITY WARNING included).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { call, spawnService, type ServiceProcess } from '../support/service-process';

jest.setTimeout(120_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DATABASE_URL with sslmode=require against a server without SSL', () => {
  let server: net.Server;
  let svc: ServiceProcess | undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssl-refused-'));
  beforeAll(async () => {
    // Every connection: the 8-byte SSLRequest is answered 'N' (no SSL), then the connection is left to the client.
    server = net.createServer((socket) => {
      socket.once('data', () => socket.write('N'));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await svc?.kill();
    server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('names DATABASE_URL and the fix in /health store.error, and writes nothing but JSON lines', async () => {
    const { port } = server.address() as net.AddressInfo;
    const url = `postgres://app:S3cretPW@127.0.0.1:${port}/events?sslmode=require`;
    svc = await spawnService({ dataDir, env: { DATABASE_URL: url, LOG_FORMAT: 'json', LOG_LEVEL: 'warn' } });
    let error: string | null = null;
    for (let i = 0; i < 100 && !error; i++) {
      error = ((await call(svc.url, 'GET', '/health')).body as { store: { error: string | null } }).store.error;
      if (!error) await sleep(100);
    }
    expect(error).toBe(
      `PostgreSQL event store: DATABASE_URL=postgres://app:***@127.0.0.1:${port}/events?sslmode=require: the server does not support SSL connections, and DATABASE_URL asks for SSL (sslmode or ssl): enable SSL on the PostgreSQL server, or remove sslmode/ssl from DATABASE_URL (a server on a trusted network) and restart the service; it retries meanwhile`,
    );
    await svc.stop();
    const lines = (svc.stdout() + svc.stderr()).split('\n').filter((line) => line.trim() !== '');
    const notJson = lines.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    expect(svc.stdout()).toMatch(/"level":40,[^\n]*"msg":"Warning: SECURITY WARNING: The SSL modes 'prefer', 'require', and 'verify-ca'/);
    expect(svc.stdout() + svc.stderr()).not.toContain('S3cretPW');
  });
});
