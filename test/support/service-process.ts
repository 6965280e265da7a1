/**
 * Runs the real service as a child process (from source, through ts-node) on a data directory, for
 * the crash and start-up tests (issue 7): start it, talk to it over loopback HTTP, SIGKILL it in the
 * middle of something, restart it on the same directory. Everything it prints is captured.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

/** Repository root (where `apps/` and `tsconfig.json` are). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** A running service process. */
export interface ServiceProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Sends SIGKILL and resolves when the process has exited. */
  kill(): Promise<void>;
  /** Sends SIGTERM (graceful shutdown) and resolves on exit; SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Options of {@link spawnService}. */
export interface SpawnOptions {
  dataDir: string;
  /** Extra environment; `PORT=0`, `DATA_DIR`, no keys, no rate limit and no OpenAI endpoint unless given here. */
  env?: Record<string, string>;
  /** Longest wait for the "listening on" line (default 90 s). */
  readyTimeoutMs?: number;
  /** Command and arguments to run instead of the service from source (e.g. `['npm', 'start']`). */
  command?: string[];
  /** Working directory (default: the repository root). */
  cwd?: string;
}

const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_OPTIONS'];
/** Inherited too when the service runs from the sources: the tsconfig of the test runs, whose ts-node transpiler reuses transpiled modules (test/support/jest-global-setup.js). */
const INHERITED_FROM_SOURCE = ['TS_NODE_PROJECT'];

/** A child process that may not be ready yet: `ready` resolves with the running service. */
export interface StartingService {
  ready: Promise<ServiceProcess>;
  /** The child's process id (undefined when it could not be spawned), e.g. to send it a signal before it is ready. */
  pid: number | undefined;
  /** Sends SIGKILL at once (ready or not) and resolves when the process has exited. */
  kill(): Promise<void>;
  /** Resolves with the exit code (or signal) once the process has exited (ready or not). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Everything written to stdout so far. */
  stdout(): string;
}

/**
 * Starts `apps/session-service/src/main.ts` in a child process and resolves once it prints its URL.
 * @throws Error with the captured output when it exits or does not get ready in time.
 */
export function spawnService(options: SpawnOptions): Promise<ServiceProcess> {
  return startServiceProcess(options).ready;
}

/** Like {@link spawnService}, but returns at once so a test can kill the process before it is ready. */
export function startServiceProcess(options: SpawnOptions): StartingService {
  const env: Record<string, string> = {};
  for (const name of [...INHERITED, ...(options.command === undefined ? INHERITED_FROM_SOURCE : [])])
    if (process.env[name] !== undefined) env[name] = process.env[name]!;
  Object.assign(env, {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: options.dataDir,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    TS_NODE_TRANSPILE_ONLY: 'true',
    ...options.env,
  });
  const [command, ...args] = options.command ?? [
    process.execPath,
    '-r',
    'ts-node/register/transpile-only',
    '-r',
    'tsconfig-paths/register',
    'apps/session-service/src/main.ts',
  ];
  // A command of its own runs in its own process group, so that killing it also ends its children (npm → node).
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.command !== undefined,
  });
  const signal = (sig: NodeJS.Signals) => {
    if (options.command !== undefined && child.pid !== undefined) {
      try {
        process.kill(-child.pid, sig);
        return;
      } catch {
        // the group is gone already
      }
    }
    child.kill(sig);
  };
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let done = false;
  void exited.then(() => (done = true));
  const kill = async () => {
    if (!done) signal('SIGKILL');
    await exited;
  };
  const urlReady = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      signal('SIGKILL');
      reject(new Error(`service did not start within ${options.readyTimeoutMs ?? 90_000} ms\nstdout:\n${out}\nstderr:\n${err}`));
    }, options.readyTimeoutMs ?? 90_000);
    const onData = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        cleanup();
        resolve(m[1]);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`service exited before it was ready\nstdout:\n${out}\nstderr:\n${err}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
  const ready = urlReady.then((url): ServiceProcess => ({
    url,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill,
    async stop(graceMs = 15_000) {
      if (done) return;
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  }));
  return { ready, pid: child.pid, kill, exited, stderr: () => err, stdout: () => out };
}

/** A JSON answer of the service. */
export interface JsonAnswer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Sends a JSON request over loopback and parses the answer (rejects on connection errors). */
export async function call(base: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  const res = await fetch(base + route, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}
