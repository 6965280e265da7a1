/**
 * The deployment files (no Docker here: read as text; the image's HEALTHCHECK command run with node): the image
 * listens on all interfaces, has a HEALTHCHECK that needs no curl and tells a 200 from anything else, runs node
 * (not npm); the compose proxy routes on readiness and never resends a POST it has sent (appends without ids are not
 * idempotent), and the compose services list the names they are called by in ALLOWED_HOSTS.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
/** The runtime stage: from the last FROM on, continuation lines joined. */
const runtime = dockerfile
  .slice(dockerfile.lastIndexOf('\nFROM '))
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((line) => !line.startsWith('#'));

/** The runtime stage's instruction lines starting with `keyword`. */
const instructions = (keyword: string): string[] => runtime.filter((line) => line.startsWith(`${keyword} `));

/** Runs the HEALTHCHECK's exec-form command with `PORT=port`; resolves with its exit code. */
function runHealthcheck(port: number): Promise<number> {
  const [healthcheck] = instructions('HEALTHCHECK');
  const argv = JSON.parse(healthcheck.slice(healthcheck.indexOf(' CMD ') + 5)) as string[];
  expect(argv[0]).toBe('node');
  return new Promise((resolve) => {
    const child = execFile(process.execPath, argv.slice(1), { env: { PORT: String(port) }, timeout: 10_000 });
    child.on('exit', (code) => resolve(code ?? -1));
  });
}

describe('Dockerfile (runtime stage)', () => {
  it('listens on all interfaces: HOST=0.0.0.0 (the default 127.0.0.1 is unreachable on a pod or bridge address)', () => {
    expect(instructions('ENV').join(' ')).toMatch(/\bHOST=0\.0\.0\.0\b/);
  });

  it('runs node as PID 1, not npm (SIGTERM reaches the service itself)', () => {
    const [cmd] = instructions('CMD');
    expect(JSON.parse(cmd.slice(4))[0]).toBe('node');
  });

  it("sets npm start's default NODE_OPTIONS, the young generation capped at 4 MiB semi-spaces (figure 7: the empty service's memory)", () => {
    const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const npmStart = /\bNODE_OPTIONS="([^"$]*?)\s*\$\{NODE_OPTIONS:-\}"/.exec(scripts.start)?.[1];
    expect(npmStart).toContain('--max-semi-space-size=4');
    expect(instructions('ENV').join(' ')).toContain(`NODE_OPTIONS=${npmStart}`);
  });

  it('has a HEALTHCHECK with node (the slim image has no curl or wget) that passes on 200 and fails otherwise', async () => {
    expect(instructions('HEALTHCHECK')).toHaveLength(1);
    expect(instructions('HEALTHCHECK')[0]).not.toMatch(/curl|wget/);
    let status = 200;
    const paths: string[] = [];
    const server = http.createServer((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(status).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect(await runHealthcheck(port)).toBe(0);
      status = 503;
      expect(await runHealthcheck(port)).toBe(1);
      expect(paths).toEqual(['/health', '/health']);
    } finally {
      server.close();
    }
    // Nothing listening: fails (not hangs).
    expect(await runHealthcheck(port)).toBe(1);
  });
});

describe('docker-compose.yml proxy (HAProxy; run for real in test/e2e/compose-proxy-readiness.e2e-spec.ts)', () => {
  const compose = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
  const lines = (pattern: RegExp) => compose.split('\n').filter((line) => pattern.test(line));

  it('routes on readiness: checks GET /health/ready, not /health (200 while the read models rebuild)', () => {
    expect(lines(/^\s*option httpchk\s/).map((line) => line.trim())).toEqual(['option httpchk GET /health/ready']);
    expect(lines(/^\s*http-check expect\s/).map((line) => line.trim())).toEqual(['http-check expect status 200']);
  });

  it('never resends a request it has sent to a replica but a GET or HEAD (an append without ids would be written twice)', () => {
    expect(lines(/^\s*http-request disable-l7-retry\s/).map((line) => line.trim())).toEqual(['http-request disable-l7-retry unless METH_GET || METH_HEAD']);
  });

  it('gives the replicas ALLOWED_HOSTS naming the compose names they are called by (open mode refuses other names)', () => {
    expect(lines(/^\s*ALLOWED_HOSTS:/).map((line) => line.trim())).toEqual(["ALLOWED_HOSTS: 'session-service'", "ALLOWED_HOSTS: 'proxy,replica-1,replica-2'"]);
  });
});
