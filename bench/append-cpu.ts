/**
 * CPU per whole append of one checkout of the service, for comparing commits (docs/performance.md,
 * "Did main regress"). Run it from the root of the checkout to measure (its `libs`, `apps` and
 * `node_modules` are the ones loaded; `tsconfig-paths` reads that checkout's `tsconfig.json`):
 *
 *   cd /path/to/checkout && node -r ts-node/register/transpile-only -r tsconfig-paths/register /path/to/this/bench/append-cpu.ts
 *
 * It starts the service in-process (fresh data directory, `LOG_LEVEL=silent`, no rate limit, token
 * counting and the projector as configured by default) and sends one-event
 * `POST /v1/sessions/:id/events` through `fastify.inject` (`bench/lib/inject-appends.ts`: no socket,
 * 16 in flight on 16 sessions, each event id new), texts from the bench corpus. After `APPEND_CPU_WARM` slices (default 5) it
 * measures `APPEND_CPU_SLICES` slices (default 60) of `APPEND_CPU_SLICE` requests (default 200) and
 * prints per request, over the slices: the event-loop thread's own CPU
 * (`/proc/<pid>/task/<pid>/schedstat`) and the whole process's (all threads: the store's writer, the
 * projector when in a worker, V8's helpers), each as min, p25, median and the sum over all slices
 * divided by the requests. CPU time, unlike wall time, does not grow with what other processes run
 * (only a little, through shared caches), so run the checkouts to compare at the same time or
 * alternately, several rounds each, and compare the medians. The harness's own cost (inject, the
 * payloads) is in the figure, the same for every checkout; the socket and HTTP parser are not.
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { injectAppends } from './lib/inject-appends';

/** The event-loop thread's CPU time so far (ns). */
function eventLoopCpuNs(): number {
  return Number(fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
}

function quantile(xs: number[], p: number): number {
  return [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) * p)];
}

async function main(): Promise<void> {
  const root = process.cwd();
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createSessionService } = require(path.join(root, 'apps/session-service/src/create-session-service'));
  const { loadServiceConfig } = require(path.join(root, 'apps/session-service/src/config/service-config'));
  const { corpus, textMessages } = require(path.join(root, 'bench/lib/corpus'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const dataDir = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'append-cpu-'));
  const config = loadServiceConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', RATE_LIMIT_PER_MINUTE: '0', API_KEYS: undefined });
  const service = await createSessionService(config, { quiet: true, env: process.env });
  const fastify = service.app.getHttpAdapter().getInstance();
  const texts: { type: string; text: string }[] = textMessages(corpus().conversations).slice(0, 2000);
  const appends = injectAppends((request) => fastify.inject(request), texts);
  const perSlice = Number(process.env.APPEND_CPU_SLICE ?? 200);
  const slice = async (): Promise<[number, number]> => {
    const before = eventLoopCpuNs();
    const processBefore = process.cpuUsage();
    await appends(perSlice);
    const used = process.cpuUsage(processBefore);
    return [(eventLoopCpuNs() - before) / perSlice / 1000, (used.user + used.system) / perSlice];
  };
  const loop: number[] = [];
  const all: number[] = [];
  try {
    for (let k = 0; k < Number(process.env.APPEND_CPU_WARM ?? 5); k++) await slice();
    for (let k = 0; k < Number(process.env.APPEND_CPU_SLICES ?? 60); k++) {
      const [l, a] = await slice();
      loop.push(l);
      all.push(a);
    }
  } finally {
    await service.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const line = (xs: number[]) =>
    `min ${Math.min(...xs).toFixed(1)} p25 ${quantile(xs, 0.25).toFixed(1)} median ${quantile(xs, 0.5).toFixed(1)} mean ${(xs.reduce((x, y) => x + y, 0) / xs.length).toFixed(1)}`;
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  process.stdout.write(
    `${process.env.APPEND_CPU_LABEL ?? root}: µs CPU per append, event loop: ${line(loop)}; all threads: ${line(all)}; ${all.length} slices × ${perSlice}; load ${load}\n`,
  );
}

void main();
