/**
 * The service compiled to JavaScript, as `npm start` runs it, for the figures that start service
 * processes (7 and 8): `tsconfig.bench-build.json` compiles `main.ts` and figure 7's child into
 * `.tmp/bench-build` with `tsc -b` (incremental: nothing when it is current; no type checking,
 * which `npm run typecheck` does; otherwise `npm run build`'s compiler options, so the same
 * JavaScript as in `dist/`), and a service process runs
 * `node -r tsconfig-paths/register <build>/apps/session-service/src/main.js`, `npm start`'s command.
 * Starting one costs about a second, against several seconds of CPU under ts-node, and its memory
 * holds no TypeScript compiler (ts-node's adds about 110 MiB).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, spawnService, type ServiceProcess, type SpawnOptions } from '../../test/support/service-process';
import { progress } from './report';

/** Where the bench's compiled JavaScript goes (the repository's layout below it). */
export const BENCH_BUILD_DIR = path.join(REPO_ROOT, '.tmp', 'bench-build');

let built = false;

/** Compiles the bench build ({@link BENCH_BUILD_DIR}) once per process. @throws Error when tsc fails. */
export function buildBenchService(): void {
  if (built) return;
  progress('compiling the service to JavaScript (tsc -b tsconfig.bench-build.json, incremental)');
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', path.join(REPO_ROOT, 'tsconfig.bench-build.json')], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  // The compiled service looks for its audit page next to its own directory, as in the sources.
  const ui = path.join(BENCH_BUILD_DIR, 'apps', 'session-service', 'ui');
  if (!fs.existsSync(ui)) fs.symlinkSync(path.join(REPO_ROOT, 'apps', 'session-service', 'ui'), ui, 'dir');
  built = true;
}

/**
 * Compiles the service if needed ({@link buildBenchService}) and starts it as `npm start` does,
 * with the environment of `options` (see {@link spawnService}: port 0, no keys, no rate limit);
 * resolves once it prints its URL.
 */
export function spawnCompiledService(options: Omit<SpawnOptions, 'command' | 'cwd'>): Promise<ServiceProcess> {
  buildBenchService();
  return spawnService({
    ...options,
    command: [process.execPath, '-r', 'tsconfig-paths/register', path.join(BENCH_BUILD_DIR, 'apps', 'session-service', 'src', 'main.js')],
    env: { TS_NODE_BASEURL: BENCH_BUILD_DIR, ...options.env },
  });
}
