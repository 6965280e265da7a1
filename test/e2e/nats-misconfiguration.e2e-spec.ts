/**
 * What only a change of configuration fixes stays fatal at start, with a message naming `NATS_URL`
 * and the fix (a server that is down is waited for instead: nats-down-at-start.e2e-spec.ts):
 * - `NATS_URL=tls://…` against a server without TLS: the process exits 1 (`failed to start: …: the
 *   server does not offer TLS, and tls:// requires it …`) and never sends its credentials in plain
 *   text. Before, the client read `tls://` as `nats://` and connected in plain text;
 * - `tls://` against a server with TLS: the start fails while its certificate is not trusted (saying
 *   so), and works once it is (`NODE_EXTRA_CA_CERTS`; skipped without `openssl` to make one);
 * - credentials the server refuses, and a server without JetStream: the start fails, saying which;
 * - a server down at start that comes up refusing the credentials: the transport gives up (one
 *   error line, `/health` `nats.connection` `closed` with the error), HTTP keeps serving.
 *
 * Against throwaway `nats-server`s; skips with one line when no `nats-server` binary is installed.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startService, type Harness } from '../support/service-harness';
import { captureLogLines } from '../support/captured-log-lines';
import { startServiceProcess } from '../support/service-process';
import { eventually, uniquePrefix } from '../support/nats-test';
import { NATS_SERVER_BINARY, freePort, startThrowawayNats, startThrowawayNatsWith, type ThrowawayNats } from '../support/throwaway-nats';

const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS misconfiguration: no nats-server binary installed\n');

/** A TCP proxy in front of `target` (`nats://host:port`) that records every byte the clients send; resolves once it listens. */
async function recordingProxy(target: string): Promise<{ port: number; sent: () => string; close: () => Promise<void> }> {
  const { hostname, port } = new URL(target);
  const chunks: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined).on('close', () => sockets.delete(s));
    }
    client.on('data', (d: Buffer) => chunks.push(d));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    sent: () => Buffer.concat(chunks).toString('latin1'),
    close: () => {
      sockets.forEach((s) => s.destroy());
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The `openssl` binary that makes the TLS server's certificate, or undefined (that case is skipped). */
const OPENSSL = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find((p) => fs.existsSync(p));

/** A server configuration with one user, `svc` / `right-password`, and JetStream. */
const withUser = (listen: string, storeDir: string) =>
  `listen: ${listen}\nauthorization { user: svc, password: right-password }\njetstream { store_dir: ${JSON.stringify(storeDir)} }\n`;

suite('NATS misconfigurations', () => {
  jest.setTimeout(120_000);
  const servers: ThrowawayNats[] = [];
  let harness: Harness | null = null;
  let logged: string[] = [];

  beforeAll(() => {
    logged = captureLogLines();
  });

  afterAll(async () => {
    await harness?.stop();
    for (const s of servers) await s.stop();
    jest.restoreAllMocks();
  });

  it('given tls:// and a server without TLS, the service exits 1 saying so, and never sends its credentials in plain text', async () => {
    const plain = await startThrowawayNats('nats-plain');
    servers.push(plain);
    const proxy = await recordingProxy(plain.url);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-tls-'));
    const url = `tls://svc:tls-only-pw@127.0.0.1:${proxy.port}`;
    const service = startServiceProcess({ dataDir, env: { NATS_URL: url, NATS_PREFIX: uniquePrefix() } });
    try {
      const exit = await Promise.race([service.exited, service.ready.then(() => ({ code: 'started' as const, signal: null }))]);
      expect({ exit, stderr: service.stderr() }).toEqual({
        exit: { code: 1, signal: null },
        stderr: `failed to start: NATS_URL=tls://svc:***@127.0.0.1:${proxy.port}: the server does not offer TLS, and tls:// requires it (the service never connects in plain text then): enable TLS on the NATS server, or use nats:// to connect without TLS\n`,
      });
      expect(proxy.sent()).not.toContain('CONNECT');
      expect(proxy.sent()).not.toContain('tls-only-pw');
    } finally {
      await service.kill();
      await proxy.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  (OPENSSL ? it : it.skip)(
    'given tls:// and a server with TLS, the start fails while its certificate is not trusted, and works with NODE_EXTRA_CA_CERTS',
    async () => {
      const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-cert-'));
      const cert = path.join(certDir, 'cert.pem');
      const key = path.join(certDir, 'key.pem');
      // A self-signed certificate for the name the client checks: "localhost" (it upgrades the socket to TLS without naming the host, Node then checks localhost).
      const subject = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'];
      const made = spawnSync(OPENSSL!, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', ...subject]);
      expect(made.status).toBe(0);
      const server = await startThrowawayNatsWith(
        'nats-tls',
        (listen, storeDir) =>
          `listen: ${listen}\ntls { cert_file: ${JSON.stringify(cert)}, key_file: ${JSON.stringify(key)} }\njetstream { store_dir: ${JSON.stringify(storeDir)} }\n`,
        { tls: { caFile: cert } },
      );
      servers.push(server);
      const url = server.url.replace('nats://', 'tls://');
      await expect(startService({ env: { NATS_URL: url, NATS_PREFIX: uniquePrefix() } })).rejects.toThrow(
        `NATS_URL=${url}: the TLS handshake failed (self-signed certificate): make the server's certificate trusted (e.g. NODE_EXTRA_CA_CERTS=<its CA file>) and valid for the host in NATS_URL`,
      );
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-tls-ok-'));
      const prefix = uniquePrefix();
      const service = startServiceProcess({ dataDir, env: { NATS_URL: url, NATS_PREFIX: prefix, NODE_EXTRA_CA_CERTS: cert } });
      try {
        const running = await service.ready;
        const health = (await (await fetch(`${running.url}/health`)).json()) as { nats: unknown };
        expect(health.nats).toMatchObject({ connection: 'connected', error: null });
      } finally {
        await service.kill();
        fs.rmSync(dataDir, { recursive: true, force: true });
        fs.rmSync(certDir, { recursive: true, force: true });
      }
    },
  );

  it('given credentials the server refuses, the start fails naming NATS_USER and NATS_PASSWORD', async () => {
    const server = await startThrowawayNatsWith('nats-users', withUser, { user: 'svc', pass: 'right-password' });
    servers.push(server);
    await expect(
      startService({ env: { NATS_URL: server.url, NATS_USER: 'svc', NATS_PASSWORD: 'wrong-password', NATS_PREFIX: uniquePrefix() } }),
    ).rejects.toThrow(
      `NATS_URL=${server.url}: the server refused the credentials (Authorization Violation): fix NATS_USER and NATS_PASSWORD (or the user in NATS_URL) to match a user of the server's authorization or accounts block`,
    );
  });

  it('given a server without JetStream, the start fails saying so', async () => {
    const server = await startThrowawayNatsWith('nats-no-js', (listen) => `listen: ${listen}\n`);
    servers.push(server);
    await expect(startService({ env: { NATS_URL: server.url, NATS_PREFIX: uniquePrefix() } })).rejects.toThrow(
      new RegExp(`^NATS_URL=${server.url.replace(/[.]/g, '\\.')}: JetStream is not enabled for this connection \\(.*\\): enable JetStream on the server`),
    );
  });

  it('given a server down at start that comes up refusing the credentials, the transport gives up (error line, /health closed with the error), HTTP serving', async () => {
    const port = await freePort();
    harness = await startService({
      env: { NATS_URL: `nats://127.0.0.1:${port}`, NATS_USER: 'svc', NATS_PASSWORD: 'wrong-password', NATS_PREFIX: uniquePrefix() },
    });
    const h = harness;
    expect((await h.http().get('/health').expect(200)).body.nats).toMatchObject({ connection: 'connecting' });
    servers.push(await startThrowawayNatsWith('nats-users-later', withUser, { user: 'svc', pass: 'right-password' }, port));
    await eventually(async () => (await h.http().get('/health').expect(200)).body.nats.connection === 'closed', 30_000, 'the transport to give up');
    expect((await h.http().get('/health').expect(200)).body.nats.error).toMatch(
      /: the server refused the credentials \(Authorization Violation\): fix NATS_USER/,
    );
    expect(logged).toContainEqual(
      expect.stringMatching(/^NATS transport stopped: NATS_URL=.*refused the credentials.*; HTTP keeps serving; restart the service once this is fixed$/),
    );
    await h
      .http()
      .post('/v1/sessions/still-http/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'HTTP still serves' }] })
      .expect(201);
  });
});
