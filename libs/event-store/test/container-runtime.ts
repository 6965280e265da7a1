import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Whether a Docker-compatible container runtime answers `/_ping` within ~3 s (checked
 * synchronously in a child process so that a spec can choose `describe` or `describe.skip`).
 * Returns null when reachable, else the reason it is not.
 */
export function containerRuntimeUnavailableReason(): string | null {
  const host = process.env.DOCKER_HOST;
  const candidates: string[] = [];
  if (host) candidates.push(host);
  else {
    const runtimeDir = process.env.XDG_RUNTIME_DIR;
    const sockets = [
      '/var/run/docker.sock',
      join(homedir(), '.docker', 'run', 'docker.sock'),
      ...(runtimeDir ? [join(runtimeDir, 'docker.sock'), join(runtimeDir, 'podman', 'podman.sock')] : []),
    ].filter((p) => existsSync(p));
    candidates.push(...sockets.map((p) => `unix://${p}`));
  }
  if (candidates.length === 0) return 'no DOCKER_HOST and no Docker/Podman socket found';
  const ping = `
    const http = require('node:http');
    const target = process.argv[1];
    const opts = target.startsWith('unix://') ? { socketPath: target.slice(7) } : (() => { const u = new URL(target.replace(/^tcp:/, 'http:')); return { host: u.hostname, port: u.port }; })();
    const req = http.get({ ...opts, path: '/_ping', timeout: 2500 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1));
    req.on('error', () => process.exit(1)); req.on('timeout', () => process.exit(1));`;
  for (const target of candidates) {
    try {
      execFileSync(process.execPath, ['-e', ping, target], { timeout: 3500, stdio: 'ignore' });
      return null;
    } catch {
      // try the next one
    }
  }
  return `container runtime at ${candidates.join(', ')} does not answer /_ping`;
}
