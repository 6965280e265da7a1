/**
 * Profiling aid (issue 14): starts the service in-process and puts figure 1's load on it for
 * `PROFILE_SECONDS` (default 6). Run under `node --cpu-prof` to see where the append path spends
 * the main thread:
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile-append.ts
 *
 * It prints events/s, the event loop's busy share and busy ms per request, and the CPU ms per
 * request of the whole process (every thread: event loop, store writer, projector worker, and the
 * load generator's thread, which costs the same per request whatever the server). On a machine
 * shared with other work, CPU per request is the steadier figure: when the cores are saturated,
 * throughput is about cores / CPU per request. `PROFILE_CEILING=1` runs the same load on figure
 * 1's minimal append server instead, for the same figures of the ceiling. `PROFILE_REPEAT=n` measures
 * n times in turn on the same server (one line each): under other load, compare the lowest CPU per
 * request of each build, from interleaved runs. `PROFILE_CLIENTS` (default 16, figure 1's) sets the
 * number of concurrent clients: a rate that does not rise with more clients is bound by CPU, not by
 * the round trip of each request.
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { SqliteEventStore } from '@lib/event-store';
import { SessionProjector } from '@lib/session';
import { corpus, textMessages } from './lib/corpus';
import { freshDir, startService } from './lib/service';
import { startMinimalAppendServer } from './lib/minimal-append-server';
import { runWorker } from './figures/append-load';

/** A server under load: its port, how many appends it has committed, and how to stop it. */
interface Target {
  port: number;
  appends(): number;
  /** Appends per projector batch since start (service only). */
  projectorLine(): string;
  stop(): Promise<void>;
}

async function startTarget(): Promise<Target> {
  if (process.env.PROFILE_CEILING === '1') {
    const dir = freshDir(process.env.BENCH_DIR, 'profile-ceiling');
    const server = await startMinimalAppendServer(dir);
    return {
      port: server.port,
      appends: () => server.stats.appends,
      projectorLine: () => 'minimal server (the ceiling)',
      async stop() {
        await server.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const running = await startService(process.env.BENCH_DIR, 'profile');
  const store = running.service.store as SqliteEventStore;
  const projector = running.service.app.get(SessionProjector);
  // PROFILE_NO_PROJECTOR=1: what the append path costs without the projector on the event loop
  // (the most that moving it to another thread could give).
  if (process.env.PROFILE_NO_PROJECTOR === '1') await projector.stop();
  let batches = 0;
  projector.onCheckpoint(() => (batches += 1));
  const opsAtStart = store.stats.operations;
  return {
    port: running.port,
    appends: () => store.stats.operations,
    projectorLine: () => `${((store.stats.operations - opsAtStart) / Math.max(1, batches)).toFixed(1)} appends per projector batch`,
    stop: () => running.stop(),
  };
}

async function main(): Promise<void> {
  const messages = textMessages(corpus().conversations).slice(0, 2000);
  const target = await startTarget();
  try {
    const seconds = Number(process.env.PROFILE_SECONDS ?? 6);
    const eventsPerRequest = Number(process.env.PROFILE_EVENTS_PER_REQUEST ?? 1);
    // PROFILE_REPEAT=n: n measurements in turn on the same server (one line each); on a shared machine the least disturbed one (lowest CPU per request) is the steadiest figure.
    const repeat = Math.max(1, Number(process.env.PROFILE_REPEAT ?? 1));
    for (let round = 0; round < repeat; round++) await measure(target, messages, seconds, eventsPerRequest);
  } finally {
    await target.stop();
  }
}

/** One measurement of `seconds` under figure 1's load on `target`: prints its line. */
async function measure(target: Target, messages: ReturnType<typeof textMessages>, seconds: number, eventsPerRequest: number): Promise<void> {
  const appendsBefore = target.appends();
  const before = performance.eventLoopUtilization();
  const cpuBefore = process.cpuUsage();
  const done = await runWorker({
    ports: [target.port],
    clients: Number(process.env.PROFILE_CLIENTS ?? 16),
    seconds,
    warmup: 1,
    messages,
    eventsPerRequest,
    probeWindow: false,
  });
  const cpu = process.cpuUsage(cpuBefore);
  const requests = done.results.reduce((s, r) => s + r.lat.length, 0);
  const loop = performance.eventLoopUtilization(before);
  // Per request (ms, warm-up included): busy event-loop time, and CPU of every thread of the process.
  const appends = Math.max(1, target.appends() - appendsBefore);
  const perRequest = loop.active / appends;
  const cpuPerRequest = (cpu.user + cpu.system) / 1000 / appends;
  process.stdout.write(
    `${((requests * eventsPerRequest) / ((done.end - done.start) / 1000)).toFixed(0)} events/s; event loop ${(loop.utilization * 100).toFixed(0)}% busy, ${perRequest.toFixed(3)} ms per request; CPU ${cpuPerRequest.toFixed(3)} ms per request (all threads); ${target.projectorLine()}\n`,
  );
}

void main();
