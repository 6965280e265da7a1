/**
 * Child process of figure 7, compiled to JavaScript first (see compiled-service.ts: as `npm start`
 * runs the service, without the TypeScript compiler that ts-node keeps in memory) and run with --expose-gc
 * so that the parent's heap does not pollute the measure: starts the service, fills it with `sessions` × `eventsPerSession` events, lets the
 * projector catch up, loads every session's state once through the write side's cache (as an
 * append or a compaction would), then reports its memory to the parent over IPC.
 */
import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import * as v8 from 'node:v8';
import type { EventData } from '@lib/event-store';
import { CONVERSATION_EVENT, SessionProjector, SessionStateCache, sessionKey, sessionStream, storeEventId } from '@lib/session';
import { corpus, EventCycler } from '../lib/corpus';
import { startService } from '../lib/service';
import { processMemory, type MemoryReading } from '../lib/process-memory';
import { nowMs } from '../lib/stats';

/** How often, and how long at most, {@link memory} reads the resident set while it settles (ms). */
const SETTLE_POLL_MS = 250;
const SETTLE_MAX_MS = 10_000;

/**
 * This process's memory after a full, compacting collection, once the resident set has settled.
 * Two things made the figure vary 350–740 MiB for the same build (2026-11-30, 10k × 50):
 * - V8 frees the pages a collection emptied on its background threads, after `gc()` has returned:
 *   read at once, VmRSS still held up to ~490 MiB of them, a different share each run. So it polls
 *   VmRSS every {@link SETTLE_POLL_MS} ms until it falls by less than 1 MiB between two reads (at
 *   most {@link SETTLE_MAX_MS} ms; ~0.5 s in practice).
 * - A plain `gc()` evacuates only some fragmented pages: old space kept 128–247 MiB committed for
 *   106–108 MiB used. The collection here runs with `--compact-on-every-full-gc`, set for it alone
 *   (the service runs with V8's defaults meanwhile), as the memory reducer compacts once a service
 *   idles: committed then ≈ used. A service under steady allocation holds that slack too.
 */
async function memory(): Promise<MemoryReading> {
  // This one collection compacts every fragmented page, as V8's memory reducer does once a service idles.
  v8.setFlagsFromString('--compact-on-every-full-gc');
  (global as unknown as { gc?: () => void }).gc?.();
  v8.setFlagsFromString('--no-compact-on-every-full-gc');
  const rssAtCollection = process.memoryUsage.rss();
  const t0 = nowMs();
  let previous = rssAtCollection;
  for (;;) {
    await sleep(SETTLE_POLL_MS);
    const rss = process.memoryUsage.rss();
    const settled = previous - rss < 2 ** 20;
    previous = rss;
    if (settled || nowMs() - t0 >= SETTLE_MAX_MS) break;
  }
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    proc: processMemory(),
    rssAtCollection,
    settledAfterMs: Math.round(nowMs() - t0),
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((sp) => [sp.space_name, { size: sp.space_size, used: sp.space_used_size }])),
  };
}

async function main(): Promise<void> {
  const [sessions, eventsPerSession] = [Number(process.argv[2]), Number(process.argv[3])];
  const dir = process.argv[4] || undefined;
  const send = (msg: unknown) => process.send?.(msg);
  const running = await startService(dir, 'memory');
  try {
    const before = await memory();
    // The corpus is loaded after the empty service is measured: it is the load generator's, not the service's.
    const cycler = new EventCycler(corpus().conversations, 'm', true);
    const { store } = running.service;
    const projector = running.service.app.get(SessionProjector);
    const cache = running.service.app.get(SessionStateCache);
    const t0 = nowMs();
    let last = t0;
    let position = 0n;
    const CHUNK = 100;
    for (let s = 0; s < sessions; s += CHUNK) {
      const appends: Promise<{ position: bigint }>[] = [];
      for (let k = s; k < Math.min(sessions, s + CHUNK); k++) {
        const sessionId = `mem-${k}`;
        const key = sessionKey('default', sessionId);
        const data: EventData[] = cycler.take(eventsPerSession).map(({ event, costs }) => ({
          id: storeEventId(key, 0n, event.id), // a fresh session: incarnation 0n
          type: CONVERSATION_EVENT,
          data: { event, costs },
          metadata: { tenantId: 'default', sessionId },
        }));
        appends.push(store.appendToStream(sessionStream(key), data, { expectedRevision: 'no_stream' }));
      }
      for (const r of await Promise.all(appends)) if (r.position > position) position = r.position;
      // Keep the projector close behind, as under a real load.
      await projector.waitForPosition(position, 60_000);
      if (nowMs() - last > 5000) {
        send({ progress: `${Math.min(sessions, s + CHUNK).toLocaleString('en-US')} / ${sessions.toLocaleString('en-US')} sessions appended and projected` });
        last = nowMs();
      }
    }
    const appendedAndProjected = await memory();
    for (let k = 0; k < sessions; k++) await cache.load(sessionKey('default', `mem-${k}`));
    const after = await memory();
    send({ result: { sessions, eventsPerSession, seconds: (nowMs() - t0) / 1000, before, appendedAndProjected, after } });
  } finally {
    await running.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.send?.({ error: String((error as Error).stack ?? error) });
    process.exit(1);
  },
);
