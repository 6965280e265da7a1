/**
 * The service compiled to JavaScript, as `npm start` runs it, for the figures that start service
 * processes (7 and 8): `tsconfig.bench-build.json` compiles `main.ts` and figure 7's child into
 * `.tmp/bench-build` with `tsc -b` (incremental: nothing when it is current), and a service process
 * runs `node -r tsconfig-paths/register <build>/apps/session-service/src/main.js` with npm start's
 * default `NODE_OPTIONS` ({@link npmStartNodeOptions}), `npm start`'s command. Starting one costs about a second, against several seconds of CPU under ts-node, and its
 * memory holds no TypeScript compiler (ts-node's adds about 110 MiB).
 *
 * The build has `npm run build`'s compiler options plus two that only make it cheaper: `noCheck`
 * (no type checking, which `npm run typecheck` does) and `isolatedModules`. The latter stops the
 * emitter asking the type checker, at every `a.b` in the code, whether `a` is a `const enum` to
 * inline (TypeScript 5.9's `tryGetConstEnumValue`), which is what made the first build cost ~7.5–8 s
 * of CPU instead of ~4.5. The JavaScript is the same byte for byte as without it (compared on
 * 2026-11-30, every emitted file); it would differ only where code uses a `const enum` (none in this
 * repository: its members would be read from the enum object instead of inlined).
 *
 * `bench/run.ts` starts the build ({@link startBenchBuild}) in a child process before it loads the
 * figures, so the compiler's CPU overlaps ts-node's loading of the bench, and waits for it before
 * the first figure, so no figure is measured while the compiler runs.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, spawnService, type ServiceProcess, type SpawnOptions } from '../../test/support/service-process';
import { progress } from './report';

/** Where the bench's compiled JavaScript goes (the repository's layout below it). */
export const BENCH_BUILD_DIR = path.join(REPO_ROOT, '.tmp', 'bench-build');

/**
 * The `NODE_OPTIONS` `npm start` runs the service with by default (package.json's `start` script
 * sets `NODE_OPTIONS="<these> ${NODE_OPTIONS:-}"`: V8's heap settings), so the compiled services
 * here run as it does. @throws Error when the script sets none.
 */
export function npmStartNodeOptions(): string {
  const scripts = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const options = /\bNODE_OPTIONS="([^"$]*?)\s*\$\{NODE_OPTIONS:-\}"/.exec(scripts.start);
  if (!options) throw new Error(`package.json's start script sets no NODE_OPTIONS="… \${NODE_OPTIONS:-}": ${scripts.start}`);
  return options[1];
}

/** Plain JavaScript files (with a `.d.ts`) that compiled files import, relative to the repository's root. */
const PLAIN_JS_FILES = ['test/support/shared-dir-location.js'];

let build: Promise<void> | undefined;

/**
 * The compiled services still running. Each runs in its own process group, which a Ctrl-C in the
 * terminal does not reach: when the bench exits (also when interrupted) it kills them.
 */
const running = new Set<ServiceProcess>();
process.on('exit', () => {
  for (const service of running) void service.kill();
});

/**
 * Starts compiling the bench build ({@link BENCH_BUILD_DIR}) in a child process (`tsc -b
 * tsconfig.bench-build.json`, its output on this process's stderr), once per process; later calls
 * return the same promise. Resolves when the build is current, with the audit page linked beside
 * the compiled service (it looks for it next to its own directory, as in the sources) and the plain
 * JavaScript files the compiled code imports linked into place.
 * @throws Error (the promise rejects) when tsc exits with a failure or cannot be started.
 */
export function startBenchBuild(): Promise<void> {
  build ??= new Promise<void>((resolve, reject) => {
    progress('compiling the service to JavaScript in the background (tsc -b tsconfig.bench-build.json, incremental)');
    const tsc = spawn(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', path.join(REPO_ROOT, 'tsconfig.bench-build.json')], {
      cwd: REPO_ROOT,
      stdio: ['ignore', process.stderr, process.stderr],
    });
    // A SIGTERM to the bench alone (not its process group) ends it with the compiler still running: end that too.
    const killOnExit = () => tsc.kill();
    process.on('exit', killOnExit);
    tsc.on('error', reject);
    tsc.on('exit', (code, signal) => {
      process.off('exit', killOnExit);
      if (code !== 0) return reject(new Error(`tsc -b tsconfig.bench-build.json failed (${signal ?? `exit code ${code}`})`));
      const ui = path.join(BENCH_BUILD_DIR, 'apps', 'session-service', 'ui');
      if (!fs.existsSync(ui)) fs.symlinkSync(path.join(REPO_ROOT, 'apps', 'session-service', 'ui'), ui, 'dir');
      // Plain JavaScript the compiled TypeScript imports (tsc does not copy .js files): linked beside it.
      for (const file of PLAIN_JS_FILES) {
        const target = path.join(BENCH_BUILD_DIR, file);
        if (!fs.existsSync(target)) fs.symlinkSync(path.join(REPO_ROOT, file), target, 'file');
      }
      resolve();
    });
  });
  return build;
}

/**
 * Compiles the service if needed ({@link startBenchBuild}) and starts it as `npm start` does,
 * with the environment of `options` (see {@link spawnService}: port 0, no keys, no rate limit);
 * resolves once it prints its URL. @throws Error (rejects) when the build or the start fails.
 */
export async function spawnCompiledService(options: Omit<SpawnOptions, 'command' | 'cwd'>): Promise<ServiceProcess> {
  await startBenchBuild();
  const service = await spawnService({
    ...options,
    command: [process.execPath, '-r', 'tsconfig-paths/register', path.join(BENCH_BUILD_DIR, 'apps', 'session-service', 'src', 'main.js')],
    env: { TS_NODE_BASEURL: BENCH_BUILD_DIR, NODE_OPTIONS: npmStartNodeOptions(), ...options.env },
  });
  running.add(service);
  void service.exited.then(() => running.delete(service));
  return service;
}
