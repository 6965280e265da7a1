/**
 * Figure 2: the cost of one sliding-window compaction pass (no summarizer) through the command
 * path (`CompactSessionHandler.execute`: load → plan → append the decision events) on a session
 * whose log holds 1k, 10k and 100k events, with an active window of about 200 events. The 1k
 * pass is the baseline; DESIGN §4 requires the load to cost O(active window + events since the
 * last compaction), so 100k / 1k should stay ≤ 1.5.
 *
 * The long log is built quickly: conversation events are appended straight to the store in
 * batches of 100 (with costs computed once per corpus template), and after each batch a real
 * compaction (the same handler) keeps the active window at ~200 events.
 *
 * Each timed pass first appends 20 new events (untimed), then runs the pass twice: `cold`
 * (the session's cached state dropped, so the loader reads the log: backwards to the last
 * checkpoint, the kept ranges, the tail) and, after 20 more events, `warm` (the in-memory state,
 * the service's usual path).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore, type EventData } from '@lib/event-store';
import {
  CONVERSATION_EVENT,
  CompactSessionCommand,
  CompactSessionHandler,
  ExtractiveSummarizer,
  SessionStateCache,
  loadSessionWindow,
  sessionKey,
  sessionStream,
  storeEventId,
} from '@lib/session';
import { corpus, EventCycler } from '../lib/corpus';
import { freshDir } from '../lib/service';
import { median, nowMs, round } from '../lib/stats';
import { progress, type FigureResult, type FigureRow } from '../lib/report';

/** Options of {@link runCompactionScaling}. */
export interface CompactionScalingOptions {
  /** Log sizes (events in the session's stream), ascending; the first is the baseline. */
  logSizes: number[];
  /** Timed passes per size (medians are reported). */
  passes: number;
  dir?: string;
}

const TENANT = 'default';
const SESSION = 'long';
const BATCH = 100;
const STEP = 20;

/** Runs figure 2. */
export async function runCompactionScaling(options: CompactionScalingOptions): Promise<FigureResult> {
  const dir = freshDir(options.dir, 'compaction');
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  const cache = new SessionStateCache(store);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const summarizer = new (ExtractiveSummarizer as any)();
  const handler = new CompactSessionHandler(store, cache, summarizer);
  const key = sessionKey(TENANT, SESSION);
  const stream = sessionStream(key);
  const cycler = new EventCycler(corpus().conversations, 'e', true);
  const strategy = parseStrategy({ type: 'sliding-window', maxEvents: 200 });
  const command = () => new CompactSessionCommand(TENANT, SESSION, strategy, null, 'cl100k_base', false);
  const metadata = { tenantId: TENANT, sessionId: SESSION };
  const appendEvents = async (n: number) => {
    const data: EventData[] = cycler
      .take(n)
      .map(({ event, costs }) => ({ id: storeEventId(key, 0n, event.id), type: CONVERSATION_EVENT, data: { event, costs }, metadata }));
    await store.appendToStream(stream, data, { expectedRevision: 'any' });
  };
  const length = async () => Number((await store.streamRevision(stream)) ?? -1n) + 1;
  const perSize: Array<{ size: number; cold: number; warm: number; load: number; active: number; outcomes: Record<string, number> }> = [];
  try {
    for (const size of options.logSizes) {
      // Each timed pass adds 2 × (STEP + ~2 decision events): stop building that much short of the target.
      const target = size - options.passes * (2 * STEP + 4);
      let built = await length();
      let lastReport = nowMs();
      while (built < target) {
        await appendEvents(Math.min(BATCH, Math.max(1, target - built)));
        await handler.execute(command());
        built = await length();
        if (nowMs() - lastReport > 5000) {
          progress(`building the ${size.toLocaleString('en-US')}-event log: ${built.toLocaleString('en-US')}`);
          lastReport = nowMs();
        }
      }
      const cold: number[] = [];
      const warm: number[] = [];
      const loads: number[] = [];
      const outcomes: Record<string, number> = {};
      let active = 0;
      for (let p = 0; p < options.passes; p++) {
        await appendEvents(STEP);
        cache.invalidate(key);
        let t0 = nowMs();
        const answer = await handler.execute(command());
        cold.push(nowMs() - t0);
        outcomes[answer.outcome] = (outcomes[answer.outcome] ?? 0) + 1;
        active = answer.kept.length;
        t0 = nowMs();
        await loadSessionWindow(store, key);
        loads.push(nowMs() - t0);
        await appendEvents(STEP);
        await cache.load(key); // the append path has the state in memory already
        t0 = nowMs();
        const again = await handler.execute(command());
        warm.push(nowMs() - t0);
        outcomes[again.outcome] = (outcomes[again.outcome] ?? 0) + 1;
      }
      const entry = { size: await length(), cold: median(cold), warm: median(warm), load: median(loads), active, outcomes };
      perSize.push(entry);
      progress(
        `log ${entry.size.toLocaleString('en-US')} events: cold pass ${entry.cold.toFixed(2)} ms, warm ${entry.warm.toFixed(2)} ms, load ${entry.load.toFixed(2)} ms, active ${active}`,
      );
    }
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const base = perSize[0];
  const rows: FigureRow[] = [];
  for (const e of perSize) {
    const isBase = e === base;
    const isLast = e === perSize[perSize.length - 1];
    const ratio = e.cold / base.cold;
    rows.push({
      figure: 2,
      metric: `compaction pass, cold load, log ${e.size.toLocaleString('en-US')} events (ms)`,
      value: round(e.cold, 3),
      ...(isBase ? {} : { baseline: round(base.cold, 3), baselineName: `log ${base.size.toLocaleString('en-US')}`, ratio: round(ratio, 2) }),
      ...(isLast && !isBase ? { target: '≤ 1.5×', met: ratio <= 1.5 } : {}),
    });
  }
  for (const e of perSize) {
    if (e === base) continue;
    rows.push({
      figure: 2,
      metric: `  warm pass (cached state), log ${e.size.toLocaleString('en-US')} (ms)`,
      value: round(e.warm, 3),
      baseline: round(base.warm, 3),
      baselineName: `log ${base.size.toLocaleString('en-US')}`,
      ratio: round(e.warm / base.warm, 2),
    });
  }
  return {
    figure: 2,
    title: 'compaction pass against log size',
    rows,
    details: { perSize, passes: options.passes, strategy: { type: 'sliding-window', maxEvents: 200 } },
    notes: ['cold = the session state is not in memory (after a restart, or evicted from the 2,000-session cache); warm = the usual path'],
  };
}
