/**
 * Profiling aid (issue 14): starts the service in-process and puts figure 1's load on it for
 * `PROFILE_SECONDS` (default 6). Run under `node --cpu-prof` to see where the append path spends
 * the main thread:
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile-append.ts
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import type { SqliteEventStore } from '@lib/event-store';
import { SessionProjector } from '@lib/session';
import { corpus, textMessages } from './lib/corpus';
import { startService } from './lib/service';
import { runWorker } from './figures/append-load';

async function main(): Promise<void> {
  const messages = textMessages(corpus().conversations).slice(0, 2000);
  const running = await startService(process.env.BENCH_DIR, 'profile');
  try {
    const seconds = Number(process.env.PROFILE_SECONDS ?? 6);
    const eventsPerRequest = Number(process.env.PROFILE_EVENTS_PER_REQUEST ?? 1);
    const store = running.service.store as SqliteEventStore;
    const projector = running.service.app.get(SessionProjector);
    // PROFILE_NO_PROJECTOR=1: what the append path costs without the projector on the event loop
    // (the most that moving it to another thread could give).
    if (process.env.PROFILE_NO_PROJECTOR === '1') await projector.stop();
    let batches = 0;
    projector.onCheckpoint(() => (batches += 1));
    const opsBefore = store.stats.operations;
    const before = performance.eventLoopUtilization();
    const done = await runWorker({ ports: [running.port], clients: 16, seconds, warmup: 1, messages, eventsPerRequest, probeWindow: false });
    const requests = done.results.reduce((s, r) => s + r.lat.length, 0);
    const loop = performance.eventLoopUtilization(before);
    // Busy event-loop time per request (ms, warm-up included): what one request costs the service's main thread.
    const appends = store.stats.operations - opsBefore;
    const perRequest = loop.active / Math.max(1, appends);
    process.stdout.write(
      `${((requests * eventsPerRequest) / ((done.end - done.start) / 1000)).toFixed(0)} events/s; event loop ${(loop.utilization * 100).toFixed(0)}% busy, ${perRequest.toFixed(3)} ms per request; ${(appends / Math.max(1, batches)).toFixed(1)} appends per projector batch\n`,
    );
  } finally {
    await running.stop();
  }
}

void main();
