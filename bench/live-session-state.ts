/**
 * Memory and compaction cost of one session appended to live in this process (capacity report
 * finding 1): appends `LIVE_EVENTS` events (default 60,000) to one session in batches of 1,000
 * through one session-state cache (requests of 100 events), with a sliding-window pass (maxEvents 200) after each batch,
 * as a long-lived agent's session would see. Then prints the V8 heap used (after a full GC) before
 * and after, the size of the session's cached write-side state, and the median time (ms) of 7
 * dry-run passes (sliding-window maxEvents 5) on that session against a fresh 200-event session,
 * run alternately. In-process, no HTTP and no projector: the write side alone. Run with
 *   node --expose-gc -r ts-node/register/transpile-only -r tsconfig-paths/register bench/live-session-state.ts
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import * as os from 'node:os';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { ExtractiveSummarizer } from '../libs/session/src/summarizers/extractive-summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from '../libs/session/src/write-side/append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from '../libs/session/src/write-side/compact-session';
import { SessionStateCache } from '../libs/session/src/write-side/session-state-cache';
import { sessionKey } from '../libs/session/src/events/session-stream-events';

const noBus = { publish: () => undefined } as unknown as EventBus;

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1e6;
}

async function main(): Promise<void> {
  const total = Number(process.env.LIVE_EVENTS ?? 60_000);
  const store = SqliteEventStore.open(':memory:');
  const cache = new SessionStateCache(store);
  const appender = new AppendSessionEventsHandler(store, cache, noBus);
  const compactor = new CompactSessionHandler(store, cache, new ExtractiveSummarizer());
  const batch = (prefix: string, from: number, n: number) =>
    Array.from({ length: n }, (_, j): { event: SessionEvent } => {
      const k = from + j;
      return { event: { id: `${prefix}${k}`, type: k % 2 ? 'assistant' : 'user', text: `hotel reservation flight alpha bravo tok${k}` } };
    });
  const compact = (sessionId: string, maxEvents: number, dryRun: boolean) =>
    compactor.execute(new CompactSessionCommand('t', sessionId, parseStrategy({ type: 'sliding-window', maxEvents }), null, 'chars', dryRun));

  // Warm-up (tokenizer tables, compiled code) on another session, so the heap figure is the long session's.
  await appender.execute(new AppendSessionEventsCommand('t', 'warm', batch('w', 0, 100)));
  await compact('warm', 10, false);
  const before = heapMb();
  for (let b = 0; b < total / 1000; b++) {
    // Requests of 100 events (under 8,192 characters: counted on the event loop, no counting thread to start).
    for (let r = 0; r < 10; r++) await appender.execute(new AppendSessionEventsCommand('t', 'long', batch('L', b * 1000 + r * 100, 100)));
    await compact('long', 200, false);
  }
  const after = heapMb();
  for (let r = 0; r < 2; r++) await appender.execute(new AppendSessionEventsCommand('t', 'fresh', batch('f', r * 100, 100)));
  const times: Record<string, number[]> = { long: [], fresh: [] };
  for (let r = 0; r < 7; r++) {
    for (const s of ['long', 'fresh']) {
      const t0 = performance.now();
      await compact(s, 5, true);
      times[s].push(performance.now() - t0);
    }
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const state = await cache.load(sessionKey('t', 'long'));
  console.log(
    [
      `events ${total}`,
      `heap ${before.toFixed(1)} -> ${after.toFixed(1)} MB (+${(after - before).toFixed(1)})`,
      `state: active ${state?.active.size}, revisionsById ${state?.revisionsById.size}`,
      `dry run median long ${median(times.long).toFixed(1)} ms, fresh ${median(times.fresh).toFixed(1)} ms, ratio ${(median(times.long) / median(times.fresh)).toFixed(2)}`,
      `long runs ${times.long.map((t) => t.toFixed(1)).join(' ')}`,
      `load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    ].join(' | '),
  );
  await store.close();
}

void main();
