/**
 * Child process of figure 7, compiled to JavaScript first (see compiled-service.ts: as `npm start`
 * runs the service, without the TypeScript compiler that ts-node keeps in memory) and run with --expose-gc
 * so that the parent's heap does not pollute the measure: starts the service, fills it with `sessions` × `eventsPerSession` events, lets the
 * projector catch up, loads every session's state once through the write side's cache (as an
 * append or a compaction would), then reports its memory to the parent over IPC.
 */
import 'reflect-metadata';
import type { EventData } from '@lib/event-store';
import { CONVERSATION_EVENT, SessionProjector, SessionStateCache, sessionKey, sessionStream, storeEventId } from '@lib/session';
import { corpus, EventCycler } from '../lib/corpus';
import { startService } from '../lib/service';
import { nowMs } from '../lib/stats';

function memory(): { rss: number; heapUsed: number; external: number; arrayBuffers: number } {
  (global as unknown as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

async function main(): Promise<void> {
  const [sessions, eventsPerSession] = [Number(process.argv[2]), Number(process.argv[3])];
  const dir = process.argv[4] || undefined;
  const send = (msg: unknown) => process.send?.(msg);
  const running = await startService(dir, 'memory');
  try {
    const before = memory();
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
          id: storeEventId(key, event.id),
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
    const appendedAndProjected = memory();
    for (let k = 0; k < sessions; k++) await cache.load(sessionKey('default', `mem-${k}`));
    const after = memory();
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
