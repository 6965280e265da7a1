/**
 * Which build runs (operator finding: neither `/health` nor `/metrics` said, package.json saying 0.1.0):
 * `/health` has `version` (the service's package.json) and `commit` (BUILD_COMMIT, else the checkout's
 * `.git` HEAD, else `unknown`), and `/metrics` the conventional build-info gauge,
 * `session_service_build_info{version, commit, node_version} 1`. Both open without an API key. The
 * OpenAPI document's `info.version` is the same release (it was the literal 0.1.0 whatever ran).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startService, type Harness } from '../support/service-harness';

const ROOT = path.resolve(__dirname, '..', '..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const COMMIT = '3f2a9c41d0b8e7a6f5c4b3a2918070605040302a';

/** The commit git itself says is checked out here, or `unknown` without git or a checkout (the service reads `.git` without git). */
function gitHead(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

describe('build identity in /health and /metrics', () => {
  const harnesses: Harness[] = [];
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.stop();
  });

  it('given BUILD_COMMIT, then /health names the version and that commit, and /metrics has session_service_build_info 1 with them and Node', async () => {
    const h = await startService({ env: { BUILD_COMMIT: COMMIT, API_KEYS: 'build-info-key-1:tenantA' } });
    harnesses.push(h);
    const health = await h.http().get('/health');
    expect(health.status).toBe(200);
    expect({ version: health.body.version, commit: health.body.commit, mode: health.body.mode }).toEqual({
      version: VERSION,
      commit: COMMIT,
      mode: 'api-keys',
    });
    const metrics = await h.http().get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('# TYPE session_service_build_info gauge');
    expect(metrics.text).toMatch(
      new RegExp(`^session_service_build_info\\{version="${VERSION.replaceAll('.', '\\.')}",commit="${COMMIT}",node_version="${process.version}"\\} 1$`, 'm'),
    );
  });

  it('without BUILD_COMMIT, then the commit is the one checked out (what git rev-parse HEAD says), or unknown without a checkout', async () => {
    const h = await startService({ env: { BUILD_COMMIT: '' } });
    harnesses.push(h);
    const expected = gitHead();
    expect((await h.http().get('/health')).body).toMatchObject({ version: VERSION, commit: expected, mode: 'open (no API keys configured)' });
    expect((await h.http().get('/metrics')).text).toMatch(new RegExp(`^session_service_build_info\\{.*commit="${expected}".*\\} 1$`, 'm'));
  });

  it("the OpenAPI document's info.version is the release /health reports, whatever it is (it was the literal 0.1.0)", async () => {
    const h = await startService();
    harnesses.push(h);
    const health = await h.http().get('/health');
    const document = await h.http().get('/docs/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.info.version).toBe(health.body.version);
    expect(health.body.version).toBe(VERSION);
    // Another release than package.json's (as a service whose package.json cannot be read reports "unknown"):
    // both follow it, so the document cannot carry a constant of its own.
    const other = await startService({ configure: (config) => ({ ...config, build: { ...config.build, version: '9.8.7-rc.1' } }) });
    harnesses.push(other);
    expect((await other.http().get('/health')).body.version).toBe('9.8.7-rc.1');
    expect((await other.http().get('/docs/openapi.json')).body.info.version).toBe('9.8.7-rc.1');
  });
});
