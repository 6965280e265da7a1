/**
 * The compose file's replica proxy routes on readiness: its HAProxy configuration (docker-compose.yml,
 * `configs.proxy-config`), run as written but for the replicas' addresses, in front of two stand-in
 * replicas. One answers `/health/ready` 503 (a replica rebuilding its read models after an upgrade,
 * whose reads answer 503 `projection_behind`) while `/health` stays 200: the proxy sends it no request
 * until it is ready, then both get traffic. A GET answered 503 (`shutting_down`) goes to the other
 * replica; a POST is never resent. Before (main at 17c2dc2) the proxy was nginx with no readiness
 * check (routing on nothing but errors). The configuration's text: `deployment-files.spec.ts`.
 * Needs `haproxy` (Debian's package; .ci/run installs it): skipped without it outside CI.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/service-process';

jest.setTimeout(120_000);

const HAVE_HAPROXY = spawnSync('haproxy', ['-v']).status === 0;
if (!HAVE_HAPROXY && process.env.CI) throw new Error('haproxy is not installed (apt-get install haproxy): the compose proxy test cannot run');
const describeWithHaproxy = HAVE_HAPROXY ? describe : describe.skip;

/** The text of the compose file's `proxy-config` block (its `content: |` lines, unindented). */
function composeProxyConfig(): string {
  const lines = fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8').split('\n');
  const start = lines.findIndex((line) => line === '  proxy-config:') + 2;
  expect(lines[start - 1]).toBe('    content: |');
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (line.trim() !== '' && !line.startsWith('      ')) break;
    block.push(line.slice(6));
  }
  return block.join('\n');
}

/** A stand-in replica: `ready` says what /health/ready answers; every request is recorded by method and path. */
function standIn(name: string) {
  const state = { ready: true, answerGetsWith503: false, answerPostsWith503: false, seen: [] as string[] };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: object) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/health') return json(200, { status: 'ok' });
      if (req.url === '/health/ready') return state.ready ? json(200, { status: 'ready' }) : json(503, { code: 'projection_behind' });
      state.seen.push(`${req.method} ${req.url}`);
      if (!state.ready) return json(503, { code: 'projection_behind', from: name });
      if ((req.method === 'GET' && state.answerGetsWith503) || (req.method === 'POST' && state.answerPostsWith503))
        return json(503, { code: 'shutting_down', from: name });
      json(200, { from: name });
    });
  });
  return { state, server };
}

/** One request through the proxy: its status and the stand-in that answered. */
function call(port: number, method: string, urlPath: string): Promise<{ status: number; from: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, from: String((JSON.parse(body || '{}') as { from?: string }).from) }));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{"events":[]}' : undefined);
  });
}

const listening = (server: http.Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describeWithHaproxy('the compose proxy (HAProxy) in front of two replicas', () => {
  const a = standIn('a');
  const b = standIn('b');
  let proxy: ChildProcess;
  let port: number;
  let dir: string;

  beforeAll(async () => {
    const [portA, portB] = [await listening(a.server), await listening(b.server)];
    const probe = http.createServer();
    port = await listening(probe);
    await new Promise((resolve) => probe.close(resolve));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-proxy-'));
    // As written, but for the addresses: no Docker DNS here.
    const config = composeProxyConfig()
      .replace(/^resolvers docker\n(?: {2}.*\n)*/m, '')
      .replace(/ resolvers docker/g, '')
      .replace(/^\s*log stdout.*$/m, '')
      .replace('bind :8080', `bind 127.0.0.1:${port}`)
      .replace('replica-1:3000', `127.0.0.1:${portA}`)
      .replace('replica-2:3000', `127.0.0.1:${portB}`);
    fs.writeFileSync(path.join(dir, 'haproxy.cfg'), config);
    b.state.ready = false; // replica-2 was just upgraded: it rebuilds its read models
    proxy = spawn('haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if (await call(port, 'GET', '/v1/sessions').catch(() => null)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 2500)); // a few checks at 1 s
  });
  afterAll(async () => {
    proxy?.kill('SIGTERM');
    await Promise.all([a, b].map(({ server }) => new Promise((r) => server.close(r))));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sends no request to a replica whose /health/ready is 503, then both get traffic once it is ready', async () => {
    const during = [];
    for (let i = 0; i < 20; i++) during.push(await call(port, 'GET', `/v1/sessions/s${i}`));
    expect(during.every((answer) => answer.status === 200 && answer.from === 'a')).toBe(true);
    expect(b.state.seen).toEqual([]);

    b.state.ready = true;
    const started = Date.now();
    let reachedB = false;
    while (!reachedB && Date.now() - started < 10_000) reachedB = (await call(port, 'GET', '/v1/sessions')).from === 'b';
    expect(reachedB).toBe(true);
    const after = [];
    for (let i = 0; i < 10; i++) after.push((await call(port, 'GET', '/v1/sessions')).from);
    expect(new Set(after)).toEqual(new Set(['a', 'b']));
  });

  it('passes a GET answered 503 to the other replica, and never resends a POST', async () => {
    b.state.answerGetsWith503 = true;
    b.state.answerPostsWith503 = true;
    const gets = [];
    for (let i = 0; i < 6; i++) gets.push(await call(port, 'GET', '/v1/sessions'));
    expect(gets.every((answer) => answer.status === 200 && answer.from === 'a')).toBe(true);
    a.state.seen.length = 0;
    b.state.seen.length = 0;
    const posts = [];
    for (let i = 0; i < 6; i++) posts.push(await call(port, 'POST', `/v1/sessions/p${i}/events`));
    const toB = posts.filter((answer) => answer.from === 'b');
    expect(toB.length).toBeGreaterThan(0);
    expect(toB.every((answer) => answer.status === 503)).toBe(true);
    // each POST reached one replica once: the ones b answered 503 were not resent to a
    expect(a.state.seen.length + b.state.seen.length).toBe(6);
  });
});
